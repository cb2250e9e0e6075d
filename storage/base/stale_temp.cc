#include "storage/base/stale_temp.h"
#include "storage/base/parse_number.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/scratch_dir.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

constexpr char kStagingPrefix[] = ".seer-prep-";  // DatasetWriter's --force staging (dataset.h)

bool AllDigits(const std::string& s, size_t begin, size_t end) {
  if (begin >= end || end - begin > 10) return false;
  for (size_t i = begin; i < end; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

int64_t ParsePid(const std::string& s, size_t begin, size_t end) {
  if (!AllDigits(s, begin, end)) return -1;
  return ParseNumber<int64_t>(std::string_view(s).substr(begin, end - begin)).value_or(-1);
}

// "PREFIX<pid>-..." -> pid, else -1.
int64_t PidAfterPrefix(const std::string& name, const std::string& prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  const size_t dash = name.find('-', prefix.size());
  if (dash == std::string::npos) return -1;
  return ParsePid(name, prefix.size(), dash);
}

}  // namespace

int64_t StaleTemporaryPid(const std::string& name) {
  // NAME.tmp.PID.N
  const size_t tmp = name.rfind(".tmp.");
  if (tmp != std::string::npos && tmp > 0) {
    const size_t pid_begin = tmp + 5;
    const size_t dot = name.find('.', pid_begin);
    if (dot != std::string::npos && AllDigits(name, dot + 1, name.size())) {
      const int64_t pid = ParsePid(name, pid_begin, dot);
      if (pid > 0) return pid;
    }
  }
  const int64_t staging = PidAfterPrefix(name, kStagingPrefix);
  if (staging > 0) return staging;
  return ScratchDirPid(name);
}

static bool FileIsLocked(const std::string& path) {
  auto fd = UniqueFd::Open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (!fd.ok()) return true;  // cannot tell: keep
  return ::flock(fd->get(), LOCK_EX | LOCK_NB) != 0;
}

bool ProcessIsAlive(int64_t pid) {
  if (pid <= 0 || pid > INT32_MAX) return false;
  if (::kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno != ESRCH;  // EPERM: alive, someone else's
}

std::vector<StaleTemporary> SweepStaleTemporaries(const std::string& dir) {
  std::vector<StaleTemporary> removed;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return removed;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  const uid_t me = ::geteuid();
  const int64_t self = ::getpid();
  for (const std::string& name : names) {
    const int64_t pid = StaleTemporaryPid(name);
    if (pid <= 0 || pid == self || ProcessIsAlive(pid)) continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || st.st_uid != me) continue;
    const bool is_dir = S_ISDIR(st.st_mode);
    if (!is_dir && !S_ISREG(st.st_mode)) continue;
    if (name.rfind(kStagingPrefix, 0) == 0) {
      if (!is_dir) continue;
    } else if (name.rfind(".seer-", 0) == 0) {
      // A scratch directory: only with its owner mark, and only when the mark's lock
      // can be taken (the owner is gone, whatever its pid looks like from here).
      if (!is_dir || !ScratchDirIsAbandoned(path)) continue;
    } else if (is_dir || FileIsLocked(path)) {
      continue;  // NAME.tmp.PID.N is a file, unlocked once its writer is gone
    }
    StaleTemporary entry{path, pid, TreeBytes(path)};
    if (RemoveTree(path).ok()) removed.push_back(std::move(entry));
  }
  return removed;
}

std::string ParentDirectory(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const size_t slash = trimmed.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : trimmed.substr(0, slash);
}

std::string RealParentDirectory(const std::string& path) {
  std::error_code ec;
  const std::string real = std::filesystem::canonical(path, ec).string();
  return ParentDirectory(ec ? path : real);
}

std::vector<StaleTemporary> SweepAtStart(const std::vector<std::string>& dirs, bool include_tmpdir) {
  std::vector<std::string> all;
  for (const std::string& dir : dirs) {
    if (!dir.empty()) all.push_back(dir);
  }
  const char* tmpdir = std::getenv("TMPDIR");
  if (include_tmpdir) all.push_back(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp");
  std::set<std::string> seen;
  std::vector<StaleTemporary> removed;
  for (const std::string& dir : all) {
    std::error_code ec;
    const std::string key = std::filesystem::weakly_canonical(dir, ec).string();
    if (!seen.insert(ec ? dir : key).second) continue;
    for (StaleTemporary& t : SweepStaleTemporaries(dir)) {
      std::fprintf(stderr, "seer: removed %s (%s), left by process %lld which is no longer running\n",
                   t.path.c_str(), FormatBytes(t.bytes).c_str(), static_cast<long long>(t.pid));
      removed.push_back(std::move(t));
    }
  }
  return removed;
}

}  // namespace seer
