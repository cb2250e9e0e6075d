// ReplayGrid (`seer stats` as a library call) and the capacity syntax it reads.
#include "cache/replay_grid.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/graph_writer.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

TEST(ReplayGridTest, CapacitiesArePercentRowsOrBytes) {
  // 4111 nodes with 188-byte rows (47 float32 features).
  auto rows = [](const std::string& text) {
    auto c = ParseCacheCapacity(text);
    EXPECT_TRUE(c.ok()) << text << ": " << c.status().ToString();
    return c.ok() ? c->Rows(4111, 188) : -1;
  };
  EXPECT_EQ(rows("1%"), 41);
  EXPECT_EQ(rows("25%"), 1027);
  EXPECT_EQ(rows("100%"), 4111);
  EXPECT_EQ(rows("0%"), 0);
  EXPECT_EQ(rows("400"), 400);
  EXPECT_EQ(rows("64K"), 65536 / 188);
  EXPECT_EQ(rows("4096B"), 4096 / 188);
  EXPECT_EQ(rows("2.5%"), 102);
  // Strict numbers: a row count beyond int64 and spaces inside a percentage are errors.
  for (const char* bad : {"150%", "-1%", "x%", "lots", "", "99999999999999999999", " 5%", "5 %"}) {
    auto c = ParseCacheCapacity(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find(bad), std::string::npos) << c.status().ToString();
  }
  auto list = ParseCacheCapacities(" 5%, 12 ,,2G");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[1].text, "12");
  auto policies = ParsePolicyKinds("lru,belady");
  ASSERT_TRUE(policies.ok());
  EXPECT_EQ(*policies, (std::vector<PolicyKind>{PolicyKind::kLru, PolicyKind::kBelady}));
  EXPECT_FALSE(ParsePolicyKinds("lru,fifo").ok());
}

// A random trace over `num_nodes` nodes: superbatches of batches of distinct ids, with a
// hot set so that caching pays.
RecordedTrace RandomTrace(int64_t num_nodes, int num_superbatches, uint64_t seed) {
  std::mt19937_64 rng(seed);
  RecordedTrace trace;
  for (int k = 0; k < num_superbatches; ++k) {
    auto& batches = trace.superbatches.emplace_back();
    trace.epochs.push_back(k / 2);
    for (int b = 0; b < 3 + k % 2; ++b) {
      std::vector<int64_t> ids;
      std::vector<bool> used(static_cast<size_t>(num_nodes), false);
      for (int i = 0; i < 40; ++i) {
        const int64_t v = rng() % 4 == 0 ? static_cast<int64_t>(rng() % num_nodes)
                                         : static_cast<int64_t>(rng() % (num_nodes / 10));
        if (!used[static_cast<size_t>(v)]) ids.push_back(v), used[static_cast<size_t>(v)] = true;
      }
      batches.push_back(std::move(ids));
    }
  }
  return trace;
}

class ReplayGridDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = seer::testing::MakeTempDir("replay_grid") + "/g";
    seer::testing::WriteGraph(dir, seer::testing::RandomLists(kNodes, 5), {0, 1, 2});
    auto dataset = Dataset::Open(dir);
    ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
    dataset_ = std::make_unique<Dataset>(std::move(*dataset));
  }
  static constexpr int64_t kNodes = 997;
  std::unique_ptr<Dataset> dataset_;
};

