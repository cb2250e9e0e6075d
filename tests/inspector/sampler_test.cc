// Sampler, superbatch driver: uniformity, boundaries, structure against the graph,
// determinism, I/O accounting and fault handling.
#include "inspector/sampler.h"

#include <errno.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <unordered_map>

#include <gtest/gtest.h>

#include "inspector/superbatch_driver.h"
#include "inspector/trace_store.h"
#include "support/graph_writer.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;
using seer::testing::RandomLists;
using seer::testing::WriteGraph;

struct Opened {
  Dataset dataset;
  std::unique_ptr<Topology> topology;
};

Opened OpenGraph(const std::string& dir, int64_t ncache_budget = 0,
                 std::shared_ptr<FaultInjector> faults = nullptr) {
  auto dataset = Dataset::Open(dir);
  EXPECT_TRUE(dataset.ok()) << dataset.status().ToString();
  TopologyOptions options;
  options.ncache_budget_bytes = ncache_budget;
  options.reader.quiet = true;
  options.reader.faults = std::move(faults);
  auto topology = Topology::Open(*dataset, options);
  EXPECT_TRUE(topology.ok()) << topology.status().ToString();
  return Opened{std::move(*dataset), std::move(*topology)};
}

// Star: node 0's in-neighbors are 1..degree (position p holds node p+1).
std::vector<std::vector<int64_t>> Star(int64_t degree) {
  std::vector<std::vector<int64_t>> lists(static_cast<size_t>(degree) + 1);
  for (int64_t u = 1; u <= degree; ++u) lists[0].push_back(u);
  return lists;
}

// Pearson chi-square of counts against equal expectations.
double ChiSquare(const std::vector<int64_t>& counts, double expected) {
  double chi2 = 0;
  for (int64_t c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

TEST(SamplerTest, EachNeighborPickedWithProbabilityFanoutOverDegree) {
  // Degree 37, fan-out 10, 3000 batches (one RNG stream each, seed 7): each neighbor
  // should be picked 3000*10/37 times. Chi-square, 36 degrees of freedom, significance
  // level p = 0.001: critical value 67.985. Deterministic: fixed seed and streams.
  const std::string dir = MakeTempDir("uniform");
  WriteGraph(dir, Star(37), {0});
  Opened g = OpenGraph(dir);
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{10}, 7});
  const int64_t trials = 3000;
  std::vector<int64_t> counts(37, 0);
  const int64_t seed_node = 0;
  for (int64_t t = 0; t < trials; ++t) {
    BatchTrace trace;
    ASSERT_TRUE(sampler.SampleBatch(&seed_node, 1, 0, t, &trace, nullptr).ok());
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
  const std::string dir = MakeTempDir("fanout1");
  WriteGraph(dir, Star(37), {0});
  Opened g = OpenGraph(dir);
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{1}, 3});
  std::vector<int64_t> counts(37, 0);
  const int64_t seed_node = 0;
  for (int64_t t = 0; t < 3700; ++t) {
    BatchTrace trace;
    ASSERT_TRUE(sampler.SampleBatch(&seed_node, 1, 0, t, &trace, nullptr).ok());
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
  const std::string dir = MakeTempDir("takeall");
  WriteGraph(dir, lists, {0, 1, 2});
  Opened g = OpenGraph(dir);
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
  const std::string dir = MakeTempDir("bigdeg");
  WriteGraph(dir, Star(50000), {0});
  Opened g = OpenGraph(dir);
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
    const auto lists = RandomLists(3001, seed);
    const std::string dir = MakeTempDir("structure");
    WriteGraph(dir, lists, {}, dtype);
    Opened g = OpenGraph(dir);
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

TEST(SamplerTest, EmptyBatchAndIsolatedSeeds) {
  std::vector<std::vector<int64_t>> lists(4);
  const std::string dir = MakeTempDir("empty");
  WriteGraph(dir, lists, {0, 1});
  Opened g = OpenGraph(dir);
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

// ---- Superbatch driver ----------------------------------------------------------------

bool SameTraces(const std::vector<SuperbatchTrace>& a, const std::vector<SuperbatchTrace>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].epoch != b[i].epoch || a[i].superbatch_index != b[i].superbatch_index ||
        !(a[i].batches == b[i].batches) || SerializeTrace(a[i]) != SerializeTrace(b[i])) {
      return false;
    }
  }
  return true;
}

