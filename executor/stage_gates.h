// The small synchronisation pieces the pipeline's stage threads share (executor/
// superbatch_pipeline.h), besides BoundedQueue (executor/bounded_queue.h):
//
//   ErrorSlot       the first error any stage reports; later ones are dropped.
//   ExclusionToken  a token one thread takes and another may hand back (a std::mutex
//                   must be unlocked by its owner): without --overlap the inspector holds
//                   it while sampling, the gather thread takes it before gathering a
//                   superbatch and the executor returns it after training that
//                   superbatch's last batch.
//   EpochGate       the gather thread may gather epoch e once the executor has finished
//                   every epoch before it (evaluation reads the cache it mutates).
//   WaitBoard       who is waiting for what: every blocking wait of a stage thread is
//                   noted on it (WaitNote), so the executor, waiting for a batch, can
//                   tell a deadlock (every stage thread waiting or finished, nothing
//                   moving) from slow work, and name what each thread waits for.
//
// The two gates block in Acquire()/WaitFor() until they can proceed or are closed; a
// closed gate never blocks again and its waits return false. Everything here is
// thread-safe.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "storage/base/status.h"

namespace seer {

class ErrorSlot {
 public:
  void Set(Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok() && !status.ok()) status_ = std::move(status);
  }
  Status Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  mutable std::mutex mu_;
  Status status_;
};

// A mutex, a condition variable and a closed flag: what the two gates share. Close()
// wakes every waiter.
class ClosableGate {
 public:
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

 protected:
  // Waits until `ready` or closed; false when closed. Runs `then` under the lock.
  template <typename Ready, typename Then>
  bool WaitThen(Ready ready, Then then) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return closed_ || ready(); });
    if (closed_) return false;
    then();
    return true;
  }
  template <typename Change>
  void Notify(Change change) {
    std::lock_guard<std::mutex> lock(mu_);
    change();
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
};

class ExclusionToken : public ClosableGate {
 public:
  bool Acquire() {  // false when closed
    return WaitThen([&] { return !held_; }, [&] { held_ = true; });
  }
  void Release() {
    Notify([&] { held_ = false; });
  }

 private:
  bool held_ = false;
};

class EpochGate : public ClosableGate {
 public:
  explicit EpochGate(int64_t open_through) : open_through_(open_through) {}
  bool WaitFor(int64_t epoch) {  // false when closed
    return WaitThen([&] { return epoch <= open_through_; }, [] {});
  }
  void Open(int64_t epoch) {
    Notify([&] { open_through_ = std::max(open_through_, epoch); });
  }

 private:
  int64_t open_through_;
};

class WaitBoard {
 public:
  explicit WaitBoard(std::vector<std::string> threads)
      : names_(std::move(threads)), waiting_(names_.size()), state_(names_.size(), kWorking) {}

  // Thread `slot` waits for `what` until the note is destroyed.
  class Note {
   public:
    Note(WaitBoard* board, size_t slot, std::string what) : board_(board), slot_(slot) {
      board_->Set(slot_, kWaiting, std::move(what));
    }
    ~Note() { board_->Set(slot_, kWorking, ""); }
    Note(const Note&) = delete;
    Note& operator=(const Note&) = delete;

   private:
    WaitBoard* board_;
    size_t slot_;
  };
  void Finished(size_t slot) { Set(slot, kFinished, ""); }
  // Something outside the threads changed (the executor handed back a buffer or a token,
  // or ended an epoch): a waiting thread may be about to wake.
  void Touch() {
    std::lock_guard<std::mutex> lock(mu_);
    ++changes_;
  }

  // True when no thread is working (each waits or has finished); *what lists the waits
  // ("gather thread waits for X; planner thread ...") and *changes counts every state
  // change so far, so a caller can tell a standing state from a passing one.
  bool NoneWorking(std::string* what, int64_t* changes) const {
    std::lock_guard<std::mutex> lock(mu_);
    *changes = changes_;
    what->clear();
    for (size_t i = 0; i < names_.size(); ++i) {
      if (state_[i] == kWorking) return false;
      if (state_[i] == kFinished) continue;
      if (!what->empty()) *what += "; ";
      *what += names_[i] + " thread waits for " + waiting_[i];
    }
    return true;
  }

 private:
  enum State { kWorking, kWaiting, kFinished };
  void Set(size_t slot, State state, std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_[slot] == kFinished) return;
    state_[slot] = state;
    waiting_[slot] = std::move(what);
    ++changes_;
  }
  const std::vector<std::string> names_;
  mutable std::mutex mu_;
  std::vector<std::string> waiting_;
  std::vector<State> state_;
  int64_t changes_ = 0;
};

}  // namespace seer
