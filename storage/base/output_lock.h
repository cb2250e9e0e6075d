// OutputLock: "one Seer process writes this output at a time", as an advisory lock
// (flock(2)) on a small lock file beside the output, PARENT/.NAME.seer-lock, for a file
// (a metrics file) as for a directory (a checkpoint directory, the dataset prep or gen
// writes): beside, not inside, so the lock is the same before and after the directory
// exists, and renaming a staged directory into place does not move it.
// The lock file holds the holder's description ("pid P on host H: WHAT"); a second
// process asking for the same output gets kAlreadyExists naming the output and that
// holder, at once (no waiting). The kernel drops the lock when its process dies, so a
// crashed run never blocks the next one; the file is removed on release (a waiter that
// opened the removed file sees it is gone and retries on the new one). Advisory: only
// Seer honours it. Copies share the lock; the last one releases it.
#pragma once

#include <memory>
#include <string>

#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

class OutputLock {
 public:
  // Locks the output at `path` (a file or directory, existing or not, whose folder exists)
  // for `what` (e.g. "seer train --checkpoint-dir"), shown to a second process. A second
  // Acquire of the same output by this process shares the lock (one process, one writer).
  static Result<OutputLock> Acquire(const std::string& path, const std::string& what);

  OutputLock() = default;
  bool held() const { return held_ != nullptr; }
  const std::string& lock_path() const;
  // Drops this holder; the lock goes with the process's last holder.
  void Release();

  // The process's lock on one output (shared by its holders).
  struct Held {
    std::string lock_path;
    UniqueFd fd;
    ~Held();
  };

 private:
  explicit OutputLock(std::shared_ptr<Held> held) : held_(std::move(held)) {}
  std::shared_ptr<Held> held_;
};

// The lock file of an output path (see above). (Exposed for tests.)
std::string OutputLockPath(const std::string& path);

}  // namespace seer
