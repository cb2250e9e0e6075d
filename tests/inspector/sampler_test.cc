// NeighborSampler: uniformity, boundaries, structure against the graph, I/O per
// high-degree node, corrupt neighbor ids; fan-out parsing.
#include "inspector/sampler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "opened_graph.h"

namespace seer {
namespace {

// Pearson chi-square of counts against equal expectations.
double ChiSquare(const std::vector<int64_t>& counts, double expected) {
  double chi2 = 0;
  for (int64_t c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

TEST(SamplerTest, EachNeighborPickedWithProbabilityFanoutOverDegree) {
  // Degree 37, fan-out 10, 3000 epochs (one RNG stream each, seed 7; the generator is
  // keyed by (seed, epoch, node, hop), not by the batch index): each neighbor
  // should be picked 3000*10/37 times. Chi-square, 36 degrees of freedom, significance
  // level p = 0.001: critical value 67.985. Deterministic: fixed seed and streams.
  auto g = testing::WriteAndOpenGraph("uniform", testing::Star(37), {0});
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{10}, 7});
  const int64_t trials = 3000;
  std::vector<int64_t> counts(37, 0);
  const int64_t seed_node = 0;
  for (int64_t t = 0; t < trials; ++t) {
    BatchTrace trace;
    ASSERT_TRUE(sampler.SampleBatch(&seed_node, 1, /*epoch=*/t, 0, &trace, nullptr).ok());
    ASSERT_EQ(trace.blocks[0].col_idx.size(), 10u);
    for (int32_t local : trace.blocks[0].col_idx) ++counts[trace.node_ids[local] - 1];
  }
  const double chi2 = ChiSquare(counts, trials * 10.0 / 37.0);
  std::printf("seed 7, 3000 trials: chi2 = %.2f (critical 67.985 at p=0.001, 36 dof)\n", chi2);
  EXPECT_LT(chi2, 67.985);
}

TEST(SamplerTest, FloydPositionsAreUniformOverManyStreams) {
  // Same test on the position picker alone, 20000 draws of 10 from 37 (seed 11).
  std::vector<int64_t> counts(37, 0);
  int64_t out[10];
  for (uint64_t t = 0; t < 20000; ++t) {
    SamplerRng rng(11, 0, t);
    SamplePositions(rng, 37, 10, out);
    for (int64_t p : out) ++counts[p];
  }
  const double chi2 = ChiSquare(counts, 20000 * 10.0 / 37.0);
  std::printf("seed 11, 20000 draws: chi2 = %.2f (critical 67.985 at p=0.001)\n", chi2);
  EXPECT_LT(chi2, 67.985);
}

TEST(SamplerTest, FanoutOneReachesEveryNeighborIncludingTheLast) {
  auto g = testing::WriteAndOpenGraph("fanout1", testing::Star(37), {0});
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{1}, 3});
  std::vector<int64_t> counts(37, 0);
  const int64_t seed_node = 0;
  for (int64_t t = 0; t < 3700; ++t) {
    BatchTrace trace;
    ASSERT_TRUE(sampler.SampleBatch(&seed_node, 1, /*epoch=*/t, 0, &trace, nullptr).ok());
    ASSERT_EQ(trace.node_ids.size(), 2u);
    ++counts[trace.node_ids[1] - 1];
  }
  for (int64_t p = 0; p < 37; ++p) EXPECT_GT(counts[p], 0) << "position " << p << " never picked";
  EXPECT_GT(counts[36], 50);  // the last neighbor, expected 100 times
  EXPECT_LT(ChiSquare(counts, 100.0), 67.985);  // p = 0.001, 36 dof
}

TEST(SamplerTest, PositionsAreDistinctSortedAndInRange) {
  int64_t out[200];
  for (int64_t degree : {1, 2, 3, 11, 64, 65, 97, 1000, 50000}) {
    for (int64_t count : {int64_t{1}, int64_t{2}, degree / 2, degree - 1, degree, int64_t{65}}) {
      if (count < 1 || count > degree || count > 200) continue;
      for (uint64_t t = 0; t < 50; ++t) {
        SamplerRng rng(5, degree, t);
        SamplePositions(rng, degree, count, out);
        for (int64_t i = 0; i < count; ++i) {
          ASSERT_GE(out[i], 0);
          ASSERT_LT(out[i], degree);
          if (i > 0) {
            ASSERT_LT(out[i - 1], out[i]) << "degree " << degree << " count " << count;
          }
        }
      }
    }
  }
}

