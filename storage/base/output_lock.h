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
// Seer honours it. Move-only; the destructor releases.
#pragma once

#include <string>

#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

class OutputLock {
 public:
  // Locks the output at `path` (a file or directory, existing or not, whose folder exists)
  // for `what` (e.g. "seer train --checkpoint-dir"), shown to a second process.
  static Result<OutputLock> Acquire(const std::string& path, const std::string& what);

  OutputLock() = default;
  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&& other) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  ~OutputLock();

  bool held() const { return fd_.valid(); }
  const std::string& lock_path() const { return lock_path_; }
  void Release();

 private:
  OutputLock(std::string lock_path, UniqueFd fd) : lock_path_(std::move(lock_path)), fd_(std::move(fd)) {}
  std::string lock_path_;
  UniqueFd fd_;
};

// The lock file of an output path (see above). (Exposed for tests.)
std::string OutputLockPath(const std::string& path);

}  // namespace seer
