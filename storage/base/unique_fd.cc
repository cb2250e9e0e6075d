#include "storage/base/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace seer {

Result<UniqueFd> UniqueFd::Open(const std::string& path, int flags, int mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  return UniqueFd(fd);
}

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status UniqueFd::Close(const std::string& path_for_errors) {
  if (fd_ < 0) return Status::Ok();
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return ErrnoStatus(errno, "close", path_for_errors);
  return Status::Ok();
}

}  // namespace seer
