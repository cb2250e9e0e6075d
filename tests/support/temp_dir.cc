#include "support/temp_dir.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"

namespace seer::testing {
namespace {

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

bool KeepTestDirs() {
  const char* keep = std::getenv("SEER_KEEP_TEST_DIRS");
  return keep != nullptr && *keep != '\0' && *keep != '0';
}

// Directories made while a test runs (removed when it ends) and those made outside any
// test, e.g. in SetUpTestSuite (removed when the program ends).
std::vector<std::string>& Registry(bool made_in_test) {
  static std::vector<std::string> test_dirs, program_dirs;
  return made_in_test ? test_dirs : program_dirs;
}

int RemoveAll(std::vector<std::string> dirs) {
  if (KeepTestDirs()) {
    for (const auto& dir : dirs) std::fprintf(stderr, "kept test dir %s\n", dir.c_str());
    return 0;
  }
  int removed = 0;
  for (const auto& dir : dirs) {
    removed += RemoveTree(dir).ok() ? 1 : 0;  // not std::filesystem::remove_all (storage/base/file_io.h)
  }
  return removed;
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
  return RemoveTree(dir).ok();
}

std::string MakeTempDir(const std::string& prefix) {
  std::string pattern = MakeSuiteTempDir(prefix);
  const bool in_test = ::testing::UnitTest::GetInstance()->current_test_info() != nullptr;
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry(in_test).push_back(pattern);
  return pattern;
}

int RemoveRegisteredTempDirs() {
  std::vector<std::string> dirs;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    dirs.swap(Registry(/*made_in_test=*/true));
  }
  return RemoveAll(std::move(dirs));
}

int RemoveAllRegisteredTempDirs() {
  std::vector<std::string> dirs;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    dirs.swap(Registry(/*made_in_test=*/false));
    auto& test_dirs = Registry(/*made_in_test=*/true);
    dirs.insert(dirs.end(), test_dirs.begin(), test_dirs.end());
    test_dirs.clear();
  }
  return RemoveAll(std::move(dirs));
}

}  // namespace seer::testing
