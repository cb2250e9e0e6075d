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

bool KeepTestDirs() {
  const char* keep = std::getenv("SEER_KEEP_TEST_DIRS");
  return keep != nullptr && *keep != '\0' && *keep != '0';
}

}  // namespace

std::string MakeSuiteTempDir(const std::string& prefix) {
  std::string pattern = ::testing::TempDir();
  if (!pattern.empty() && pattern.back() != '/') pattern += '/';
  pattern += prefix + "_XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern;
}

bool RemoveTempDir(const std::string& dir) {
  if (KeepTestDirs()) {
    std::fprintf(stderr, "kept test dir %s\n", dir.c_str());
    return false;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return !ec;
}

std::string MakeTempDir(const std::string& prefix) {
  std::string pattern = MakeSuiteTempDir(prefix);
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
  if (KeepTestDirs()) {
    for (const auto& dir : dirs) std::fprintf(stderr, "kept test dir %s\n", dir.c_str());
    return 0;
  }
  int removed = 0;
  for (const auto& dir : dirs) removed += RemoveTempDir(dir) ? 1 : 0;
  return removed;
}

}  // namespace seer::testing
