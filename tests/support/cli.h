// Running the real `seer` binary (env SEER_BINARY, set by ctest) from CLI tests.
#pragma once

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

bool HaveSeerBinary();

// Asserts a failed run printed exactly one line, "seer <command>: error: ...", that
// contains `text`.
void ExpectOneLineError(const CliRun& run, const std::string& command, const std::string& text);

}  // namespace seer::testing
