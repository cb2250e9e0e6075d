// Link prediction batches (inspector/link_batch.h) and the link mode of the
// SuperbatchSampler: every stored edge is a training pair exactly once per epoch, seeds
// and pair positions agree with the edges (an independent walk of the in-lists), the
// negatives depend on (seed, epoch, pair) only — not on the batch, the rank or the thread
// count — and held-out pair files are read as written.
#include "inspector/link_batch.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "inspector/superbatch_driver.h"
#include "inspector/trace_format.h"
#include "opened_graph.h"
#include "storage/base/atomic_file.h"
#include "support/random_seed.h"

namespace seer {
namespace {

using Edge = std::pair<int64_t, int64_t>;  // (src, dst)

// The (src, dst) pairs of a link batch, read back through its seeds.
std::vector<Edge> Positives(const std::vector<int64_t>& seeds, const LinkPairs& p) {
  std::vector<Edge> out;
  for (int64_t i = 0; i < p.num_pairs(); ++i) {
    out.emplace_back(seeds[static_cast<size_t>(p.src[static_cast<size_t>(i)])],
                     seeds[static_cast<size_t>(p.dst[static_cast<size_t>(i)])]);
  }
  return out;
}

std::vector<Edge> AllEdges(const std::vector<std::vector<int64_t>>& lists) {
  std::vector<Edge> edges;
  for (size_t v = 0; v < lists.size(); ++v) {
    for (int64_t u : lists[v]) edges.emplace_back(u, static_cast<int64_t>(v));
  }
  std::sort(edges.begin(), edges.end());
  return edges;
}

TEST(EdgePermutationTest, IsABijectionKeyedBySeedAndEpoch) {
  for (uint64_t n : {1ULL, 2ULL, 3ULL, 5ULL, 64ULL, 1000ULL, 4097ULL, 70001ULL}) {
    const EdgePermutation p(n, 7, 3);
    std::vector<char> seen(n, 0);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = p(i);
      ASSERT_LT(v, n);
      ASSERT_FALSE(seen[v]) << "n " << n << ": " << v << " twice";
      seen[v] = 1;
    }
  }
  const uint64_t n = 10000;
  const EdgePermutation a(n, 7, 0), again(n, 7, 0), next_epoch(n, 7, 1), other_seed(n, 8, 0);
  int64_t same_epoch = 0, same_seed = 0, identity = 0;
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(a(i), again(i));
    same_epoch += a(i) == next_epoch(i);
    same_seed += a(i) == other_seed(i);
    identity += a(i) == i;
  }
  // A random permutation has about one fixed point; allow a few.
  EXPECT_LT(same_epoch, 10);
  EXPECT_LT(same_seed, 10);
  EXPECT_LT(identity, 10);
}

TEST(LinkBatcherTest, EveryStoredEdgeIsAPositiveOncePerEpoch) {
  const testing::RandomTrainGraph graph = testing::WriteRandomTrainGraph("linkedges", 300, 11, 1);
  auto g = testing::OpenGraph(graph.dir);
  LinkSeedOptions options;
  options.negatives = 3;
  auto batcher = LinkBatcher::ForTopologyEdges(g.topology->view(), options, 5);
  ASSERT_TRUE(batcher.ok()) << batcher.status().ToString();
  const std::vector<Edge> want = AllEdges(graph.lists);
  ASSERT_EQ(batcher->num_pairs(), static_cast<int64_t>(want.size()));
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<Edge> got;
    const int64_t batch = 97;
    for (int64_t begin = 0; begin < batcher->num_pairs(); begin += batch) {
      const int64_t end = std::min(begin + batch, batcher->num_pairs());
      std::vector<int64_t> positions;
      for (int64_t p = begin; p < end; ++p) positions.push_back(p);
      LinkBatch b;
      ASSERT_TRUE(batcher->MakeBatch(epoch, begin / batch, positions.data(), end - begin, &b).ok());
      // Seeds are distinct, and every pair position points into them.
      std::set<int64_t> distinct(b.seeds.begin(), b.seeds.end());
      ASSERT_EQ(distinct.size(), b.seeds.size());
      ASSERT_EQ(b.pairs.num_pairs(), end - begin);
      ASSERT_EQ(static_cast<int64_t>(b.pairs.neg.size()), 3 * (end - begin));
      for (int32_t pos : b.pairs.neg) ASSERT_LT(pos, static_cast<int32_t>(b.seeds.size()));
      // First appearance order: the first pair's source is seed 0, its destination seed 1
      // (unless a self loop).
      EXPECT_EQ(b.pairs.src[0], 0);
      const std::vector<Edge> batch_edges = Positives(b.seeds, b.pairs);
      got.insert(got.end(), batch_edges.begin(), batch_edges.end());
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "epoch " << epoch;
  }
}

