// TextLineReader: reads a text file line by line through a 1 MiB buffer, counting line
// numbers for error messages. A path ending in ".gz" is decompressed by running
// `gzip -dc PATH` and reading its stdout through a pipe (zlib is not a dependency of
// Seer; gzip is on every Debian). A gzip failure (corrupt input, missing program) is
// reported when the stream ends. Move-only, not thread-safe; Close()/the destructor
// reap the gzip child.
#pragma once

#include <sys/types.h>

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
  int64_t line_number() const { return line_number_; }  // 1-based, of the last line
  const std::string& path() const { return path_; }
  bool compressed() const { return child_pid_ > 0 || compressed_; }

 private:
  TextLineReader(std::string path, UniqueFd fd, pid_t child_pid, bool compressed);
  Status Fill();
  Status ReapChild();

  std::string path_;
  UniqueFd fd_;
  pid_t child_pid_ = -1;
  bool compressed_ = false;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  int64_t line_number_ = 0;
  std::string carry_;  // a line longer than the buffer
};

bool HasGzipSuffix(const std::string& path);

}  // namespace seer