TEST(SamplerTest, BelowHasNoModuloBias) {
  // bound = 3 * 2^62: a modulo reduction would pick [0, 2^62) twice as often as the
  // rest (P = 1/2 instead of 1/3). Seed 1, 30000 draws.
  const uint64_t bound = 3ULL << 62;
  SamplerRng rng(1, 2, 3);
  int64_t low = 0;
  const int64_t draws = 30000;
  for (int64_t i = 0; i < draws; ++i) {
    const uint64_t x = rng.Below(bound);
    ASSERT_LT(x, bound);
    low += x < (1ULL << 62);
  }
  EXPECT_NEAR(static_cast<double>(low) / draws, 1.0 / 3.0, 0.015);
}

TEST(SamplerTest, DegreeAtMostFanoutTakesAllNeighbors) {
  // Node 0: 7 in-neighbors, node 1: exactly 10, node 2: none.
  std::vector<std::vector<int64_t>> lists(20);
  for (int64_t u = 3; u < 10; ++u) lists[0].push_back(u);
  for (int64_t u = 10; u < 20; ++u) lists[1].push_back(u);
  auto g = testing::WriteAndOpenGraph("takeall", lists, {0, 1, 2});
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{10}, 1});
  const std::vector<int64_t> seeds{0, 1, 2};
  BatchTrace trace;
  ASSERT_TRUE(sampler.SampleBatch(seeds.data(), 3, 0, 0, &trace, nullptr).ok());
  const LayerBlock& b = trace.blocks[0];
  ASSERT_EQ(b.row_ptr, (std::vector<int64_t>{0, 7, 17, 17}));
  std::vector<int64_t> got;
  for (int32_t c : b.col_idx) got.push_back(trace.node_ids[c]);
  std::vector<int64_t> want;
  for (int64_t u = 3; u < 20; ++u) want.push_back(u);
  EXPECT_EQ(got, want);
}

TEST(SamplerTest, LargeDegreeNodeCostsAtMostFanoutReads) {
  auto g = testing::WriteAndOpenGraph("bigdeg", testing::Star(50000), {0});
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{10}, 9});
  const int64_t seed_node = 0;
  for (int64_t t = 0; t < 20; ++t) {
    BatchTrace trace;
    SampleStats stats;
    ASSERT_TRUE(sampler.SampleBatch(&seed_node, 1, 0, t, &trace, &stats).ok());
    EXPECT_EQ(stats.topology_requests, 10);
    EXPECT_LE(stats.reads.device_reads, 10);
    EXPECT_LE(stats.reads.device_bytes, 10 * g.topology->indices().alignment_bytes() * 2);
    // The picks really are node 0's neighbors, distinct.
    std::set<int64_t> seen(trace.node_ids.begin() + 1, trace.node_ids.end());
    EXPECT_EQ(seen.size(), 10u);
    EXPECT_GE(*seen.begin(), 1);
    EXPECT_LE(*seen.rbegin(), 50000);
  }
}

