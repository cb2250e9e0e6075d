// ScratchDir: the one owner of Seer's temporary directories (prep's sort runs, spills and
// joins, the CSC builder's partitions, seer train's runtime directory with its trace and
// changeset files). Every one is named
//
//   PARENT/.seer-PURPOSE-PID-XXXXXX      (PURPOSE: lowercase letters and '-'; XXXXXX: mkdtemp)
//
// and holds an owner mark, the file `.seer-owner` (the writer's pid and host), on which
// the owner keeps an exclusive flock(2) for the ScratchDir's whole life. The start-up
// sweep (stale_temp.h) removes such a directory only when it can take that lock itself:
// the kernel drops a dead process's locks, so the test holds across PID namespaces and
// containers sharing the directory and never mistakes a reused pid for the owner. A
// directory with that name but no mark is not Seer's and is never removed.
//
// The destructor removes the directory and everything in it (errors ignored); Remove()
// does the same and reports errors. Files inside are the caller's to name (NewFile
// hands out unique names). Move-only; not thread-safe except NewFile.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

inline constexpr char kScratchOwnerMark[] = ".seer-owner";

class ScratchDir {
 public:
  // Creates PARENT/.seer-PURPOSE-PID-XXXXXX ("" parent = the current directory) with its
  // locked owner mark. kInvalidArgument for a purpose outside [a-z-]; errno errors name
  // the path.
  static Result<ScratchDir> Create(const std::string& parent, std::string_view purpose);

  ScratchDir() = default;
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&& other) noexcept;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::string& path() const { return path_; }
  bool valid() const { return !path_.empty(); }
  // path()/name.
  std::string File(std::string_view name) const;
  // path()/STEM-N with N unique within this directory (thread-safe; nothing is created).
  std::string NewFile(std::string_view stem);
  // Removes the directory tree; afterwards valid() is false.
  Status Remove();

 private:
  ScratchDir(std::string path, UniqueFd mark) : path_(std::move(path)), mark_(std::move(mark)) {}
  std::string path_;
  UniqueFd mark_;  // holds the flock
  std::unique_ptr<std::atomic<int64_t>> next_file_ = std::make_unique<std::atomic<int64_t>>(0);
};

// The pid in a scratch directory name ".seer-PURPOSE-PID-XXXXXX", else -1.
int64_t ScratchDirPid(std::string_view name);

// For the sweep: true when `dir` is a scratch directory (it has an owner mark) whose
// owner is gone (the mark's lock could be taken). A directory without the mark, or with a
// live owner, gives false.
bool ScratchDirIsAbandoned(const std::string& dir);

}  // namespace seer
