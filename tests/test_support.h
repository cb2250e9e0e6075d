// Helpers shared by the test binaries: temporary directories, whole-file reads and
// running the real `seer` binary (env SEER_BINARY, set by ctest) for CLI tests.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace seer::test {

// A fresh directory under the test temp dir: <TempDir>/<prefix>_XXXXXX.
inline std::string MakeTempDir(const std::string& prefix = "seer_test") {
  std::string pattern = ::testing::TempDir() + "/" + prefix + "_XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  return buf.data();
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A raw little-endian file read as an array of T (trailing partial element dropped).
template <typename T>
std::vector<T> ReadArray(const std::string& path) {
  const std::string bytes = ReadFileBytes(path);
  std::vector<T> out(bytes.size() / sizeof(T));
  std::copy_n(bytes.data(), out.size() * sizeof(T), reinterpret_cast<char*>(out.data()));
  return out;
}

inline bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout + stderr, interleaved as printed
};

// Runs `$SEER_BINARY <args>` through the shell (args are shell words) and collects
// its output (stderr merged in, or discarded when merge_stderr is false). exit_code is
// -1 when SEER_BINARY is unset or the process died by signal.
inline CliRun RunSeer(const std::string& args, bool merge_stderr = true) {
  CliRun run;
  const char* binary = std::getenv("SEER_BINARY");
  if (binary == nullptr) {
    run.output = "SEER_BINARY not set (run the test through ctest)";
    return run;
  }
  const std::string command =
      std::string(binary) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) run.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

inline bool HaveSeerBinary() { return std::getenv("SEER_BINARY") != nullptr; }

}  // namespace seer::test
