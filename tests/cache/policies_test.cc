// Cache policies as the hit simulator sees them: names, rankings, and what LRU, static
// and none keep. (Belady against every policy: hit_simulator_test.cc.)
#include "cache/policies.h"

#include <vector>

#include <gtest/gtest.h>

#include "cache/degrees.h"
#include "cache/hit_simulator.h"

namespace seer {
namespace {

using Batches = std::vector<std::vector<int64_t>>;

TEST(PolicyTest, ParsesNamesAndRanksWithTies) {
  EXPECT_EQ(*ParsePolicyKind("static-degree"), PolicyKind::kStaticDegree);
  EXPECT_FALSE(ParsePolicyKind("fifo").ok());
  EXPECT_EQ(RankNodesByScore({5, 9, 9, 0, 5}, 4), std::vector<int64_t>({1, 2, 0, 4}));
  EXPECT_EQ(RankNodesByScore({5, 9}, 10), std::vector<int64_t>({1, 0}));
}

TEST(PolicyTest, NodeScoresAndBeladyFill) {
  const NodeScoreFn degree = NodeScoresFromDegrees({3, int64_t{1} << 40, -2, 7});
  const NodeScoreFn visits = NodeScoresFromVisitCounts({0, 4});
  const std::vector<int64_t> ids = {3, 1, 0, 2, 9, -1};
  std::vector<uint32_t> got(ids.size(), 77);
  degree(ids.data(), static_cast<int64_t>(ids.size()), got.data());
  // Saturated to uint32, negative to 0, ids outside the table 0.
  EXPECT_EQ(got, std::vector<uint32_t>({7, 0xffffffffu, 3, 0, 0, 0}));
  visits(ids.data(), 2, got.data());
  EXPECT_EQ(got[0], 0u);
  EXPECT_EQ(got[1], 4u);

  PolicyOptions options;
  options.capacity_rows = 5;
  SetBeladyNodeScores({1, 50, 9, 50, 0, 3}, 5, &options);
  EXPECT_EQ(options.ranking, std::vector<int64_t>({1, 3, 2, 5, 0}));
  ASSERT_TRUE(static_cast<bool>(options.planner.node_scores));
  // Belady's fill: the first superbatch's nodes by first use, then the ranking.
  Batches first = {{4, 3}};
  auto belady = MakeCachePolicy(PolicyKind::kBelady, options);
  ASSERT_TRUE(belady.ok());
  EXPECT_EQ((*belady)->InitialSlots(MakeIdSpans(first)), std::vector<int64_t>({3, 4, 1, 2, 5}));
}

TEST(PolicyTest, NoneMissesEverythingAndStaticMissesItsComplement) {
  Batches trace = {{1, 2, 3}, {3, 4}, {1, 5}};
  SimulationOptions sim;
  sim.num_nodes = 10;
  sim.row_bytes = 4096;
  sim.block_bytes = 4096;
  auto none = MakeCachePolicy(PolicyKind::kNone, PolicyOptions{});
  auto stats = SimulatePolicy(**none, {MakeIdSpans(trace)}, sim);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->misses, 7);
  EXPECT_EQ(stats->blocks_read, 7);
  EXPECT_EQ(stats->bytes_read, 7 * 4096);
  EXPECT_EQ(stats->fill_rows, 0);
  PolicyOptions options;
  options.capacity_rows = 2;
  options.ranking = {3, 1, 9};
  auto fixed = MakeCachePolicy(PolicyKind::kStaticDegree, options);
  auto s2 = SimulatePolicy(**fixed, {MakeIdSpans(trace)}, sim);
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(s2->misses, 3);  // 2, 4, 5
  EXPECT_EQ(s2->fill_rows, 2);
  EXPECT_NEAR(s2->hit_ratio(), 4.0 / 7.0, 1e-12);
}

TEST(PolicyTest, LruEvictsTheLeastRecentlyUsed) {
  // K = 2. Fill: first two distinct nodes {1, 2}. Batch {1,2}: hits. Batch {3}: miss,
  // evicts 1 (least recent). Batch {1}: miss, evicts 2. Batch {3}: hit.
  Batches trace = {{1, 2}, {3}, {1}, {3}};
  SimulationOptions sim;
  sim.num_nodes = 10;
  PolicyOptions options;
  options.capacity_rows = 2;
  auto lru = MakeCachePolicy(PolicyKind::kLru, options);
  auto stats = SimulatePolicy(**lru, {MakeIdSpans(trace)}, sim);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->misses, 2);
  EXPECT_EQ(stats->fill_rows, 2);
}

TEST(PolicyTest, StaticPoliciesNeedARankingAndCapacityMustNotBeNegative) {
  PolicyOptions options;
  options.capacity_rows = 4;
  for (PolicyKind kind : {PolicyKind::kStaticDegree, PolicyKind::kPresc}) {
    EXPECT_EQ(MakeCachePolicy(kind, options).status().code(), StatusCode::kInvalidArgument)
        << PolicyKindName(kind);
  }
  options.capacity_rows = -1;
  EXPECT_EQ(MakeCachePolicy(PolicyKind::kLru, options).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace seer
