// Temporary directories for tests. MakeTempDir creates <gtest TempDir>/<prefix>_XXXXXX
// and registers it: the support library's main (test_main.cc) removes a directory made
// inside a test when that test ends, passed or failed, and one made outside any test
// (SetUpTestSuite, a static fixture) when the test program ends. Set
// SEER_KEEP_TEST_DIRS=1 to keep them for a post-mortem (their paths are printed then).
#pragma once

#include <string>

namespace seer::testing {

std::string MakeTempDir(const std::string& prefix = "seer_test");

// A directory shared by the tests of one suite (made in SetUpTestSuite): not removed
// after each test; remove it with RemoveTempDir in TearDownTestSuite.
std::string MakeSuiteTempDir(const std::string& prefix);
// Removes `dir` and everything in it (kept, and its path printed, with
// SEER_KEEP_TEST_DIRS=1). Returns whether it is gone.
bool RemoveTempDir(const std::string& dir);

// Removes the directories made inside tests since the last call (test_main.cc calls it
// at the end of every test). Returns how many were removed.
int RemoveRegisteredTempDirs();
// Removes every registered directory (test_main.cc, at the end of the program).
int RemoveAllRegisteredTempDirs();

}  // namespace seer::testing
