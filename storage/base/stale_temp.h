// Sweep of temporaries left by Seer processes that died (kill -9, power loss, OOM)
// before they could remove them. Every such name carries the pid of its writer:
//
//   NAME.tmp.PID.N           AtomicFileWriter's temporary (storage/base/atomic_file.h)
//   .seer-csc-spill-PID-*    the CSC builder's partition directory (seer prep / gen)
//   .seer-prep-PID-*         seer prep --force's staging directory beside the target
//   seer-train-PID-*         seer train's runtime directory under $TMPDIR
//   seer-trace-PID-*         a spilled trace or changeset file in a runtime directory
//
// An entry is removed only when its pid is not a live process (kill(pid, 0) fails with
// ESRCH), it is not this process, and it belongs to this user (the effective uid).
// Anything else, including such names whose pid is alive or reused by another live
// process, is kept. Tools call SweepStaleTemporaries at start on the directories they
// write (the dataset or output directory, $TMPDIR) and say on stderr what was removed.
// Errors while sweeping (a vanished entry, a permission problem) are ignored: the sweep
// is best effort and never stops a command.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seer {

struct StaleTemporary {
  std::string path;
  int64_t pid = 0;
  int64_t bytes = 0;  // of the file, or of every file under the directory
};

// The pid in `name` when it is one of the patterns above, else -1. (Exposed for tests.)
int64_t StaleTemporaryPid(const std::string& name);

// True when `pid` names a live process (or one this user may not signal).
bool ProcessIsAlive(int64_t pid);

// Removes the stale temporaries directly inside `dir` (not recursive: a stale directory
// is removed whole). A missing `dir` removes nothing.
std::vector<StaleTemporary> SweepStaleTemporaries(const std::string& dir);

// Sweeps each directory (and $TMPDIR, or /tmp, when include_tmpdir), printing one line
// per removal on stderr: "seer: removed PATH (SIZE), left by process PID which is no
// longer running". Empty entries in `dirs` are skipped. Returns what was removed.
std::vector<StaleTemporary> SweepAtStart(const std::vector<std::string>& dirs, bool include_tmpdir = true);
// The directory holding `path` ("." for a bare name), for sweeping beside a target.
std::string ParentDirectory(const std::string& path);
// The directory holding the real (symlinks resolved) `path` where it exists, else
// ParentDirectory(path): where `prep --force` stages its new dataset.
std::string RealParentDirectory(const std::string& path);

}  // namespace seer
