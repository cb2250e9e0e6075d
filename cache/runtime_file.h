// RuntimeFile: one file the Belady planner writes into a runtime directory that its caller
// names (seer train's runtime directory, a test's temporary directory) and removes when
// done: the changeset spill (cache/changeset_store.h) and the next-use sort's runs and
// next-use segments (cache/next_use_sort_internal.h). This is the one place their names
// are made:
//
//   DIR/seer-trace-PID-STEM-XXXXXX        (XXXXXX: mkstemp)
//
// carrying the writer's pid like the trace files beside them (executor's
// seer-trace-PID-*.sbt). The directory must exist and is the caller's: what removes the
// files after a crash is the directory's owner — seer train's runtime directory is a
// ScratchDir (storage/base/scratch_dir.h), which the start-up sweep removes whole once
// its owner is gone.
//
// Ownership: the RuntimeFile owns the file and its descriptor; the destructor (and a move
// assignment over it) unlinks the file, errors ignored. Appends go at the end (the offset
// is the bytes appended so far); Read is a pread at any offset written before.
// Move-only; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

class RuntimeFile {
 public:
  // Creates DIR/seer-trace-PID-STEM-XXXXXX. `operation` names the failure in the errno
  // Status ("create changeset spill file"), which also names the pattern.
  static Result<RuntimeFile> Create(const std::string& dir, std::string_view stem,
                                    std::string_view operation);

  RuntimeFile() = default;  // no file: valid() is false
  ~RuntimeFile();
  // Move-only (the moves leave `other` without a file; copies are implicitly deleted).
  RuntimeFile(RuntimeFile&& other) noexcept;
  RuntimeFile& operator=(RuntimeFile&& other) noexcept;

  // Appends `bytes` at the end; returns the offset written at. Errors name the file.
  Result<int64_t> Append(const void* data, int64_t bytes);
  // Reads exactly `bytes` at `offset`. Errors name the file and offset.
  Status Read(void* dest, int64_t bytes, int64_t offset) const;

  bool valid() const { return fd_.valid(); }
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }  // "" before Create

 private:
  RuntimeFile(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  void Remove();

  UniqueFd fd_;
  std::string path_;
  int64_t size_ = 0;
};

// "seer-trace-PID-STEM-": the start of the name of every RuntimeFile of this process
// made with `stem`.
std::string RuntimeFilePrefix(std::string_view stem);

}  // namespace seer
