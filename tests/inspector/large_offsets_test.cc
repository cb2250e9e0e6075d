// 64-bit offsets through the sampler: lists that start beyond edge 2^32 (byte offsets
// > 2^34 of a sparse indices.bin) and a node of in-degree 2^32 + 100 are sampled from the
// right entries (oracle: the lists the fixture wrote).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "inspector/sampler.h"
#include "inspector/superbatch_driver.h"
#include "inspector/topology.h"
#include "storage/dataset/dataset.h"
#include "support/sparse_graph.h"
#include "support/test_support.h"

namespace seer {
namespace {

// node -> its sampled in-neighbors (global ids) in the output hop of a one-hop trace.
std::map<int64_t, std::vector<int64_t>> SampledLists(const BatchTrace& t) {
  std::map<int64_t, std::vector<int64_t>> out;
  const LayerBlock& b = t.blocks.back();
  for (int64_t d = 0; d < b.num_dst; ++d) {
    auto& list = out[t.node_ids[static_cast<size_t>(d)]];
    for (int64_t j = b.row_ptr[d]; j < b.row_ptr[d + 1]; ++j) {
      list.push_back(t.node_ids[static_cast<size_t>(b.col_idx[j])]);
    }
  }
  return out;
}

TEST(LargeOffsetsTest, SamplerReadsListsBeyondTwoToThe32) {
  testing::SparseGraph g;
  testing::WriteSparseGraph(testing::MakeTempDir("large_offsets") + "/ds", 150, 9, &g);
  auto ds = Dataset::Open(g.dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto topology = Topology::Open(*ds, TopologyOptions{});
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  ASSERT_EQ((*topology)->indptr().Degree(0), g.huge_degree());

  // Fan-out -1 (every neighbor) on nodes 1..149: the exact lists, in order.
  std::vector<int64_t> seeds;
  for (int64_t v = 1; v < 150; ++v) seeds.push_back(v);
  NeighborSampler all((*topology)->view(), SamplerOptions{{-1}, 1});
  BatchTrace t;
  ASSERT_TRUE(all.SampleBatch(seeds.data(), static_cast<int64_t>(seeds.size()), 0, 0, &t, nullptr).ok());
  const auto got = SampledLists(t);
  for (int64_t v = 1; v < 150; ++v) {
    std::vector<int64_t> want = g.lists[static_cast<size_t>(v)];
    std::vector<int64_t> have = got.count(v) ? got.at(v) : std::vector<int64_t>{};
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    std::sort(have.begin(), have.end());
    have.erase(std::unique(have.begin(), have.end()), have.end());
    EXPECT_EQ(have, want) << "node " << v;
  }

  // Node 0 (in-degree 2^32 + 100): fan-out 20 draws positions over the whole list; every
  // sampled neighbor is a value the list holds (0 in the hole, or one of its last 100).
  std::vector<int64_t> allowed = g.lists[0];
  allowed.push_back(0);
  NeighborSampler some((*topology)->view(), SamplerOptions{{20}, 3});
  const int64_t zero = 0;
  for (int64_t batch = 0; batch < 5; ++batch) {
    BatchTrace t0;
    ASSERT_TRUE(some.SampleBatch(&zero, 1, 0, batch, &t0, nullptr).ok());
    const auto lists = SampledLists(t0);
    ASSERT_TRUE(lists.count(0));
    EXPECT_FALSE(lists.at(0).empty());
    for (int64_t u : lists.at(0)) {
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), u), allowed.end()) << u;
    }
  }
}

}  // namespace
}  // namespace seer
