// TextLineReader: reads a text file line by line through a 1 MiB buffer, counting line
// numbers for error messages. A path ending in ".gz" is decompressed in process with
// zlib (gzread), concatenated gzip members included; a corrupt or truncated .gz is a
// one-line kCorrupt Status naming the file and the last line read before the damage.
// Move-only, not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

class TextLineReader {
 public:
  static Result<TextLineReader> Open(const std::string& path);
  TextLineReader(TextLineReader&& other) noexcept;
  TextLineReader& operator=(TextLineReader&& other) noexcept;
  ~TextLineReader();

  // Next line without its '\n' (and without a trailing '\r'); false at the end.
  // The view is valid until the next call.
  Result<bool> NextLine(std::string_view* line);
  // The next whole lines as one block, for parsing in parallel: at most `max_lines`
  // lines and about `max_bytes` bytes (more only when a single line is longer), ending
  // just after a '\n' or at the end of the input. The view (which keeps the '\n's and
  // any '\r's) is valid until the next call; *first_line gets the 1-based number of its
  // first line, *num_lines how many lines it holds (an unterminated last line counts).
  // An empty view means the end. May be mixed with NextLine.
  Result<std::string_view> NextLines(size_t max_bytes, int64_t max_lines, int64_t* first_line,
                                     int64_t* num_lines);
  int64_t line_number() const { return line_number_; }  // 1-based, of the last line
  const std::string& path() const { return path_; }
  bool compressed() const { return gzip_ != nullptr; }

 private:
  struct GzipStream;  // zlib's gzFile, kept out of this header

  TextLineReader(std::string path, UniqueFd fd, std::unique_ptr<GzipStream> gzip);
  // Reads the next bytes into buffer_[end_..): 0 at the end of the input.
  Result<size_t> ReadSome();
  Status Fill();

  std::string path_;
  UniqueFd fd_;                        // plain files
  std::unique_ptr<GzipStream> gzip_;   // .gz files (owns its descriptor)
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  int64_t line_number_ = 0;
  std::string carry_;  // a line longer than the buffer
};

bool HasGzipSuffix(const std::string& path);

}  // namespace seer
