// The hit simulator's per-node-type counts (typed datasets, `seer stats`'s per-type
// rows): NodeTypeOfId against a linear scan over the offsets (empty types included), the
// per-type accesses of every policy against a plain loop over the trace, static-degree's
// per-type misses against its fixed content (a miss = an access to a node not among the
// first K of its ranking), every policy's rows summing to its totals, a coarser typing's
// counts equal to the finer one's merged, and offsets that do not cut [0, num_nodes)
// refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "cache/hit_simulator.h"
#include "cache/policies.h"
#include "support/random_seed.h"

namespace seer {
namespace {

using Batches = std::vector<std::vector<int64_t>>;

// The type of `id` by walking the offsets (the oracle of NodeTypeOfId's binary search).
int32_t TypeByScan(const std::vector<int64_t>& offsets, int64_t id) {
  int32_t t = 0;
  while (!(offsets[t] <= id && id < offsets[t + 1])) ++t;
  return t;
}

// Batches of distinct ids, skewed towards low ids of each type's range.
Batches SkewedTrace(std::mt19937_64& rng, int num_batches, int batch_size, int64_t num_nodes) {
  Batches batches(static_cast<size_t>(num_batches));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& b : batches) {
    std::set<int64_t> seen;
    while (static_cast<int>(seen.size()) < batch_size) {
      const double x = u(rng);
      const int64_t v = std::min<int64_t>(num_nodes - 1, static_cast<int64_t>(num_nodes * x * x));
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  return batches;
}

std::vector<std::vector<IdSpan>> CutIntoSuperbatches(const Batches& trace, size_t per_superbatch) {
  std::vector<std::vector<IdSpan>> out;
  for (size_t i = 0; i < trace.size(); i += per_superbatch) {
    out.emplace_back();
    for (size_t k = i; k < std::min(trace.size(), i + per_superbatch); ++k) {
      out.back().push_back({trace[k].data(), static_cast<int64_t>(trace[k].size())});
    }
  }
  return out;
}

TEST(TypedReplayTest, NodeTypeOfIdMatchesALinearScanWithEmptyTypes) {
  const std::vector<std::vector<int64_t>> cases = {{0, 7}, {0, 0, 5, 5, 9}, {0, 1, 2, 3}, {0, 4, 4, 4, 10, 10}};
  for (const auto& offsets : cases) {
    for (int64_t id = 0; id < offsets.back(); ++id) {
      EXPECT_EQ(NodeTypeOfId(offsets, id), TypeByScan(offsets, id)) << "id " << id;
    }
  }
}

TEST(TypedReplayTest, PerTypeCountsMatchAPlainLoopOverTheTrace) {
  testing::RandomTestSeed seed;
  const int64_t num_nodes = 2503;
  // Four types like seer gen --hetero's, one empty: [0,1200) [1200,2400) [2400,2400) [2400,2503).
  const std::vector<int64_t> offsets = {0, 1200, 2400, 2400, 2503};
  const Batches trace = SkewedTrace(seed.rng, 30, 170, num_nodes);
  std::vector<int64_t> accesses(4, 0);
  for (const auto& b : trace) {
    for (int64_t v : b) ++accesses[static_cast<size_t>(TypeByScan(offsets, v))];
  }
  const std::vector<std::vector<IdSpan>> superbatches = CutIntoSuperbatches(trace, 7);
  SimulationOptions sim;
  sim.num_nodes = num_nodes;
  sim.row_bytes = 96;
  sim.block_bytes = 4096;
  sim.type_offsets = offsets;
  // static-degree's fixed content: the first K of an arbitrary ranking.
  std::vector<int64_t> ranking(static_cast<size_t>(num_nodes));
  for (int64_t v = 0; v < num_nodes; ++v) ranking[static_cast<size_t>(v)] = (v * 7919) % num_nodes;
  const int64_t capacity = 400;
  const std::set<int64_t> cached(ranking.begin(), ranking.begin() + capacity);
  std::vector<int64_t> static_misses(4, 0);
  for (const auto& b : trace) {
    for (int64_t v : b) {
      if (cached.count(v) == 0) ++static_misses[static_cast<size_t>(TypeByScan(offsets, v))];
    }
  }
  for (PolicyKind kind : {PolicyKind::kBelady, PolicyKind::kStaticDegree, PolicyKind::kLru, PolicyKind::kNone}) {
    SCOPED_TRACE(PolicyKindName(kind));
    PolicyOptions options;
    options.capacity_rows = kind == PolicyKind::kNone ? 0 : capacity;
    if (kind == PolicyKind::kStaticDegree) options.ranking = ranking;
    auto policy = MakeCachePolicy(kind, options);
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    auto stats = SimulatePolicy(**policy, superbatches, sim);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    ASSERT_EQ(stats->type_accesses.size(), 4u);
    ASSERT_EQ(stats->type_misses.size(), 4u);
    EXPECT_EQ(stats->type_accesses, accesses);
    int64_t misses = 0;
    for (size_t t = 0; t < 4; ++t) {
      EXPECT_LE(stats->type_misses[t], stats->type_accesses[t]) << "type " << t;
      misses += stats->type_misses[t];
    }
    EXPECT_EQ(misses, stats->misses);
    EXPECT_EQ(stats->type_accesses[2], 0);  // the empty type
    if (kind == PolicyKind::kStaticDegree) {
      EXPECT_EQ(stats->type_misses, static_misses);
    }
    if (kind == PolicyKind::kNone) {
      EXPECT_EQ(stats->type_misses, accesses);
    }
    if (kind == PolicyKind::kBelady) {
      EXPECT_LT(stats->misses, stats->accesses);  // not vacuous
    }

    // Types 0 and 1 merged: the same replay, their counts added.
    SimulationOptions coarse = sim;
    coarse.type_offsets = {0, 2400, 2400, 2503};
    auto again = MakeCachePolicy(kind, options);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    auto merged = SimulatePolicy(**again, superbatches, coarse);
    ASSERT_TRUE(merged.ok()) << merged.status().ToString();
    EXPECT_EQ(merged->misses, stats->misses);
    EXPECT_EQ(merged->type_misses,
              (std::vector<int64_t>{stats->type_misses[0] + stats->type_misses[1], 0, stats->type_misses[3]}));
  }
}

TEST(TypedReplayTest, OffsetsThatDoNotCutTheNodesAreRefused) {
  const Batches trace = {{0, 1, 2}};
  const std::vector<std::vector<IdSpan>> superbatches = {MakeIdSpans(trace)};
  for (const std::vector<int64_t>& offsets :
       std::vector<std::vector<int64_t>>{{0}, {1, 10}, {0, 9}, {0, 6, 4, 10}, {0, 11}}) {
    SimulationOptions sim;
    sim.num_nodes = 10;
    sim.row_bytes = 8;
    sim.type_offsets = offsets;
    auto policy = MakeCachePolicy(PolicyKind::kNone, PolicyOptions{});
    ASSERT_TRUE(policy.ok());
    auto stats = SimulatePolicy(**policy, superbatches, sim);
    ASSERT_FALSE(stats.ok()) << offsets.size() << " offsets";
    EXPECT_EQ(stats.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace seer