TEST(LinkBatcherTest, NegativesDependOnThePairNotOnItsBatch) {
  const testing::RandomTrainGraph graph = testing::WriteRandomTrainGraph("linkneg", 500, 3, 1);
  auto g = testing::OpenGraph(graph.dir);
  for (NegativeDistribution dist : {NegativeDistribution::kUniform, NegativeDistribution::kDegree}) {
    LinkSeedOptions options;
    options.negatives = 4;
    options.distribution = dist;
    auto batcher = LinkBatcher::ForTopologyEdges(g.topology->view(), options, 9);
    ASSERT_TRUE(batcher.ok());
    // Pair p's negatives, from a batch of its own and from a batch of many pairs.
    auto negatives_of = [&](const std::vector<int64_t>& positions, size_t which) {
      LinkBatch b;
      EXPECT_TRUE(batcher->MakeBatch(1, 0, positions.data(), static_cast<int64_t>(positions.size()), &b).ok());
      std::vector<int64_t> out;
      for (int64_t j = 0; j < 4; ++j) out.push_back(b.seeds[static_cast<size_t>(b.pairs.negative(which, j))]);
      return out;
    };
    const std::vector<int64_t> alone = negatives_of({123}, 0);
    const std::vector<int64_t> among = negatives_of({5, 9, 123, 400}, 2);
    EXPECT_EQ(alone, among) << NegativeDistributionName(dist);
    // Degree-biased negatives are destinations of edges: nodes with in-degree > 0.
    if (dist == NegativeDistribution::kDegree) {
      std::vector<int64_t> positions(200);
      for (int64_t i = 0; i < 200; ++i) positions[static_cast<size_t>(i)] = i;
      LinkBatch b;
      ASSERT_TRUE(batcher->MakeBatch(0, 0, positions.data(), 200, &b).ok());
      for (int32_t pos : b.pairs.neg) {
        EXPECT_FALSE(graph.lists[static_cast<size_t>(b.seeds[static_cast<size_t>(pos)])].empty());
      }
    }
  }
}

TEST(LinkBatcherTest, SharedNegativesAreOnePerBatch) {
  const testing::RandomTrainGraph graph = testing::WriteRandomTrainGraph("linkshared", 200, 4, 1);
  auto g = testing::OpenGraph(graph.dir);
  LinkSeedOptions options;
  options.negatives = 5;
  options.shared = true;
  auto batcher = LinkBatcher::ForTopologyEdges(g.topology->view(), options, 1);
  ASSERT_TRUE(batcher.ok());
  const std::vector<int64_t> positions = {0, 1, 2, 3, 4, 5, 6};
  LinkBatch a, b, c;
  ASSERT_TRUE(batcher->MakeBatch(0, 3, positions.data(), 7, &a).ok());
  ASSERT_TRUE(batcher->MakeBatch(0, 3, positions.data(), 7, &b).ok());
  ASSERT_TRUE(batcher->MakeBatch(0, 4, positions.data(), 7, &c).ok());
  EXPECT_TRUE(a.pairs.shared_negatives);
  ASSERT_EQ(a.pairs.neg.size(), 5u);
  EXPECT_TRUE(a.pairs == b.pairs);
  EXPECT_EQ(a.seeds, b.seeds);
  EXPECT_NE(a.seeds, c.seeds);  // another batch index draws other negatives
  EXPECT_LE(static_cast<int64_t>(a.seeds.size()), LinkBatchMaxSeeds(7, options));
}