TEST_F(ReplayGridDatasetTest, BeladyOverTheWholeTraceIsTheLowerBound) {
  const RecordedTrace trace = RandomTrace(kNodes, 6, 42);
  ReplayGridOptions o;
  o.capacities = *ParseCacheCapacities("10%,25,5%,25,2000");  // repeats and > num_nodes
  o.planner = PlannerDevice::kCpu;
  o.block_bytes = 512;
  o.show_progress = false;
  o.policies.push_back(PolicyKind::kLru);  // a repeat: replayed once
  auto grid = ReplayGrid::Create(*dataset_, trace, o, "trace");
  ASSERT_TRUE(grid.ok()) << grid.status().ToString();
  EXPECT_EQ(grid->capacity_rows(), (std::vector<int64_t>{25, 49, 99, kNodes}));
  EXPECT_EQ(grid->policies().size(), 5u);
  EXPECT_EQ(grid->num_superbatches(), 6);
  EXPECT_EQ(grid->num_batches(), 3 * 6 + 3);
  EXPECT_EQ(grid->row_bytes(), 4);

  auto results = grid->Run();
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 4u * 4u + 1u);  // none once
  std::map<int64_t, int64_t> belady;
  for (const PolicyStats& s : *results) {
    EXPECT_EQ(s.accesses, grid->num_accesses());
    EXPECT_EQ(s.bytes_read, s.blocks_read * 512);
    if (s.policy == "belady") belady[s.capacity_rows] = s.misses;
    if (s.policy == "none") {
      EXPECT_EQ(s.misses, s.accesses);
    }
  }
  for (const PolicyStats& s : *results) {
    if (s.policy != "none") {
      EXPECT_GE(s.misses, belady.at(s.capacity_rows)) << s.policy << " at " << s.capacity_rows;
    }
  }
  // A cache holding every node misses nothing after its fill under Belady.
  EXPECT_EQ(belady.at(kNodes), 0);

  // Per-superbatch scope never beats the whole-trace plan.
  o.belady_scope = BeladyScope::kSuperbatch;
  o.policies = {PolicyKind::kBelady};
  auto per_superbatch = ReplayGrid::Create(*dataset_, trace, o, "trace");
  ASSERT_TRUE(per_superbatch.ok());
  auto scoped = per_superbatch->Run();
  ASSERT_TRUE(scoped.ok());
  for (const PolicyStats& s : *scoped) EXPECT_GE(s.misses, belady.at(s.capacity_rows)) << s.capacity_rows;
}

// --read-block: reads counted in the read blocks; belady plans the block rule (4 B rows,
// 64 B blocks = 16 rows per block: it admits free rows, and the per-row plan does not).
TEST_F(ReplayGridDatasetTest, ReadBlockCountsBlocksAndAdmitsFreeRows) {
  const RecordedTrace trace = RandomTrace(kNodes, 4, 7);
  ReplayGridOptions o;
  o.capacities = *ParseCacheCapacities("10%");
  o.planner = PlannerDevice::kCpu;
  o.belady_scope = BeladyScope::kSuperbatch;
  o.policies = {PolicyKind::kBelady, PolicyKind::kStaticDegree};
  o.show_progress = false;
  o.read_block_bytes = 64;
  auto grid = ReplayGrid::Create(*dataset_, trace, o, "trace");
  ASSERT_TRUE(grid.ok()) << grid.status().ToString();
  EXPECT_EQ(grid->block_bytes(), 64);
  auto results = grid->Run();
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 2u);
  for (const PolicyStats& s : *results) {
    EXPECT_EQ(s.bytes_read, s.blocks_read * 64) << s.policy;
    if (s.policy == "belady") {
      EXPECT_GT(s.block_admits, 0);
    } else {
      EXPECT_EQ(s.block_admits, 0) << s.policy;
    }
  }
  o.read_block_bytes = 0;
  o.block_bytes = 64;
  auto per_row = ReplayGrid::Create(*dataset_, trace, o, "trace");
  ASSERT_TRUE(per_row.ok());
  auto per_row_results = per_row->Run();
  ASSERT_TRUE(per_row_results.ok());
  for (const PolicyStats& s : *per_row_results) EXPECT_EQ(s.block_admits, 0) << s.policy;

  o.read_block_bytes = 3000;  // not a power of two
  o.block_bytes = 0;
  auto odd = ReplayGrid::Create(*dataset_, trace, o, "trace");
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("--read-block 3000"), std::string::npos) << odd.status().ToString();
  o.read_block_bytes = 4096;
  o.block_bytes = 512;  // two different block sizes
  EXPECT_FALSE(ReplayGrid::Create(*dataset_, trace, o, "trace").ok());
}

TEST_F(ReplayGridDatasetTest, BadInputsAreErrors) {
  ReplayGridOptions o;
  o.show_progress = false;
  o.block_bytes = 512;
  RecordedTrace trace = RandomTrace(kNodes, 2, 1);
  trace.superbatches[1][0].push_back(kNodes);  // one id past the end
  auto foreign = ReplayGrid::Create(*dataset_, trace, o, "other/trace");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("other/trace"), std::string::npos);
  EXPECT_NE(foreign.status().message().find(std::to_string(kNodes)), std::string::npos);

  o.policies.clear();
  EXPECT_FALSE(ReplayGrid::Create(*dataset_, RandomTrace(kNodes, 2, 1), o, "t").ok());
  o = ReplayGridOptions();
  o.presc_epochs = 0;
  EXPECT_FALSE(ReplayGrid::Create(*dataset_, RandomTrace(kNodes, 2, 1), o, "t").ok());
}

}  // namespace
}  // namespace seer