std::vector<SuperbatchTrace> SampleAll(const TopologyView& view, const std::vector<int64_t>& seeds,
                                       int threads, int64_t epochs, SuperbatchStats* last = nullptr) {
  SuperbatchOptions options;
  options.batch_size = 37;
  options.superbatch_size = 4;
  options.num_threads = threads;
  options.sampler = SamplerOptions{{6, 4, 3}, 99};
  auto sampler = SuperbatchSampler::Create(view, seeds, options);
  EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
  std::vector<SuperbatchTrace> out;
  for (int64_t e = 0; e < epochs; ++e) {
    for (int64_t k = 0; k < sampler->num_superbatches(); ++k) {
      auto trace = sampler->Sample(e, k, last);
      EXPECT_TRUE(trace.ok()) << trace.status().ToString();
      out.push_back(std::move(*trace));
    }
  }
  return out;
}

TEST(SuperbatchSamplerTest, CutsEveryEpochIntoBatchesWithoutDroppingAny) {
  const auto lists = RandomLists(2000, 5);
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 2000; v += 3) seeds.push_back(v);  // 667 seeds
  const std::string dir = MakeTempDir("cut");
  WriteGraph(dir, lists, seeds);
  Opened g = OpenGraph(dir);
  SuperbatchOptions options;
  options.batch_size = 100;
  options.superbatch_size = 3;
  auto sampler = SuperbatchSampler::Create(g.topology->view(), seeds, options);
  ASSERT_TRUE(sampler.ok());
  EXPECT_EQ(sampler->num_batches(), 7);
  EXPECT_EQ(sampler->num_superbatches(), 3);
  EXPECT_EQ(sampler->num_batches_in(2), 1);
  std::vector<int64_t> first_epoch;
  for (int64_t e = 0; e < 2; ++e) {
    std::vector<int64_t> seen;
    int64_t batch = 0;
    for (int64_t k = 0; k < 3; ++k) {
      SuperbatchStats stats;
      auto trace = sampler->Sample(e, k, &stats);
      ASSERT_TRUE(trace.ok());
      EXPECT_EQ(trace->superbatch_index, k);
      EXPECT_EQ(static_cast<int64_t>(trace->batches.size()), sampler->num_batches_in(k));
      EXPECT_EQ(stats.sample.batches, sampler->num_batches_in(k));
      std::set<int64_t> unique;
      for (const BatchTrace& b : trace->batches) {
        EXPECT_EQ(b.batch_index, batch++);
        EXPECT_EQ(b.num_seeds, b.batch_index == 6 ? 67 : 100);
        seen.insert(seen.end(), b.node_ids.begin(), b.node_ids.begin() + b.num_seeds);
        unique.insert(b.node_ids.begin(), b.node_ids.end());
      }
      EXPECT_EQ(stats.unique_nodes, static_cast<int64_t>(unique.size()));
    }
    EXPECT_EQ(seen, sampler->EpochOrder(e));
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, seeds);  // every seed exactly once
    if (e == 0) first_epoch = seen;
    else EXPECT_NE(seen, first_epoch);  // reshuffled
  }
}

TEST(SuperbatchSamplerTest, TracesIdenticalAcrossThreadsNeighborCacheAndSpill) {
  const uint64_t graph_seed = 77;
  std::printf("graph seed %llu\n", static_cast<unsigned long long>(graph_seed));
  const auto lists = RandomLists(2500, graph_seed);
  std::vector<int64_t> seeds;
  for (int64_t v = 1; v < 2500; v += 4) seeds.push_back(v);
  const std::string dir = MakeTempDir("determinism");
  WriteGraph(dir, lists, seeds);
  int64_t num_edges = 0;
  for (const auto& l : lists) num_edges += static_cast<int64_t>(l.size());
  const int64_t table = 8 * 2500;

  Opened plain = OpenGraph(dir);
  const auto reference = SampleAll(plain.topology->view(), seeds, 1, 2);
  ASSERT_EQ(reference.size(), 2u * 5);
  for (int threads : {2, 8}) {
    EXPECT_TRUE(SameTraces(SampleAll(plain.topology->view(), seeds, threads, 2), reference)) << threads;
  }
  for (int64_t budget : {table + num_edges, table + num_edges * 4}) {  // partial, full
    Opened cached = OpenGraph(dir, budget);
    ASSERT_TRUE(cached.topology->ncache().enabled());
    SuperbatchStats stats;
    const auto traces = SampleAll(cached.topology->view(), seeds, 8, 2, &stats);
    EXPECT_TRUE(SameTraces(traces, reference)) << budget;
    EXPECT_GT(stats.sample.ncache_hits, 0);
    if (budget == table + num_edges * 4) {
      EXPECT_EQ(stats.sample.ncache_hits, stats.sample.neighbor_lookups);
      EXPECT_EQ(stats.sample.reads.device_reads, 0);  // cache hits need no I/O
    } else {
      EXPECT_LT(stats.sample.ncache_hits, stats.sample.neighbor_lookups);
    }
  }
  // RAM vs spilled: a zero budget spills everything, a large one nothing.
  for (int64_t trace_budget : {int64_t{0}, int64_t{1} << 30}) {
    TraceStore store(trace_budget, MakeTempDir("spill"));
    for (const SuperbatchTrace& t : reference) ASSERT_TRUE(store.Push(t).ok());
    EXPECT_EQ(store.stats().spilled, trace_budget == 0 ? 10 : 0);
    for (const SuperbatchTrace& t : reference) {
      auto back = store.Pop();
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(SerializeTrace(*back), SerializeTrace(t));
    }
  }
}

