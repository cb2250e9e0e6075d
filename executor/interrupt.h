// Stop requests from SIGINT and SIGTERM for `seer train` (docs/architecture.md "The
// executor's objects"). Torch-free.
//
// InstallStopSignalHandlers installs one handler for SIGINT and SIGTERM that only
// stores the signal's number in the process's stop flag (a lock-free std::atomic<int>:
// async-signal-safe) and writes `notice` (a string with static storage, or null) to
// stderr with write(2). A second SIGINT/SIGTERM while the flag is set restores the
// default action and re-raises it: the process ends at once, killed by that signal (a
// shell reports 130 / 143). Handlers run with SA_RESTART, so blocking reads and writes of
// the pipeline's threads are not cut short by EINTR.
//
// The training run polls the flag at batch boundaries through
// TrainOptions::stop_signal (executor/train_options.h): it stops, checkpoints where it
// stands and returns; the CLI then exits with 128 + the signal. Tests hand the run their
// own atomic instead of a signal.
//
// The flag is process-wide; every function here is thread-safe.
#pragma once

#include <atomic>
#include <string>

namespace seer {

// The process's stop flag: 0, or the number of the first SIGINT/SIGTERM received since
// the handlers were installed (or since ClearStopSignal).
std::atomic<int>& StopSignalFlag();
// Installs the handlers (idempotent; the last `notice` wins).
void InstallStopSignalHandlers(const char* notice);
// Tests: back to 0 (the handlers stay installed).
void ClearStopSignal();
// "SIGINT", "SIGTERM", or "signal N".
std::string StopSignalName(int signal);

}  // namespace seer
