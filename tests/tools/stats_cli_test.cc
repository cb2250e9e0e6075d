// `seer stats` through the real binary (env SEER_BINARY): gen -> sample -> stats.
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.h"

#include "storage/base/json.h"

namespace {

using seer::testing::CliRun;

CliRun Seer(const std::string& args) { return seer::testing::RunSeer(args); }

std::string Slurp(const std::string& path) { return seer::testing::ReadFileBytes(path); }

class StatsCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv("SEER_BINARY") == nullptr) return;
    root_ = ::testing::TempDir() + "/seer_stats_cli_XXXXXX";
    if (mkdtemp(root_.data()) == nullptr) return;
    const CliRun gen = Seer("gen --nodes 4111 --avg-degree 9 --feature-dim 47 --train-fraction 0.3 --seed 3 --quiet --out " +
                            root_ + "/g");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    const CliRun sample = Seer("sample " + root_ + "/g --out " + root_ + "/t --batch-size 100 --superbatch 4 " +
                               "--epochs 2 --fanouts 5,5 --quiet");
    ASSERT_EQ(sample.exit_code, 0) << sample.output;
  }
  void SetUp() override {
    if (std::getenv("SEER_BINARY") == nullptr) GTEST_SKIP() << "SEER_BINARY not set";
  }
  static std::string root_;
};
std::string StatsCliTest::root_;

TEST_F(StatsCliTest, ReportsEveryPolicyWithBeladyAsLowerBound) {
  const std::string json = root_ + "/stats.json", svg = root_ + "/stats.svg";
  const CliRun run = Seer("stats " + root_ + "/g --trace " + root_ + "/t --planner cpu --capacities 1%,10%,25%,400,64K" +
                          " --json " + json + " --svg " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("lower bound"), std::string::npos) << run.output;
  for (const char* policy : {"belady", "static-degree", "presc", "lru", "none"}) {
    EXPECT_NE(run.output.find(policy), std::string::npos) << policy;
  }
  auto doc = seer::JsonValue::Parse(Slurp(json), json);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const seer::JsonValue* results = doc->Find("results");
  ASSERT_NE(results, nullptr);
  // capacity -> belady misses; then every other policy at that capacity misses >= it.
  std::map<int64_t, int64_t> belady;
  int64_t accesses = -1;
  for (const auto& r : results->items()) {
    if (r.Find("policy")->as_string() == "belady") belady[r.Find("capacity_rows")->as_int()] = r.Find("misses")->as_int();
    if (accesses < 0) accesses = r.Find("accesses")->as_int();
    EXPECT_EQ(r.Find("accesses")->as_int(), accesses);
    EXPECT_LE(r.Find("misses")->as_int(), accesses);
    EXPECT_EQ(r.Find("bytes_read")->as_int() % 512, 0);
  }
  // 1% of 4111 = 41 rows, 10% = 411, 25% = 1027, 400 rows, 64 KiB / 188 B = 348 rows.
  EXPECT_EQ(belady.size(), 5u);
  EXPECT_TRUE(belady.count(41) && belady.count(411) && belady.count(1027) && belady.count(400) && belady.count(348));
  int compared = 0;
  for (const auto& r : results->items()) {
    const int64_t cap = r.Find("capacity_rows")->as_int();
    auto it = belady.find(cap);
    if (it == belady.end()) continue;
    EXPECT_LE(it->second, r.Find("misses")->as_int()) << r.Find("policy")->as_string() << " at " << cap;
    ++compared;
  }
  EXPECT_GE(compared, 5 * 4);
  const std::string chart = Slurp(svg);
  EXPECT_EQ(chart.rfind("<svg", 0), 0u);
  EXPECT_NE(chart.find("</svg>"), std::string::npos);
  EXPECT_NE(chart.find("polyline"), std::string::npos);
  EXPECT_NE(chart.find(">lru<"), std::string::npos);
}

TEST_F(StatsCliTest, SuperbatchScopeNeverBeatsTheWholeTrace) {
  const std::string a = root_ + "/a.json", b = root_ + "/b.json";
  ASSERT_EQ(Seer("stats " + root_ + "/g --trace " + root_ + "/t --policies belady --capacities 5% --json " + a).exit_code, 0);
  ASSERT_EQ(Seer("stats " + root_ + "/g --trace " + root_ + "/t --policies belady --capacities 5% --belady-scope superbatch --json " + b).exit_code, 0);
  auto x = seer::JsonValue::Parse(Slurp(a), a);
  auto y = seer::JsonValue::Parse(Slurp(b), b);
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_LE(x->Find("results")->items()[0].Find("misses")->as_int(),
            y->Find("results")->items()[0].Find("misses")->as_int());
}

TEST_F(StatsCliTest, BadInputsAreOneLineErrors) {
  CliRun bad_policy = Seer("stats " + root_ + "/g --trace " + root_ + "/t --policies fifo");
  EXPECT_NE(bad_policy.exit_code, 0);
  EXPECT_NE(bad_policy.output.find("unknown cache policy 'fifo'"), std::string::npos) << bad_policy.output;
  CliRun bad_capacity = Seer("stats " + root_ + "/g --trace " + root_ + "/t --capacities 150%");
  EXPECT_NE(bad_capacity.exit_code, 0);
  EXPECT_NE(bad_capacity.output.find("150%"), std::string::npos) << bad_capacity.output;
  CliRun no_trace = Seer("stats " + root_ + "/g --trace " + root_ + "/missing");
  EXPECT_NE(no_trace.exit_code, 0);
  EXPECT_NE(no_trace.output.find("missing"), std::string::npos) << no_trace.output;
  CliRun bad_planner = Seer("stats " + root_ + "/g --trace " + root_ + "/t --planner tpu");
  EXPECT_NE(bad_planner.exit_code, 0);
  EXPECT_NE(bad_planner.output.find("tpu"), std::string::npos) << bad_planner.output;
}

}  // namespace
