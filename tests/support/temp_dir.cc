#include "support/temp_dir.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace seer::testing {
namespace {

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<std::string>& Registry() {
  static std::vector<std::string> dirs;
  return dirs;
}

}  // namespace

std::string MakeTempDir(const std::string& prefix) {
  std::string pattern = ::testing::TempDir();
  if (!pattern.empty() && pattern.back() != '/') pattern += '/';
  pattern += prefix + "_XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry().push_back(pattern);
  return pattern;
}

int RemoveRegisteredTempDirs() {
  std::vector<std::string> dirs;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    dirs.swap(Registry());
  }
  const char* keep = std::getenv("SEER_KEEP_TEST_DIRS");
  if (keep != nullptr && *keep != '\0' && *keep != '0') {
    for (const auto& dir : dirs) std::fprintf(stderr, "kept test dir %s\n", dir.c_str());
    return 0;
  }
  int removed = 0;
  for (const auto& dir : dirs) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (!ec) ++removed;
  }
  return removed;
}

}  // namespace seer::testing