// Checks a trace against the graph: every block edge is a real in-edge, each dst gets
// min(degree, fanout) distinct positions' worth of neighbors, node_ids is unique with
// seeds first in first-seen order, blocks are prefix-consistent.
void CheckTraceAgainstGraph(const BatchTrace& t, const std::vector<int64_t>& seeds,
                            const std::vector<std::vector<int64_t>>& lists,
                            const std::vector<int>& fanouts) {
  ASSERT_EQ(t.num_seeds, static_cast<int64_t>(seeds.size()));
  ASSERT_TRUE(std::equal(seeds.begin(), seeds.end(), t.node_ids.begin()));
  std::set<int64_t> unique(t.node_ids.begin(), t.node_ids.end());
  ASSERT_EQ(unique.size(), t.node_ids.size());
  const size_t L = fanouts.size();
  ASSERT_EQ(t.blocks.size(), L);
  ASSERT_EQ(t.blocks.back().num_dst, t.num_seeds);
  ASSERT_EQ(t.blocks.front().num_src, static_cast<int64_t>(t.node_ids.size()));
  // Rebuild node_ids from the blocks in hop order: first-seen order.
  std::vector<int64_t> rebuilt(seeds.begin(), seeds.end());
  std::set<int64_t> have(seeds.begin(), seeds.end());
  for (size_t hop = 0; hop < L; ++hop) {
    const LayerBlock& b = t.blocks[L - 1 - hop];
    ASSERT_EQ(b.num_dst, static_cast<int64_t>(rebuilt.size()));
    for (int64_t d = 0; d < b.num_dst; ++d) {
      const std::vector<int64_t>& nbrs = lists[t.node_ids[d]];
      const int64_t degree = static_cast<int64_t>(nbrs.size());
      const int64_t want = std::min<int64_t>(degree, fanouts[hop]);
      ASSERT_EQ(b.row_ptr[d + 1] - b.row_ptr[d], want);
      // Multiset inclusion of the picks in the neighbor list.
      std::map<int64_t, int64_t> avail;
      for (int64_t u : nbrs) ++avail[u];
      for (int64_t j = b.row_ptr[d]; j < b.row_ptr[d + 1]; ++j) {
        ASSERT_GE(b.col_idx[j], 0);
        ASSERT_LT(b.col_idx[j], b.num_src);
        const int64_t u = t.node_ids[b.col_idx[j]];
        ASSERT_GT(avail[u]--, 0) << "picked " << u << " which is not an unused in-neighbor of "
                                 << t.node_ids[d];
        if (have.insert(u).second) rebuilt.push_back(u);
      }
    }
    ASSERT_EQ(b.num_src, static_cast<int64_t>(rebuilt.size()));
  }
  EXPECT_EQ(rebuilt, t.node_ids);
}

TEST(SamplerTest, TraceMatchesTheGraph) {
  for (IndexDtype dtype : {IndexDtype::kUint32, IndexDtype::kInt64}) {
    const uint64_t seed = 21;
    std::printf("graph seed %llu\n", static_cast<unsigned long long>(seed));
    const auto lists = testing::RandomLists(3001, seed);
    const std::string dir = testing::MakeTempDir("structure");
    testing::WriteGraph(dir, lists, {}, dtype);
    auto g = testing::OpenGraph(dir);
    const std::vector<int> fanouts{5, 3, 2};
    NeighborSampler sampler(g.topology->view(), SamplerOptions{fanouts, 4});
    std::vector<int64_t> seeds{3000, 0, 17, 2999, 5, 1234, 42};
    BatchTrace trace;
    ASSERT_TRUE(sampler.SampleBatch(seeds.data(), 7, 2, 5, &trace, nullptr).ok());
    CheckTraceAgainstGraph(trace, seeds, lists, fanouts);
    EXPECT_EQ(trace.epoch, 2);
    EXPECT_EQ(trace.batch_index, 5);
  }
}

// node -> its sampled neighbors (global ids, in sample order) at every hop of a trace.
std::vector<std::map<int64_t, std::vector<int64_t>>> NeighborsByHop(const BatchTrace& t) {
  const size_t layers = t.blocks.size();
  std::vector<std::map<int64_t, std::vector<int64_t>>> out(layers);
  for (size_t hop = 0; hop < layers; ++hop) {
    const LayerBlock& b = t.blocks[layers - 1 - hop];
    for (int64_t d = 0; d < b.num_dst; ++d) {
      std::vector<int64_t>& list = out[hop][t.node_ids[static_cast<size_t>(d)]];
      for (int64_t j = b.row_ptr[d]; j < b.row_ptr[d + 1]; ++j) list.push_back(t.node_ids[static_cast<size_t>(b.col_idx[j])]);
    }
  }
  return out;
}

