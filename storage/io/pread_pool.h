// PreadPool: a fixed set of worker threads that run index-parallel jobs; the pread
// fallback of DirectReader uses it to keep `num_threads` blocking preads in flight.
// Private to storage/.
//
// ParallelFor may be called from many threads at once: jobs queue up and workers share
// them. The caller blocks until every claimed index has finished; it does not run work
// itself, so at most num_threads bodies run at any moment. The constructor returns once
// every worker has started; the destructor joins.
//
// ParallelForWithCaller is the same, except that the calling thread claims indices too
// (the io_uring backend runs one ring shard on the caller and the rest on workers). It
// never waits for a worker that is busy with another job: once the caller has run out of
// indices it withdraws the tickets no worker has picked up yet, and waits only for the
// bodies already running.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
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
  // Workers waiting for work right now that no queued ticket will claim: a hint (it may
  // be stale by the time the caller acts on it).
  int IdleWorkers();

  // Runs body(i) for indices i in [0, count), each once, on the workers. When a body
  // returns false no further indices are claimed (those already running finish).
  // An exception thrown by a body is rethrown here after the job drained.
  void ParallelFor(size_t count, const std::function<bool(size_t)>& body);
  void ParallelForWithCaller(size_t count, const std::function<bool(size_t)>& body);

 private:
  struct Job;
  void WorkerLoop();
  // A job over [0, count) with `tickets` of it queued for the workers (and them woken).
  std::shared_ptr<Job> Submit(size_t count, const std::function<bool(size_t)>& body, int tickets);
  // Claims and runs indices of `job` until none are left or a body asked to stop;
  // returns the exception a body threw, if any.
  static std::exception_ptr RunIndices(Job* job);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> tickets_;
  bool shutting_down_ = false;
  int num_workers_ = 0;  // set before any worker starts
  int idle_ = 0;         // workers blocked in cv_.wait
  std::condition_variable started_cv_;
  std::vector<std::thread> workers_;
};

}  // namespace seer::internal
