#include "support/cli.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace seer::testing {

CliRun RunSeer(const std::string& args, bool merge_stderr) {
  CliRun run;
  const char* binary = std::getenv("SEER_BINARY");
  if (binary == nullptr) {
    run.output = "SEER_BINARY not set (run the test through ctest)";
    return run;
  }
  // Every run gets its own $TMPDIR (removed when the test ends), so the start-up sweep of
  // dead processes' temporaries never finds another test's leftovers (a run killed by a
  // test running beside it) and adds a "removed ..." line to an expected one-line error.
  const std::string tmpdir = MakeTempDir("seer_cli_tmp");
  return RunShell("TMPDIR='" + tmpdir + "' " + std::string(binary) + " " + args, merge_stderr);
}

CliRun RunShell(const std::string& command, bool merge_stderr) {
  CliRun run;
  FILE* pipe = ::popen((command + (merge_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) run.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

pid_t StartShell(const std::string& command) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

int WaitForChild(pid_t pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

bool HaveSeerBinary() { return std::getenv("SEER_BINARY") != nullptr; }

void ExpectOneLineError(const CliRun& run, const std::string& command, const std::string& text) {
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.rfind("seer " + command + ": error: ", 0), 0u) << run.output;
  EXPECT_NE(run.output.find(text), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find('\n'), run.output.size() - 1) << "not one line: " << run.output;
}

std::string RunPython(const std::string& script) {
  const CliRun r = RunShell("/usr/bin/python3 -c '" + script + "'");
  if (r.output.find("ModuleNotFoundError") != std::string::npos || r.output.find("No such file") != std::string::npos) {
    return "SKIP";
  }
  if (r.exit_code != 0) return "FAILED: " + r.output;
  std::string out = r.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace seer::testing
