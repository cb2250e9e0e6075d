// Sweep of temporaries left by Seer processes that died (kill -9, power loss, OOM)
// before they could remove them. Every such name carries the pid of its writer:
//
//   NAME.tmp.PID.N             AtomicFileWriter's temporary (storage/base/atomic_file.h),
//                              flock'ed by its writer while open
//   .seer-PURPOSE-PID-XXXXXX/  a ScratchDir (storage/base/scratch_dir.h): prep's sort runs
//                              (remap, rows), the CSC builder's partitions (csc-spill),
//                              seer train's runtime directory (train); it holds the owner
//                              mark `.seer-owner`, flock'ed by its owner while it lives
//   .seer-prep-PID-NAME/       seer prep --force's staging directory beside the target
//
// An entry is removed only when it belongs to this user (the effective uid), it is not
// this process's, its pid is not a live process here (kill(pid, 0) fails with ESRCH),
// AND its writer's lock can be taken (the kernel drops the locks of a dead process, so a
// live writer in another PID namespace or container keeps its files). A directory named
// like a scratch directory without the owner mark is not Seer's and is kept; so is any
// other name. Tools call SweepAtStart on the directories they write (the dataset or
// output directory, $TMPDIR) and say on stderr what was removed. Errors while sweeping
// (a vanished entry, a permission problem) are ignored: the sweep is best effort and
// never stops a command.
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
