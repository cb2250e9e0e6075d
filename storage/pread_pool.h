// PreadPool: a fixed set of worker threads that run index-parallel jobs; the pread
// fallback of DirectReader uses it to keep `num_threads` blocking preads in flight.
// Private to storage/.
//
// ParallelFor may be called from many threads at once: jobs queue up and workers share
// them. The caller blocks until every claimed index has finished; it does not run work
// itself, so at most num_threads bodies run at any moment. The destructor joins.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace seer::internal {

class PreadPool {
 public:
  explicit PreadPool(int num_threads);
  ~PreadPool();
  PreadPool(const PreadPool&) = delete;
  PreadPool& operator=(const PreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()); }

  // Runs body(i) for indices i in [0, count), each once, on the workers. When a body
  // returns false no further indices are claimed (those already running finish).
  // An exception thrown by a body is rethrown here after the job drained.
  void ParallelFor(size_t count, const std::function<bool(size_t)>& body);

 private:
  struct Job;
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> tickets_;
  bool shutting_down_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace seer::internal
