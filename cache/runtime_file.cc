#include "cache/runtime_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "storage/base/file_io.h"

namespace seer {

std::string RuntimeFilePrefix(std::string_view stem) {
  return fmt::format("seer-trace-{}-{}-", ::getpid(), stem);
}

Result<RuntimeFile> RuntimeFile::Create(const std::string& dir, std::string_view stem,
                                        std::string_view operation) {
  const std::string pattern = fmt::format("{}/{}XXXXXX", dir, RuntimeFilePrefix(stem));
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return ErrnoStatus(errno, std::string(operation), pattern);
  return RuntimeFile(UniqueFd(fd), std::string(name.data()));
}

RuntimeFile::RuntimeFile(RuntimeFile&& other) noexcept
    : fd_(std::move(other.fd_)),
      path_(std::exchange(other.path_, std::string())),
      size_(std::exchange(other.size_, 0)) {}

RuntimeFile& RuntimeFile::operator=(RuntimeFile&& other) noexcept {
  if (this != &other) {
    Remove();
    fd_ = std::move(other.fd_);
    path_ = std::exchange(other.path_, std::string());
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

RuntimeFile::~RuntimeFile() { Remove(); }

void RuntimeFile::Remove() {
  if (!path_.empty()) ::unlink(path_.c_str());
  path_.clear();
  fd_.Reset();
  size_ = 0;
}

Result<int64_t> RuntimeFile::Append(const void* data, int64_t bytes) {
  const int64_t at = size_;
  SEER_RETURN_IF_ERROR(PwriteFull(fd_.get(), data, bytes, at, path_));
  size_ += bytes;
  return at;
}

Status RuntimeFile::Read(void* dest, int64_t bytes, int64_t offset) const {
  return PreadFull(fd_.get(), dest, bytes, offset, path_);
}

}  // namespace seer
