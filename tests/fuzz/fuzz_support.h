// Helpers shared by the fuzz targets (tests/fuzz/*_fuzz.cc). Each target defines
// LLVMFuzzerTestOneInput; built with -DSEER_FUZZ=ON (clang) it links libFuzzer, otherwise
// it links replay_main.cc and ctest replays tests/fuzz/corpus/<target>/ through it.
// A target must never crash, hang or leak on any input: every input is either parsed or
// refused with a Status (which the target checks is a one-line message).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "storage/base/status.h"

namespace seer::fuzz {

// A private directory for this process (on /dev/shm when it exists: no disk writes per
// input), removed at exit.
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    const char* base = std::getenv("SEER_FUZZ_TMPDIR");
    std::string root = base != nullptr ? base : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    std::string templ = root + "/seer-fuzz-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    static std::string to_remove;
    to_remove = templ;
    std::atexit([] {
      std::string cmd = "rm -rf '" + to_remove + "'";
      if (std::system(cmd.c_str()) != 0) {
      }
    });
    return templ;
  }();
  return dir;
}

// Writes the input to ScratchDir()/name (replacing it) and returns the path.
inline std::string WriteInput(const uint8_t* data, size_t size, const std::string& name) {
  const std::string path = ScratchDir() + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(path.c_str());
    std::abort();
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) {
      std::perror(path.c_str());
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return path;
}

// A refusal must be one line that names the file (the contract of every reader here).
inline void CheckRefusal(const Status& status, const std::string& must_name) {
  if (status.ok()) return;
  const std::string& m = status.message();
  if (m.find('\n') != std::string::npos || (!must_name.empty() && m.find(must_name) == std::string::npos)) {
    std::fprintf(stderr, "bad error message (must be one line naming %s): %s\n", must_name.c_str(), m.c_str());
    std::abort();
  }
}

}  // namespace seer::fuzz
