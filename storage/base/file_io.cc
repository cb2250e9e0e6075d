#include "storage/base/file_io.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "storage/base/unique_fd.h"

namespace seer {

Result<int64_t> FileSizeBytes(int fd, const std::string& path_for_errors) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, "fstat", path_for_errors);
  return static_cast<int64_t>(st.st_size);
}

Result<int64_t> FileSizeBytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", path);
  return static_cast<int64_t>(st.st_size);
}

namespace {
// Calls `transfer(done)` — one read or write of the rest, starting `done` bytes in — until
// `length_bytes` have moved, retrying EINTR/EAGAIN. Returns the bytes moved: fewer than
// `length_bytes` when a call returned 0 (end of file) or failed (*err = errno, else 0).
// EAGAIN is retried with a 1 ms pause after the first 100 in a row and given up after
// kMaxEagainInARow (~3 s): a file that keeps answering EAGAIN is an error, not a spin.
constexpr int kMaxEagainInARow = 3000;
template <typename Transfer>
int64_t TransferAll(int64_t length_bytes, Transfer transfer, int* err) {
  *err = 0;
  int64_t done = 0;
  int eagain_in_a_row = 0;
  while (done < length_bytes) {
    const ssize_t n = transfer(done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN && ++eagain_in_a_row < kMaxEagainInARow) {
        if (eagain_in_a_row > 100) ::usleep(1000);
        continue;
      }
      *err = errno;
      break;
    }
    eagain_in_a_row = 0;
    if (n == 0) break;
    done += n;
  }
  return done;
}
}  // namespace

Status PreadFull(int fd, void* dest, int64_t length_bytes, int64_t offset_bytes,
                 const std::string& path_for_errors) {
  char* out = static_cast<char*>(dest);
  int err;
  const int64_t done = TransferAll(length_bytes, [&](int64_t at) {
    return ::pread(fd, out + at, static_cast<size_t>(length_bytes - at),
                   static_cast<off_t>(offset_bytes + at));
  }, &err);
  if (err != 0) {
    return ErrnoStatus(err, "read", path_for_errors, offset_bytes + done, length_bytes - done);
  }
  if (done < length_bytes) {
    return Status(StatusCode::kUnexpectedEof,
                  "read " + path_for_errors + " at offset " + std::to_string(offset_bytes + done) +
                      " (+" + std::to_string(length_bytes - done) +
                      " bytes): unexpected end of file");
  }
  return Status::Ok();
}

Status PwriteFull(int fd, const void* src, int64_t length_bytes, int64_t offset_bytes,
                  const std::string& path_for_errors) {
  const char* in = static_cast<const char*>(src);
  int err;
  const int64_t done = TransferAll(length_bytes, [&](int64_t at) {
    return ::pwrite(fd, in + at, static_cast<size_t>(length_bytes - at),
                    static_cast<off_t>(offset_bytes + at));
  }, &err);
  if (done < length_bytes) {
    return ErrnoStatus(err != 0 ? err : EIO, "write", path_for_errors, offset_bytes + done,
                       length_bytes - done);
  }
  return Status::Ok();
}

Status WriteFull(int fd, const void* src, int64_t length_bytes,
                 const std::string& path_for_errors) {
  const char* in = static_cast<const char*>(src);
  int err;
  const int64_t done = TransferAll(length_bytes, [&](int64_t at) {
    return ::write(fd, in + at, static_cast<size_t>(length_bytes - at));
  }, &err);
  if (done < length_bytes) return ErrnoStatus(err != 0 ? err : EIO, "write", path_for_errors);
  return Status::Ok();
}

Status MakeDirectories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoStatus(ec.value(), "create directory", dir);
  if (!std::filesystem::is_directory(dir, ec)) {
    return InvalidArgument(dir + " exists and is not a directory");
  }
  return Status::Ok();
}

Result<std::string> ReadWholeFile(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  std::string data(static_cast<size_t>(size), '\0');
  SEER_RETURN_IF_ERROR(PreadFull(fd.get(), data.data(), size, 0, path));
  return data;
}

namespace {

// nftw has no user pointer: one walk at a time per thread keeps its state here.
thread_local int64_t tree_bytes = 0;
thread_local int remove_errno = 0;
thread_local std::string* remove_failed = nullptr;

int AddFileBytes(const char*, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_F && S_ISREG(st->st_mode)) tree_bytes += static_cast<int64_t>(st->st_size);
  return 0;
}

int RemoveEntry(const char* path, const struct stat*, int type, struct FTW*) {
  const int rc = (type == FTW_DP || type == FTW_D) ? ::rmdir(path) : ::unlink(path);
  if (rc != 0 && errno != ENOENT && remove_errno == 0) {
    remove_errno = errno;
    *remove_failed = path;
  }
  return 0;  // keep going: remove what can be removed
}

}  // namespace

Status RemoveTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? Status::Ok() : ErrnoStatus(errno, "stat", path);
  if (!S_ISDIR(st.st_mode)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "remove", path);
    return Status::Ok();
  }
  std::string failed;
  remove_errno = 0;
  remove_failed = &failed;
  const int rc = ::nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  const int walk_errno = errno;
  remove_failed = nullptr;
  if (remove_errno != 0) return ErrnoStatus(remove_errno, "remove", failed);
  if (rc != 0 && walk_errno != ENOENT) return ErrnoStatus(walk_errno, "remove", path);
  return Status::Ok();
}

int64_t TreeBytes(const std::string& path) {
  tree_bytes = 0;
  if (::nftw(path.c_str(), AddFileBytes, 16, FTW_PHYS) != 0) return tree_bytes;
  return tree_bytes;
}

}  // namespace seer
