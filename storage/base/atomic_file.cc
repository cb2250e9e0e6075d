#include "storage/base/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "storage/base/file_io.h"

namespace seer {
namespace {
constexpr size_t kBufferBytes = 1 << 20;

std::string DirName(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string TempName(const std::string& final_path) {
  static std::atomic<uint64_t> counter{0};
  return final_path + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}
}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string final_path, std::string temp_path, UniqueFd fd)
    : final_path_(std::move(final_path)), temp_path_(std::move(temp_path)), fd_(std::move(fd)) {
  buffer_.reserve(kBufferBytes);
}

Result<OutputTarget> ResolveOutputPath(const std::string& path) {
  if (path.empty()) return Status(StatusCode::kInvalidArgument, "empty output path");
  OutputTarget target;
  target.path = path;
  struct stat st;
  // A link is followed, never replaced: the file it names (existing or not) is the output.
  for (int hops = 0; ::lstat(target.path.c_str(), &st) == 0 && S_ISLNK(st.st_mode); ++hops) {
    if (hops == 40) return Status(StatusCode::kInvalidArgument, path + ": too many levels of symbolic links");
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(target.path.c_str(), link.data(), link.size());
    if (n < 0) return ErrnoStatus(errno, "readlink", target.path);
    link.resize(static_cast<size_t>(n));
    target.path = link.front() == '/' ? link : DirName(target.path) + "/" + link;
  }
  if (::stat(target.path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status(StatusCode::kInvalidArgument, path + " is a directory, not a file");
    // A device, FIFO or socket is written through (e.g. /dev/null, a pipe), never replaced.
    target.write_through = !S_ISREG(st.st_mode);
    if (target.write_through) return target;
  } else if (errno != ENOENT) {
    return ErrnoStatus(errno, "stat", path);
  }
  const std::string dir = DirName(target.path);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status(StatusCode::kNotFound, "cannot write " + path + ": the folder " + dir + " does not exist");
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return Status(StatusCode::kIoError, "cannot write " + path + ": the folder " + dir + " is not writable", errno);
  }
  return target;
}

Status CheckOutputPath(const std::string& path) { return ResolveOutputPath(path).status(); }

Result<AtomicFileWriter> AtomicFileWriter::Create(const std::string& final_path) {
  SEER_ASSIGN_OR_RETURN(OutputTarget target, ResolveOutputPath(final_path));
  if (target.write_through) {
    // O_NONBLOCK: a FIFO without a reader is an error now (ENXIO), not a wait forever.
    SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(target.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) < 0) return ErrnoStatus(errno, "fcntl", final_path);
    return AtomicFileWriter(target.path, std::string(), std::move(fd));
  }
  std::string temp = TempName(target.path);
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  // Held until the descriptor closes: the start-up sweep (stale_temp.h) leaves a locked
  // temporary alone even when its pid looks dead (another PID namespace or container).
  (void)::flock(fd.get(), LOCK_EX | LOCK_NB);
  return AtomicFileWriter(target.path, std::move(temp), std::move(fd));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!closed_ && !temp_path_.empty()) Abandon();
}

void AtomicFileWriter::Abandon() {
  if (closed_) return;
  direct_fd_.Reset();
  fd_.Reset();
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  closed_ = true;
}

Status AtomicFileWriter::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status st = WriteFull(fd_.get(), buffer_.data(), static_cast<int64_t>(buffer_.size()),
                        temp_path_);
  buffer_.clear();
  return st;
}

Status AtomicFileWriter::Append(const void* data, int64_t length_bytes) {
  if (closed_) throw std::logic_error("AtomicFileWriter::Append after Close");
  const char* in = static_cast<const char*>(data);
  bytes_written_ += length_bytes;
  hash_.Update(in, static_cast<size_t>(length_bytes));
  if (static_cast<size_t>(length_bytes) >= kBufferBytes) {
    SEER_RETURN_IF_ERROR(Flush());
    return WriteFull(fd_.get(), in, length_bytes, temp_path_);
  }
  if (buffer_.size() + static_cast<size_t>(length_bytes) > kBufferBytes) {
    SEER_RETURN_IF_ERROR(Flush());
  }
  buffer_.insert(buffer_.end(), in, in + length_bytes);
  return Status::Ok();
}