TEST(SuperbatchSamplerTest, RejectsBadSeedsAndOptions) {
  const std::string dir = MakeTempDir("bad");
  WriteGraph(dir, Star(3), {0});
  Opened g = OpenGraph(dir);
  EXPECT_EQ(SuperbatchSampler::Create(g.topology->view(), {0, 4}, {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SuperbatchSampler::Create(g.topology->view(), {1, 1}, {}).status().code(),
            StatusCode::kInvalidArgument);
  SuperbatchOptions zero_batch;
  zero_batch.batch_size = 0;
  EXPECT_FALSE(SuperbatchSampler::Create(g.topology->view(), {0}, zero_batch).ok());
  SuperbatchOptions bad_fanout;
  bad_fanout.sampler.fanouts = {10, 0};
  EXPECT_FALSE(SuperbatchSampler::Create(g.topology->view(), {0}, bad_fanout).ok());
  EXPECT_FALSE(ParseFanouts("10,,3").ok());
  EXPECT_FALSE(ParseFanouts("10,x").ok());
  ASSERT_TRUE(ParseFanouts("25,-1,3").ok());
  EXPECT_EQ(*ParseFanouts("25,-1,3"), (std::vector<int>{25, -1, 3}));
}

// ---- Faults ---------------------------------------------------------------------------

class FailNthRead : public FaultInjector {
 public:
  explicit FailNthRead(int64_t n) : n_(n) {}
  int FilterResult(int64_t offset_bytes, int64_t, int result) override {
    if (count_.fetch_add(1) == n_) {
      failed_offset_ = offset_bytes;
      return -EIO;
    }
    return result;
  }
  std::atomic<int64_t> failed_offset_{-1};

 private:
  const int64_t n_;
  std::atomic<int64_t> count_{0};
};

TEST(SuperbatchSamplerTest, ReadErrorSurfacesWithPathAndOffsetAndStopsCleanly) {
  const auto lists = RandomLists(3000, 13);
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 3000; v += 2) seeds.push_back(v);
  const std::string dir = MakeTempDir("fault");
  WriteGraph(dir, lists, seeds);
  auto faults = std::make_shared<FailNthRead>(40);
  Opened g = OpenGraph(dir, 0, faults);
  SuperbatchOptions options;
  options.batch_size = 50;
  options.superbatch_size = 8;
  options.num_threads = 4;
  auto sampler = SuperbatchSampler::Create(g.topology->view(), seeds, options);
  ASSERT_TRUE(sampler.ok());
  auto trace = sampler->Sample(0, 0);
  ASSERT_FALSE(trace.ok());  // no partial trace handed out
  EXPECT_EQ(trace.status().code(), StatusCode::kIoError);
  EXPECT_EQ(trace.status().sys_errno(), EIO);
  const std::string msg = trace.status().message();
  EXPECT_NE(msg.find(dir + "/indices.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(faults->failed_offset_.load())), std::string::npos) << msg;
  // The sampler is still usable: the next superbatch (no more faults) succeeds.
  auto next = sampler->Sample(0, 1);
  EXPECT_TRUE(next.ok()) << next.status().ToString();
}

TEST(SuperbatchSamplerTest, CorruptNeighborIdIsReportedWithOffset) {
  std::vector<std::vector<int64_t>> lists = Star(5);
  lists[0][3] = 1000;  // out of range
  const std::string dir = MakeTempDir("corrupt");
  WriteGraph(dir, lists, {0});
  Opened g = OpenGraph(dir);
  NeighborSampler sampler(g.topology->view(), SamplerOptions{{-1}, 0});
  const int64_t seed_node = 0;
  BatchTrace trace;
  Status st = sampler.SampleBatch(&seed_node, 1, 0, 0, &trace, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_NE(st.message().find("byte offset 12"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace seer