// Data-parallel training and sharded evaluation rely on this: a node's sample at a hop is
// a function of (seed, epoch, node, hop), not of the batch it is in nor its position.
TEST(SamplerTest, SampleOfANodeDoesNotDependOnItsBatch) {
  const uint64_t seed = 77;
  std::printf("graph seed %llu\n", static_cast<unsigned long long>(seed));
  const auto lists = testing::RandomLists(2003, seed);
  auto g = testing::WriteAndOpenGraph("keyed", lists, {});
  const std::vector<int> fanouts{4, 3};
  NeighborSampler sampler(g.topology->view(), SamplerOptions{fanouts, 9});
  const std::vector<int64_t> whole{11, 500, 3, 1999, 42, 77, 1000, 8};
  const std::vector<int64_t> half_a{1000, 11, 42, 8}, half_b{77, 3, 1999, 500};
  BatchTrace t_whole, t_a, t_b, t_other_epoch;
  ASSERT_TRUE(sampler.SampleBatch(whole.data(), 8, 3, 0, &t_whole, nullptr).ok());
  ASSERT_TRUE(sampler.SampleBatch(half_a.data(), 4, 3, 17, &t_a, nullptr).ok());
  ASSERT_TRUE(sampler.SampleBatch(half_b.data(), 4, 3, 5, &t_b, nullptr).ok());
  ASSERT_TRUE(sampler.SampleBatch(whole.data(), 8, 4, 0, &t_other_epoch, nullptr).ok());
  const auto n_whole = NeighborsByHop(t_whole);
  int64_t compared = 0, differs_in_other_epoch = 0;
  const auto n_other = NeighborsByHop(t_other_epoch);
  for (const BatchTrace* part : {&t_a, &t_b}) {
    const auto n_part = NeighborsByHop(*part);
    for (size_t hop = 0; hop < fanouts.size(); ++hop) {
      for (const auto& [node, list] : n_part[hop]) {
        ASSERT_TRUE(n_whole[hop].count(node)) << "node " << node << " hop " << hop;
        EXPECT_EQ(list, n_whole[hop].at(node)) << "node " << node << " hop " << hop;
        ++compared;
        if (n_other[hop].count(node) && n_other[hop].at(node) != list) ++differs_in_other_epoch;
      }
    }
  }
  EXPECT_GT(compared, 8);
  EXPECT_GT(differs_in_other_epoch, 0);  // the epoch is part of the key
}

TEST(SamplerTest, EmptyBatchAndIsolatedSeeds) {
  std::vector<std::vector<int64_t>> lists(4);
  auto g = testing::WriteAndOpenGraph("empty", lists, {0, 1});
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{10, 10}, 1});
  BatchTrace trace;
  ASSERT_TRUE(sampler.SampleBatch(nullptr, 0, 0, 0, &trace, nullptr).ok());
  EXPECT_TRUE(trace.node_ids.empty());
  ASSERT_EQ(trace.blocks.size(), 2u);
  EXPECT_EQ(trace.blocks[0].row_ptr, std::vector<int64_t>{0});
  const std::vector<int64_t> seeds{3, 1};
  ASSERT_TRUE(sampler.SampleBatch(seeds.data(), 2, 0, 1, &trace, nullptr).ok());
  EXPECT_EQ(trace.node_ids, seeds);
  EXPECT_EQ(trace.blocks[0].row_ptr, (std::vector<int64_t>{0, 0, 0}));
}

TEST(SamplerTest, ParsesFanouts) {
  EXPECT_FALSE(ParseFanouts("10,,3").ok());
  EXPECT_FALSE(ParseFanouts("10,x").ok());
  ASSERT_TRUE(ParseFanouts("25,-1,3").ok());
  EXPECT_EQ(*ParseFanouts("25,-1,3"), (std::vector<int>{25, -1, 3}));
}

TEST(SamplerTest, CorruptNeighborIdIsReportedWithOffset) {
  std::vector<std::vector<int64_t>> lists = testing::Star(5);
  lists[0][3] = 1000;  // out of range
  auto g = testing::WriteAndOpenGraph("corrupt", lists, {0});
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{-1}, 0});
  const int64_t seed_node = 0;
  BatchTrace trace;
  Status st = sampler.SampleBatch(&seed_node, 1, 0, 0, &trace, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_NE(st.message().find("byte offset 12"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace seer
