// UniqueFd: move-only owner of a file descriptor; closes it in the destructor
// (errors from close() there are ignored — call Close() to see them).
#pragma once

#include <string>
#include <utility>

#include "storage/base/status.h"

namespace seer {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  // open(2) wrapper: the Status names the path.
  static Result<UniqueFd> Open(const std::string& path, int flags, int mode = 0644);

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset();
  Status Close(const std::string& path_for_errors);

 private:
  int fd_ = -1;
};

}  // namespace seer
