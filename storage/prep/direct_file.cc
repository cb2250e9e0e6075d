#include "storage/prep/direct_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

namespace seer {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kDirectAlign == 0; }

// Clears O_DIRECT on an open descriptor (for file systems that accept it at open and
// refuse the first transfer).
Status ClearDirect(int fd, const std::string& path) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_DIRECT) < 0) return ErrnoStatus(errno, "fcntl", path);
  return Status::Ok();
}

}  // namespace

Result<DirectAppendFile> DirectAppendFile::Create(const std::string& path, bool try_direct) {
  if (try_direct) {
    auto direct = UniqueFd::Open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    if (direct.ok()) return DirectAppendFile(path, std::move(direct).value(), true);
  }
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
  return DirectAppendFile(path, std::move(fd), false);
}

Status DirectAppendFile::FallBackToBuffered() {
  SEER_RETURN_IF_ERROR(ClearDirect(fd_.get(), path_));
  direct_ = false;
  return Status::Ok();
}

Status DirectAppendFile::Write(const char* data, int64_t length) {
  while (length > 0) {
    const ssize_t n = ::pwrite(fd_.get(), data, static_cast<size_t>(length), size_);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EINVAL && direct_) {  // O_DIRECT accepted at open, refused here
        SEER_RETURN_IF_ERROR(FallBackToBuffered());
        continue;
      }
      return ErrnoStatus(errno, "write", path_, size_, length);
    }
    data += n;
    length -= n;
    size_ += n;
  }
  return Status::Ok();
}

Status DirectAppendFile::AppendAligned(const char* data, int64_t length) {
  if (direct_ && (!Aligned(data) || length % kDirectAlign != 0 || size_ % kDirectAlign != 0)) {
    return InvalidArgument(path_ + ": unaligned O_DIRECT append of " + std::to_string(length) + " bytes at offset " +
                           std::to_string(size_));
  }
  return Write(data, length);
}

Status DirectAppendFile::Finish(char* data, int64_t length) {
  if (!direct_ || length == 0) {
    SEER_RETURN_IF_ERROR(Write(data, length));
    return fd_.Close(path_);
  }
  SEER_RETURN_IF_ERROR(AppendAligned(data, 0));  // checks the alignment of the end so far
  const int64_t exact = size_ + length;
  const int64_t padded = AlignUp(length);
  std::memset(data + length, 0, static_cast<size_t>(padded - length));
  SEER_RETURN_IF_ERROR(Write(data, padded));
  if (::ftruncate(fd_.get(), exact) != 0) return ErrnoStatus(errno, "ftruncate", path_, exact);
  size_ = exact;
  return fd_.Close(path_);
}

Result<DirectReadFile> DirectReadFile::Open(const std::string& path, bool try_direct) {
  bool direct = try_direct;
  auto opened = try_direct ? UniqueFd::Open(path, O_RDONLY | O_DIRECT) : UniqueFd::Open(path, O_RDONLY);
  if (!opened.ok() && try_direct) {
    direct = false;
    opened = UniqueFd::Open(path, O_RDONLY);
  }
  SEER_RETURN_IF_ERROR(opened.status());
  UniqueFd fd = std::move(opened).value();
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "fstat", path);
  return DirectReadFile(path, std::move(fd), direct, static_cast<int64_t>(st.st_size));
}

Status DirectReadFile::FallBackToBuffered() {
  SEER_RETURN_IF_ERROR(ClearDirect(fd_.get(), path_));
  direct_ = false;
  return Status::Ok();
}

Status DirectReadFile::Read(char* dest, int64_t offset, int64_t length) {
  if (offset < 0 || length < 0 || offset + length > size_) {
    return Status(StatusCode::kUnexpectedEof, path_ + ": read of " + std::to_string(length) + " bytes at offset " +
                                                  std::to_string(offset) + " beyond its " + std::to_string(size_) +
                                                  " bytes");
  }
  if (direct_ && (!Aligned(dest) || offset % kDirectAlign != 0)) {
    return InvalidArgument(path_ + ": unaligned O_DIRECT read at offset " + std::to_string(offset));
  }
  int64_t done = 0;
  while (done < length) {
    // Direct reads ask for whole blocks (the file's last one ends early: a short read).
    const int64_t want = direct_ ? AlignUp(length - done) : length - done;
    const ssize_t n = ::pread(fd_.get(), dest + done, static_cast<size_t>(want), offset + done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EINVAL && direct_) {
        SEER_RETURN_IF_ERROR(FallBackToBuffered());
        continue;
      }
      return ErrnoStatus(errno, "read", path_, offset + done, length - done);
    }
    if (n == 0) {
      return Status(StatusCode::kUnexpectedEof, path_ + ": ended at byte offset " + std::to_string(offset + done) +
                                                    ", expected " + std::to_string(offset + length));
    }
    done += n;
    // A short direct read inside the file leaves `done` unaligned: finish buffered.
    if (direct_ && done < length && done % kDirectAlign != 0) SEER_RETURN_IF_ERROR(FallBackToBuffered());
  }
  return Status::Ok();
}

}  // namespace seer
