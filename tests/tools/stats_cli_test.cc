// `seer stats` through the real binary (env SEER_BINARY): gen -> sample -> stats.
#include <cstdint>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.h"
#include "cli_suite.h"

#include "storage/base/json_file.h"

namespace {

using seer::Json;
using seer::testing::CliRun;
using seer::testing::ReadFileBytes;
using seer::testing::RunSeer;

Json ReadJson(const std::string& path) {
  auto doc = seer::ReadJsonFile(path);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() ? *doc : Json::object();
}

class StatsCliTest : public seer::testing::CliSuite<StatsCliTest> {
 public:
  static constexpr const char* kPrefix = "seer_stats_cli";
  static void Prepare(const std::string&) {
    GenerateAndSample("--nodes 4111 --avg-degree 9 --feature-dim 47 --train-fraction 0.3 --seed 3",
                      "--batch-size 100 --superbatch 4 --epochs 2 --fanouts 5,5");
  }
};

TEST_F(StatsCliTest, ReportsEveryPolicyWithBeladyAsLowerBound) {
  const std::string json = root_ + "/stats.json", svg = root_ + "/stats.svg";
  const CliRun run = RunSeer("stats " + root_ + "/g --trace " + root_ + "/t --planner cpu --capacities 1%,10%,25%,400,64K" +
                          " --json " + json + " --svg " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("lower bound"), std::string::npos) << run.output;
  for (const char* policy : {"belady", "static-degree", "presc", "lru", "none"}) {
    EXPECT_NE(run.output.find(policy), std::string::npos) << policy;
  }
  const Json doc = ReadJson(json);
  ASSERT_TRUE(doc.contains("results")) << doc.dump();
  const Json& results = doc["results"];
  // capacity -> belady misses; then every other policy at that capacity misses >= it.
  std::map<int64_t, int64_t> belady;
  int64_t accesses = -1;
  for (const Json& r : results) {
    if (r["policy"] == "belady") belady[r["capacity_rows"].get<int64_t>()] = r["misses"].get<int64_t>();
    if (accesses < 0) accesses = r["accesses"].get<int64_t>();
    EXPECT_EQ(r["accesses"].get<int64_t>(), accesses);
    EXPECT_LE(r["misses"].get<int64_t>(), accesses);
    EXPECT_EQ(r["bytes_read"].get<int64_t>() % 512, 0);
  }
  // 1% of 4111 = 41 rows, 10% = 411, 25% = 1027, 400 rows, 64 KiB / 188 B = 348 rows.
  EXPECT_EQ(belady.size(), 5u);
  EXPECT_TRUE(belady.count(41) && belady.count(411) && belady.count(1027) && belady.count(400) && belady.count(348));
  int compared = 0;
  for (const Json& r : results) {
    const int64_t cap = r["capacity_rows"].get<int64_t>();
    auto it = belady.find(cap);
    if (it == belady.end()) continue;
    EXPECT_LE(it->second, r["misses"].get<int64_t>()) << r["policy"] << " at " << cap;
    ++compared;
  }
  EXPECT_GE(compared, 5 * 4);
  const std::string chart = ReadFileBytes(svg);
  EXPECT_EQ(chart.rfind("<svg", 0), 0u);
  EXPECT_NE(chart.find("</svg>"), std::string::npos);
  EXPECT_NE(chart.find("polyline"), std::string::npos);
  EXPECT_NE(chart.find(">lru<"), std::string::npos);
}

TEST_F(StatsCliTest, SuperbatchScopeNeverBeatsTheWholeTrace) {
  const std::string a = root_ + "/a.json", b = root_ + "/b.json";
  ASSERT_EQ(RunSeer("stats " + root_ + "/g --trace " + root_ + "/t --policies belady --capacities 5% --json " + a).exit_code, 0);
  ASSERT_EQ(RunSeer("stats " + root_ + "/g --trace " + root_ + "/t --policies belady --capacities 5% --belady-scope superbatch --json " + b).exit_code, 0);
  const Json x = ReadJson(a), y = ReadJson(b);
  EXPECT_LE(x["results"][0]["misses"].get<int64_t>(), y["results"][0]["misses"].get<int64_t>());
}

// --device-capacity: every device policy at each device capacity; transfers + device hits
// = accesses; `off` transfers every access and has the policy grid's belady misses as its
// host misses; belady (whole trace, the default scope) transfers the fewest rows.
TEST_F(StatsCliTest, DeviceCapacityReportsTransfersAndSsdBytesPerDevicePolicy) {
  const std::string json = root_ + "/device.json";
  const CliRun run = RunSeer("stats " + root_ + "/g --trace " + root_ + "/t --planner cpu --policies belady " +
                             "--capacities 10% --device-capacity 100,48K --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("device tier"), std::string::npos) << run.output;
  const Json doc = ReadJson(json);
  ASSERT_TRUE(doc.contains("device_tier")) << doc.dump();
  const int64_t host_misses = doc["results"][0]["misses"].get<int64_t>();
  // 48 KiB of float32 rows of 47 values (188 B) = 261 rows.
  std::map<int64_t, std::map<std::string, Json>> by_capacity;
  for (const Json& r : doc["device_tier"]) {
    EXPECT_EQ(r["device_hits"].get<int64_t>() + r["h2d_rows"].get<int64_t>(), r["accesses"].get<int64_t>());
    EXPECT_EQ(r["h2d_bytes"].get<int64_t>(), r["h2d_rows"].get<int64_t>() * 188);
    EXPECT_EQ(r["host_capacity_rows"].get<int64_t>(), 411);
    by_capacity[r["device_capacity_rows"].get<int64_t>()][r["device_policy"].get<std::string>()] = r;
  }
  ASSERT_TRUE(by_capacity.count(0) && by_capacity.count(100) && by_capacity.count(261)) << doc.dump();
  const Json& off = by_capacity[0]["off"];
  EXPECT_EQ(off["h2d_rows"].get<int64_t>(), off["accesses"].get<int64_t>());
  EXPECT_EQ(off["host_misses"].get<int64_t>(), host_misses);
  for (int64_t cap : {100, 261}) {
    auto& row = by_capacity[cap];
    ASSERT_EQ(row.size(), 3u) << cap;
    for (const char* other : {"previous-batch", "presc"}) {
      EXPECT_LE(row["belady"]["h2d_rows"].get<int64_t>(), row[other]["h2d_rows"].get<int64_t>()) << other;
    }
    EXPECT_LT(row["belady"]["h2d_rows"].get<int64_t>(), off["h2d_rows"].get<int64_t>());
  }
  EXPECT_LE(by_capacity[261]["belady"]["h2d_rows"].get<int64_t>(), by_capacity[100]["belady"]["h2d_rows"].get<int64_t>());
  seer::testing::ExpectOneLineError(RunSeer("stats " + root_ + "/g --trace " + root_ + "/t --device-capacity 12Q"),
                                    "stats", "12Q");
}

TEST_F(StatsCliTest, BadInputsAreOneLineErrors) {
  const std::string stats = "stats " + root_ + "/g --trace " + root_;
  using seer::testing::ExpectOneLineError;
  ExpectOneLineError(RunSeer(stats + "/t --policies fifo"), "stats", "unknown cache policy 'fifo'");
  ExpectOneLineError(RunSeer(stats + "/t --capacities 150%"), "stats", "150%");
  ExpectOneLineError(RunSeer(stats + "/missing"), "stats", "missing");
  ExpectOneLineError(RunSeer(stats + "/t --planner tpu"), "stats", "tpu");
}

// A trace recorded on another dataset (same size, other seed) was accepted before; its
// trace.json records the dataset's identity now and stats names both.
TEST_F(StatsCliTest, TraceOfAnotherDatasetIsRefused) {
  const CliRun gen = RunSeer("gen --nodes 4111 --avg-degree 9 --feature-dim 47 --train-fraction 0.3 --seed 4 "
                             "--quiet --out " + root_ + "/other");
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const Json trace = ReadJson(root_ + "/t/trace.json");
  ASSERT_TRUE(trace.contains("dataset_identity")) << trace.dump();
  const Json other = ReadJson(root_ + "/other/dataset.json");
  const CliRun run = RunSeer("stats " + root_ + "/other --trace " + root_ + "/t");
  seer::testing::ExpectOneLineError(run, "stats", "recorded on dataset " + trace["dataset_identity"].get<std::string>());
  EXPECT_NE(run.output.find(root_ + "/other is dataset "), std::string::npos) << run.output;
}

}  // namespace