TEST(LinkBatcherTest, PairFilesAreReadAsWritten) {
  const std::string dir = testing::MakeTempDir("linkfile");
  const std::vector<int64_t> pairs = {1, 2, 3, 4, 5, 6, 7, 0, 2, 9};                 // 5 pairs
  std::vector<int64_t> negatives;
  for (int64_t i = 0; i < 15; ++i) negatives.push_back((i * 3) % 10);              // K = 3
  auto write = [](const std::string& path, const std::vector<int64_t>& v) {
    ASSERT_TRUE(WriteFileAtomically(path, std::string(reinterpret_cast<const char*>(v.data()), 8 * v.size())).ok());
  };
  write(dir + "/p.bin", pairs);
  write(dir + "/n.bin", negatives);
  auto fixed = LinkBatcher::ForPairFile(dir + "/p.bin", dir + "/n.bin", 3, 10, 0);
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_EQ(fixed->num_pairs(), 5);
  EXPECT_FALSE(fixed->shuffled());
  const std::vector<int64_t> positions = {1, 2, 4};
  LinkBatch b;
  ASSERT_TRUE(fixed->MakeBatch(0, 0, positions.data(), 3, &b).ok());
  const std::vector<Edge> want = {{3, 4}, {5, 6}, {2, 9}};
  EXPECT_EQ(Positives(b.seeds, b.pairs), want);
  for (size_t i = 0; i < positions.size(); ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(b.seeds[static_cast<size_t>(b.pairs.negative(static_cast<int64_t>(i), j))],
                negatives[static_cast<size_t>(positions[i] * 3 + j)]);
    }
  }
  // Without a negatives file: K uniform negatives from (seed, pair), the same every epoch.
  auto drawn = LinkBatcher::ForPairFile(dir + "/p.bin", "", 4, 10, 0);
  ASSERT_TRUE(drawn.ok());
  LinkBatch e0, e5;
  ASSERT_TRUE(drawn->MakeBatch(0, 0, positions.data(), 3, &e0).ok());
  ASSERT_TRUE(drawn->MakeBatch(5, 7, positions.data(), 3, &e5).ok());
  EXPECT_EQ(e0.seeds, e5.seeds);
  EXPECT_TRUE(e0.pairs == e5.pairs);
  // A negatives file of the wrong size, an id past the nodes: refused naming the file.
  auto short_negatives = LinkBatcher::ForPairFile(dir + "/p.bin", dir + "/n.bin", 4, 10, 0);
  ASSERT_FALSE(short_negatives.ok());
  EXPECT_NE(short_negatives.status().message().find("n.bin"), std::string::npos);
  auto small_graph = LinkBatcher::ForPairFile(dir + "/p.bin", dir + "/n.bin", 3, 8, 0);
  ASSERT_TRUE(small_graph.ok());
  const int64_t last = 4;
  const Status st = small_graph->MakeBatch(0, 0, &last, 1, &b);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("p.bin"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("byte offset 72"), std::string::npos) << st.ToString();
}

// The link sampler over an epoch: every edge once, the same traces for any thread
// count, and two ranks' batches together are one process's (pairs and negatives).
TEST(LinkSamplerTest, RanksTogetherSampleWhatOneProcessSamples) {
  const testing::RandomTrainGraph graph = testing::WriteRandomTrainGraph("linksampler", 400, 21, 1);
  auto g = testing::OpenGraph(graph.dir);
  LinkSeedOptions link;
  link.negatives = 2;
  auto batcher = LinkBatcher::ForTopologyEdges(g.topology->view(), link, 13);
  ASSERT_TRUE(batcher.ok());
  auto shared = std::make_shared<LinkBatcher>(std::move(*batcher));
  // pair -> its negatives, over every batch of epoch 1.
  auto run = [&](int64_t batch_size, int rank, int world, int threads) {
    SuperbatchOptions options = MakeSuperbatchOptions(batch_size, 3, threads, {4, 3}, 13, /*shuffle=*/true);
    options.rank = rank;
    options.world_size = world;
    auto sampler = SuperbatchSampler::CreateLink(g.topology->view(), shared, options);
    EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
    std::vector<std::pair<Edge, std::vector<int64_t>>> out;
    std::vector<SuperbatchTrace> traces;
    for (int64_t k = 0; k < sampler->num_superbatches(); ++k) {
      auto trace = sampler->Sample(1, k);
      EXPECT_TRUE(trace.ok()) << trace.status().ToString();
      for (const BatchTrace& b : trace->batches) {
        EXPECT_EQ(b.blocks.back().num_dst, b.num_seeds);
        const std::vector<int64_t> seeds(b.node_ids.begin(), b.node_ids.begin() + b.num_seeds);
        const std::vector<Edge> pos = Positives(seeds, b.link);
        for (int64_t i = 0; i < b.link.num_pairs(); ++i) {
          std::vector<int64_t> negs;
          for (int64_t j = 0; j < 2; ++j) negs.push_back(seeds[static_cast<size_t>(b.link.negative(i, j))]);
          out.emplace_back(pos[static_cast<size_t>(i)], negs);
        }
      }
      traces.push_back(std::move(*trace));
    }
    return std::make_pair(out, traces);
  };
  auto [one, one_traces] = run(64, 0, 1, 1);
  auto [one_threads, threads_traces] = run(64, 0, 1, 4);
  ASSERT_EQ(one_traces.size(), threads_traces.size());
  for (size_t i = 0; i < one_traces.size(); ++i) EXPECT_EQ(SerializeTrace(one_traces[i]), SerializeTrace(threads_traces[i]));
  std::vector<Edge> edges;
  for (const auto& [e, negs] : one) edges.push_back(e);
  std::sort(edges.begin(), edges.end());
  EXPECT_EQ(edges, AllEdges(graph.lists));
  auto r0 = run(32, 0, 2, 2).first;
  auto r1 = run(32, 1, 2, 2).first;
  r0.insert(r0.end(), r1.begin(), r1.end());
  // Ranks drop a last global batch of fewer pairs than ranks only; here it has more.
  std::sort(one.begin(), one.end());
  std::sort(r0.begin(), r0.end());
  EXPECT_EQ(r0, one);
}

}  // namespace
}  // namespace seer
