#include "storage/base/file_io.h"

#include <fcntl.h>
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

Status PreadFull(int fd, void* dest, int64_t length_bytes, int64_t offset_bytes,
                 const std::string& path_for_errors) {
  char* out = static_cast<char*>(dest);
  int64_t done = 0;
  while (done < length_bytes) {
    ssize_t n = ::pread(fd, out + done, static_cast<size_t>(length_bytes - done),
                        static_cast<off_t>(offset_bytes + done));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ErrnoStatus(errno, "read", path_for_errors, offset_bytes + done,
                         length_bytes - done);
    }
    if (n == 0) {
      return Status(StatusCode::kUnexpectedEof,
                    "read " + path_for_errors + " at offset " +
                        std::to_string(offset_bytes + done) + " (+" +
                        std::to_string(length_bytes - done) +
                        " bytes): unexpected end of file");
    }
    done += n;
  }
  return Status::Ok();
}

Status PwriteFull(int fd, const void* src, int64_t length_bytes, int64_t offset_bytes,
                  const std::string& path_for_errors) {
  const char* in = static_cast<const char*>(src);
  int64_t done = 0;
  while (done < length_bytes) {
    ssize_t n = ::pwrite(fd, in + done, static_cast<size_t>(length_bytes - done),
                         static_cast<off_t>(offset_bytes + done));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ErrnoStatus(errno, "write", path_for_errors, offset_bytes + done,
                         length_bytes - done);
    }
    done += n;
  }
  return Status::Ok();
}

Status WriteFull(int fd, const void* src, int64_t length_bytes,
                 const std::string& path_for_errors) {
  const char* in = static_cast<const char*>(src);
  int64_t done = 0;
  while (done < length_bytes) {
    ssize_t n = ::write(fd, in + done, static_cast<size_t>(length_bytes - done));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ErrnoStatus(errno, "write", path_for_errors);
    }
    done += n;
  }
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

}  // namespace seer
