// A CLI test suite whose tests share one directory: SetUpTestSuite makes it and calls
// Suite::Prepare(root) once (generate a graph, record a trace: GenerateAndSample),
// TearDownTestSuite
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
  // For Prepare: `seer gen GEN_FLAGS --quiet --out ROOT/g`, then `seer sample ROOT/g
  // --out ROOT/t SAMPLE_FLAGS --quiet` (a graph and a recorded trace of it).
  static void GenerateAndSample(const std::string& gen_flags, const std::string& sample_flags) {
    const CliRun gen = RunSeer("gen " + gen_flags + " --quiet --out " + root_ + "/g");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    const CliRun sample = RunSeer("sample " + root_ + "/g --out " + root_ + "/t " + sample_flags + " --quiet");
    ASSERT_EQ(sample.exit_code, 0) << sample.output;
  }

  static inline std::string root_;
};

}  // namespace seer::testing
