#include "storage/prep/text_reader.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "storage/base/file_io.h"

namespace seer {
namespace {
constexpr size_t kBufferBytes = 1 << 20;
constexpr unsigned kZlibBufferBytes = 1 << 17;  // zlib's input buffer (default 8 KiB)
}  // namespace

struct TextLineReader::GzipStream {
  gzFile file = nullptr;
  explicit GzipStream(gzFile f) : file(f) {}
  ~GzipStream() { gzclose_r(file); }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;
};

bool HasGzipSuffix(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

TextLineReader::TextLineReader(std::string path, UniqueFd fd, std::unique_ptr<GzipStream> gzip)
    : path_(std::move(path)), fd_(std::move(fd)), gzip_(std::move(gzip)), buffer_(kBufferBytes) {}

TextLineReader::TextLineReader(TextLineReader&&) noexcept = default;
TextLineReader& TextLineReader::operator=(TextLineReader&&) noexcept = default;
TextLineReader::~TextLineReader() = default;

Result<TextLineReader> TextLineReader::Open(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd file, UniqueFd::Open(path, O_RDONLY));
  if (!HasGzipSuffix(path)) return TextLineReader(path, std::move(file), nullptr);
  // An empty file has no gzip header: truncated, not an empty text.
  SEER_ASSIGN_OR_RETURN(int64_t size_bytes, FileSizeBytes(file.get(), path));
  if (size_bytes == 0) return Corrupt(path + ": empty file, not in gzip format");
  // gzdopen takes the descriptor over (gzclose_r closes it) only when it succeeds.
  gzFile gz = gzdopen(file.get(), "rb");
  if (gz == nullptr) return ErrnoStatus(ENOMEM, "open gzip stream", path);
  file.Release();
  auto stream = std::make_unique<GzipStream>(gz);
  gzbuffer(gz, kZlibBufferBytes);
  // zlib would pass a file that is not gzip through unchanged; a ".gz" must be gzip.
  if (gzdirect(gz) == 1) return Corrupt(path + ": not in gzip format");
  return TextLineReader(path, UniqueFd(), std::move(stream));
}

Result<size_t> TextLineReader::ReadSome() {
  char* dest = buffer_.data() + end_;
  const size_t room = buffer_.size() - end_;
  if (gzip_ == nullptr) {
    for (;;) {
      ssize_t n = ::read(fd_.get(), dest, room);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR && errno != EAGAIN) return ErrnoStatus(errno, "read", path_);
    }
  }
  const int n = gzread(gzip_->file, dest, static_cast<unsigned>(std::min<size_t>(room, INT_MAX)));
  if (n > 0) return static_cast<size_t>(n);
  // n == 0 is the end of the input; zlib reports a stream cut short (Z_BUF_ERROR) only
  // through gzerror, so check it at the end as well as on n < 0.
  int zlib_error = Z_OK;
  const char* what = gzerror(gzip_->file, &zlib_error);
  if (zlib_error == Z_OK) return size_t{0};
  if (zlib_error == Z_ERRNO) return ErrnoStatus(errno, "read", path_);
  return Corrupt(fmt::format("{}: corrupt or truncated .gz after line {} (zlib: {})", path_,
                             line_number_, what));
}

Status TextLineReader::Fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) return Status::Ok();
  SEER_ASSIGN_OR_RETURN(size_t n, ReadSome());
  if (n == 0) eof_ = true;
  end_ += n;
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

Result<std::string_view> TextLineReader::NextLines(size_t max_bytes, int64_t max_lines,
                                                   int64_t* first_line, int64_t* num_lines) {
  max_bytes = std::max<size_t>(max_bytes, 1);
  max_lines = std::max<int64_t>(max_lines, 1);
  if (buffer_.size() < max_bytes) buffer_.resize(max_bytes);
  for (;;) {
    const size_t have = end_ - begin_;
    const char* start = buffer_.data() + begin_;
    if (have >= max_bytes || eof_) {
      // Cut after the last whole line within max_bytes and max_lines.
      const size_t window = std::min(have, max_bytes);
      size_t cut = 0;
      // Usually the window holds fewer than max_lines lines: count them (a vectorised
      // loop) and cut after the last '\n'; else walk to the max_lines-th.
      int64_t lines = std::count(start, start + window, '\n');
      if (lines <= max_lines) {
        if (lines > 0) cut = static_cast<const char*>(::memrchr(start, '\n', window)) - start + 1;
      } else {
        lines = 0;
        while (lines < max_lines) {
          const void* nl = std::memchr(start + cut, '\n', window - cut);
          if (nl == nullptr) break;
          cut = static_cast<const char*>(nl) - start + 1;
          ++lines;
        }
      }
      if (cut == 0 && eof_ && have > 0 && have <= max_bytes) {  // unterminated last line
        cut = have;
        lines = 1;
      }
      if (cut > 0) {
        *first_line = line_number_ + 1;
        *num_lines = lines;
        line_number_ += lines;
        begin_ += cut;
        return std::string_view(start, cut);
      }
      if (have == 0 && eof_) {
        *first_line = line_number_ + 1;
        *num_lines = 0;
        return std::string_view();
      }
      // A single line longer than max_bytes: let the buffer grow until it holds it.
      max_bytes = std::max(max_bytes * 2, have + 1);
      if (buffer_.size() < max_bytes) buffer_.resize(max_bytes);
      if (begin_ == 0 && end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
    }
    SEER_RETURN_IF_ERROR(Fill());
  }
}

}  // namespace seer
