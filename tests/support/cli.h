// Running the real `seer` binary (env SEER_BINARY, set by ctest), or any shell command,
// from CLI tests.
#pragma once

#include <sys/types.h>

#include <string>

namespace seer::testing {

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout + stderr, interleaved as printed
};

// Runs `$SEER_BINARY <args>` through the shell (args are shell words) and collects its
// output (stderr merged in, or discarded when merge_stderr is false). exit_code is -1
// when SEER_BINARY is unset or the process died by signal.
CliRun RunSeer(const std::string& args, bool merge_stderr = true);

// Runs `sh -c command` and collects its output (stderr merged in, or discarded when
// merge_stderr is false); exit_code -1 when the shell died by signal. RunSeer's runner.
CliRun RunShell(const std::string& command, bool merge_stderr = true);

// Starts `sh -c command` in the background, as a child of this process: its pid.
pid_t StartShell(const std::string& command);
// Waits up to `seconds` for the child `pid`: its exit code, 128 + the signal that ended
// it, or -1 when it was still running (it is then killed and reaped).
int WaitForChild(pid_t pid, double seconds);

bool HaveSeerBinary();

// Runs `/usr/bin/python3 -c SCRIPT` (the script may not contain a single quote): its
// output without trailing newlines, "SKIP" when a module it imports is missing (numpy),
// or "FAILED: <output>" when it exits non-zero. The numpy oracles of the CLI tests.
std::string RunPython(const std::string& script);

// Asserts a failed run printed exactly one line, "seer <command>: error: ...", that
// contains `text`.
void ExpectOneLineError(const CliRun& run, const std::string& command, const std::string& text);

}  // namespace seer::testing
