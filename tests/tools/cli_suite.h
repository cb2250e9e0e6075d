// A CLI test suite whose tests share one directory: SetUpTestSuite makes it and calls
// Suite::Prepare(root) once (generate a graph, record a trace), TearDownTestSuite
// removes it, and every test skips when SEER_BINARY is not set (run through ctest).
//
//   class StatsCliTest : public CliSuite<StatsCliTest> {
//    public:
//     static constexpr const char* kPrefix = "seer_stats_cli";
//     static void Prepare(const std::string& root) { ... }
//   };
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "support/cli.h"
#include "support/temp_dir.h"

namespace seer::testing {

template <typename Suite>
class CliSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!HaveSeerBinary()) return;
    root_ = MakeSuiteTempDir(Suite::kPrefix);
    Suite::Prepare(root_);
  }
  static void TearDownTestSuite() {
    if (!root_.empty()) RemoveTempDir(root_);
    root_.clear();
  }
  void SetUp() override {
    if (!HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
    ASSERT_FALSE(root_.empty());
  }
  static inline std::string root_;
};

}  // namespace seer::testing
