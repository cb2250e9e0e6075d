#include "storage/prep/text_reader.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace seer {
namespace {
constexpr size_t kBufferBytes = 1 << 20;
}  // namespace

bool HasGzipSuffix(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

TextLineReader::TextLineReader(std::string path, UniqueFd fd, pid_t child_pid, bool compressed)
    : path_(std::move(path)), fd_(std::move(fd)), child_pid_(child_pid), compressed_(compressed),
      buffer_(kBufferBytes) {}

TextLineReader::TextLineReader(TextLineReader&& o) noexcept
    : path_(std::move(o.path_)), fd_(std::move(o.fd_)), child_pid_(std::exchange(o.child_pid_, -1)),
      compressed_(o.compressed_), buffer_(std::move(o.buffer_)), begin_(o.begin_), end_(o.end_),
      eof_(o.eof_), line_number_(o.line_number_), carry_(std::move(o.carry_)) {}

TextLineReader& TextLineReader::operator=(TextLineReader&& o) noexcept {
  if (this != &o) {
    this->~TextLineReader();
    new (this) TextLineReader(std::move(o));
  }
  return *this;
}

TextLineReader::~TextLineReader() {
  if (child_pid_ > 0) {
    fd_.Reset();  // gzip gets SIGPIPE/EPIPE if still writing
    ::kill(child_pid_, SIGTERM);
    int status;
    while (::waitpid(child_pid_, &status, 0) < 0 && errno == EINTR) {
    }
    child_pid_ = -1;
  }
}

Result<TextLineReader> TextLineReader::Open(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd file, UniqueFd::Open(path, O_RDONLY));
  if (!HasGzipSuffix(path)) return TextLineReader(path, std::move(file), -1, false);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe for gzip -dc", path);
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, file.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  // gzip's own complaint would break the one-line error; ReapChild reports the failure.
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  char arg0[] = "gzip", arg1[] = "-dc";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, "gzip", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return ErrnoStatus(rc, "spawn gzip -dc to decompress", path);
  return TextLineReader(path, std::move(read_end), pid, true);
}

Status TextLineReader::ReapChild() {
  if (child_pid_ <= 0) return Status::Ok();
  int status = 0;
  while (::waitpid(child_pid_, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoStatus(errno, "waitpid gzip", path_);
  }
  child_pid_ = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Corrupt(path_ + ": gzip -dc failed (" +
                   (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                      : std::string("killed by a signal")) +
                   ") after line " + std::to_string(line_number_) + ": corrupt or truncated .gz");
  }
  return Status::Ok();
}

Status TextLineReader::Fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  while (end_ < buffer_.size()) {
    ssize_t n = ::read(fd_.get(), buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ErrnoStatus(errno, "read", path_);
    }
    if (n == 0) {
      eof_ = true;
      return ReapChild();
    }
    end_ += static_cast<size_t>(n);
    break;  // one read per fill keeps pipes responsive
  }
  return Status::Ok();
}

Result<bool> TextLineReader::NextLine(std::string_view* line) {
  carry_.clear();
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl != nullptr) {
      size_t len = static_cast<const char*>(nl) - start;
      std::string_view piece(start, len);
      begin_ += len + 1;
      ++line_number_;
      if (!carry_.empty()) {
        carry_.append(piece);
        piece = carry_;
      }
      if (!piece.empty() && piece.back() == '\r') piece.remove_suffix(1);
      *line = piece;
      return true;
    }
    if (eof_) {
      if (begin_ == end_ && carry_.empty()) return false;
      carry_.append(start, end_ - begin_);
      begin_ = end_;
      ++line_number_;
      std::string_view piece = carry_;
      if (!piece.empty() && piece.back() == '\r') piece.remove_suffix(1);
      *line = piece;
      return true;
    }
    if (begin_ == 0 && end_ == buffer_.size()) {  // line longer than the buffer
      carry_.append(buffer_.data(), end_);
      begin_ = end_ = 0;
    }
    SEER_RETURN_IF_ERROR(Fill());
  }
}

}  // namespace seer