bool AtomicFileWriter::EnableDirect() {
  if (closed_ || direct() || temp_path_.empty()) return direct();
  auto fd = UniqueFd::Open(temp_path_, O_WRONLY | O_DIRECT);
  if (!fd.ok()) return false;  // EINVAL where O_DIRECT is not supported: stay buffered
  direct_fd_ = std::move(fd).value();
  return true;
}

Status AtomicFileWriter::AppendDirect(const void* data, int64_t length_bytes) {
  const bool aligned = direct() && length_bytes > 0 &&
                       reinterpret_cast<uintptr_t>(data) % kDirectAlign == 0 &&
                       length_bytes % kDirectAlign == 0 && bytes_written_ % kDirectAlign == 0;
  if (!aligned) return Append(data, length_bytes);
  if (closed_) throw std::logic_error("AtomicFileWriter::AppendDirect after Close");
  SEER_RETURN_IF_ERROR(Flush());  // buffered bytes before these (they end aligned)
  hash_.Update(static_cast<const char*>(data), static_cast<size_t>(length_bytes));
  SEER_RETURN_IF_ERROR(PwriteFull(direct_fd_.get(), data, length_bytes, bytes_written_, temp_path_));
  bytes_written_ += length_bytes;
  // The buffered descriptor appends at its own position: move it past these bytes.
  if (::lseek(fd_.get(), bytes_written_, SEEK_SET) < 0) return ErrnoStatus(errno, "lseek", temp_path_);
  return Status::Ok();
}

Status AtomicFileWriter::PadTo(int64_t alignment) {
  int64_t rem = bytes_written_ % alignment;
  if (rem == 0) return Status::Ok();
  std::vector<char> zeros(static_cast<size_t>(alignment - rem), 0);
  return Append(zeros.data(), static_cast<int64_t>(zeros.size()));
}

Status AtomicFileWriter::Close() {
  if (closed_) throw std::logic_error("AtomicFileWriter::Close twice");
  Status st = Flush();
  if (temp_path_.empty()) {  // written through (a device or FIFO): nothing to rename
    if (st.ok()) st = fd_.Close(final_path_);
    closed_ = true;
    return st;
  }
  // fsync through either descriptor flushes the file's data, the O_DIRECT writes included.
  if (st.ok() && direct()) st = direct_fd_.Close(temp_path_);
  if (st.ok() && ::fsync(fd_.get()) != 0) st = ErrnoStatus(errno, "fsync", temp_path_);
  if (st.ok()) st = fd_.Close(temp_path_);
  if (st.ok() && ::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    st = ErrnoStatus(errno, "rename to " + final_path_, temp_path_);
  }
  if (!st.ok()) {
    Abandon();
    return st;
  }
  closed_ = true;
  return SyncDirectory(DirName(final_path_));
}

Status WriteFileAtomically(const std::string& path, const std::string& data) {
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  SEER_RETURN_IF_ERROR(writer.Append(data.data(), static_cast<int64_t>(data.size())));
  return writer.Close();
}

Status SyncDirectory(const std::string& dir) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(dir, O_RDONLY | O_DIRECTORY));
  if (::fsync(fd.get()) != 0 && errno != EINVAL) return ErrnoStatus(errno, "fsync", dir);
  return Status::Ok();
}

Status RemoveManifestBeforeRewrite(const std::string& manifest_path, bool force,
                                   const std::string& what) {
  if (::access(manifest_path.c_str(), F_OK) != 0) return Status::Ok();
  if (!force) {
    return Status(StatusCode::kAlreadyExists,
                  manifest_path + " exists: refusing to overwrite " + what + " (use --force)");
  }
  if (::unlink(manifest_path.c_str()) != 0) return ErrnoStatus(errno, "remove", manifest_path);
  const size_t slash = manifest_path.find_last_of('/');
  return SyncDirectory(slash == std::string::npos ? "." : manifest_path.substr(0, slash));
}

}  // namespace seer
