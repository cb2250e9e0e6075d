#include "storage/base/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "storage/base/file_io.h"

namespace seer {
namespace {

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "?";
  return host;
}

std::string Holder(int fd) {
  char text[512] = {};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string holder = n > 0 ? std::string(text, static_cast<size_t>(n)) : std::string();
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  return holder.empty() ? "a process that has not said who it is yet" : holder;
}

// The locks this process holds, by lock path: a second Acquire from the same process
// shares the first (one process is one writer; flock would refuse it, since each open
// file description locks on its own).
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, std::weak_ptr<OutputLock::Held>>& Registry() {
  static std::map<std::string, std::weak_ptr<OutputLock::Held>> held;
  return held;
}

}  // namespace

OutputLock::Held::~Held() {
  // Removed while still locked, so a waiter never locks a file that is about to go.
  ::unlink(lock_path.c_str());
}

std::string OutputLockPath(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const size_t slash = trimmed.find_last_of('/');
  if (slash == std::string::npos) return "." + trimmed + ".seer-lock";
  return trimmed.substr(0, slash + 1) + "." + trimmed.substr(slash + 1) + ".seer-lock";
}

Result<OutputLock> OutputLock::Acquire(const std::string& path, const std::string& what) {
  const std::string lock_path = OutputLockPath(path);
  std::lock_guard<std::mutex> guard(RegistryMutex());
  if (auto mine = Registry()[lock_path].lock()) return OutputLock(std::move(mine));
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto opened = UniqueFd::Open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (!opened.ok()) {
      return Status(opened.status().code(),
                    fmt::format("{}: cannot create its lock file ({})", path, opened.status().message()),
                    opened.status().sys_errno());
    }
    UniqueFd fd = std::move(opened).value();
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) return ErrnoStatus(errno, "lock", lock_path);
      return Status(StatusCode::kAlreadyExists,
                    fmt::format("{} is in use by another Seer run ({}); wait for it to end or choose another path "
                                "(lock: {})",
                                path, Holder(fd.get()), lock_path));
    }
    // The holder before us may have removed the file after we opened it: then our lock
    // is on a file no one else will open. Retry on the path's current file.
    struct stat held, now;
    if (::fstat(fd.get(), &held) != 0) return ErrnoStatus(errno, "fstat", lock_path);
    if (::stat(lock_path.c_str(), &now) != 0 || now.st_ino != held.st_ino || now.st_dev != held.st_dev) continue;
    const std::string holder = fmt::format("pid {} on host {}: {}\n", ::getpid(), HostName(), what);
    if (::ftruncate(fd.get(), 0) != 0) return ErrnoStatus(errno, "truncate", lock_path);
    SEER_RETURN_IF_ERROR(PwriteFull(fd.get(), holder.data(), static_cast<int64_t>(holder.size()), 0, lock_path));
    auto entry = std::make_shared<Held>();
    entry->lock_path = lock_path;
    entry->fd = std::move(fd);
    Registry()[lock_path] = entry;
    return OutputLock(std::move(entry));
  }
  return Status(StatusCode::kIoError, "lock " + lock_path + ": the lock file keeps being replaced");
}

const std::string& OutputLock::lock_path() const {
  static const std::string none;
  return held_ ? held_->lock_path : none;
}

void OutputLock::Release() {
  if (!held_) return;
  std::lock_guard<std::mutex> guard(RegistryMutex());
  held_.reset();  // the last holder in this process unlinks and unlocks (Held's destructor)
}

}  // namespace seer
