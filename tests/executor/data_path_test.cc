// The executor's data path on generated graphs: memory split, cache policies, the
// features handed to the model (byte-identical to features.bin), resume determinism,
// accuracy against the features-only baseline, prediction and npy files.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>

#include "cache/feature_cache.h"
#include "executor/cache_policy.h"
#include "executor/memory_budget.h"
#include "executor/train_loop.h"
#include "kernels/device.h"
#include "support/temp_dir.h"
#include "storage/base/file_io.h"
#include "storage/dataset/float16.h"
#include "storage/io/mmap_reader.h"
#include "storage/prep/npy.h"
#include "storage/prep/synthetic_graph.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;

std::string MakeGraph(const std::string& name, int64_t nodes, FeatureDtype dtype, int64_t dim = 16) {
  const std::string dir = MakeTempDir(name) + "/g";
  SyntheticGraphConfig c;
  c.num_nodes = nodes;
  c.avg_degree = 8;
  c.feature_dim = dim;
  c.num_classes = 6;
  c.seed = 17;
  c.feature_dtype = dtype;
  c.train_fraction = 0.3;
  c.valid_fraction = 0.1;
  c.test_fraction = 0.1;
  auto s = GenerateSyntheticDataset(c, dir, true);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return dir;
}

TrainOptions SmallRun(const std::string& dir) {
  TrainOptions o;
  o.dataset_dir = dir;
  o.hidden = 16;
  o.fanouts = {5, 5};
  o.batch_size = 64;
  o.superbatch = 4;
  o.epochs = 1;
  o.seed = 3;
  o.num_threads = 2;
  o.direct_io = false;
  o.use_cuda = false;
  o.memory_budget_bytes = 32 << 20;
  o.quiet = true;
  o.show_progress = false;
  return o;
}

// ---- memory budget --------------------------------------------------------------

TEST(MemoryBudgetTest, SplitStaysWithinBudgetAndHonoursOverrides) {
  MemoryBudgetRequest r;
  r.budget_bytes = 256 << 20;
  r.num_nodes = 1000003;
  r.feature_dim = 100;
  r.feature_row_bytes = 400;
  r.batch_size = 100;
  r.fanouts = {10, 10};
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NEAR(s->estimated_batch_rows, 11100, 100);  // 11100 draws from 1M nodes: few repeats
  EXPECT_EQ(s->staging_bytes, s->estimated_batch_rows * 2 * 400);  // float32: no raw buffer
  EXPECT_EQ(s->table_bytes, 8 * (1000003 + 1) + 4 * 1000003);
  EXPECT_LE(s->table_bytes + s->staging_bytes + s->trace_bytes + s->ncache_bytes + s->fcache_bytes, r.budget_bytes);
  EXPECT_GT(s->fcache_rows, 0);
  EXPECT_EQ(s->fcache_bytes, s->fcache_rows * 400);
  EXPECT_NE(s->ToString().find("feature cache"), std::string::npos);

  r.fcache_budget_bytes = 40000;  // exactly 100 rows
  r.ncache_budget_bytes = 0;
  s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->fcache_rows, 100);
  EXPECT_EQ(s->ncache_bytes, 0);

  r.fcache_budget_bytes = int64_t{1} << 40;  // more than the budget
  EXPECT_EQ(SplitMemoryBudget(r).status().code(), StatusCode::kResourceExhausted);

  // Tables fit but the staging of a huge batch does not: refused, naming the staging.
  r.fcache_budget_bytes = -1;
  r.batch_size = 1000;
  r.fanouts = {10, 10, 10};
  s = SplitMemoryBudget(r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("staging"), std::string::npos) << s.status().message();
}

TEST(MemoryBudgetTest, CacheSplitSharesTheCacheMemory) {
  MemoryBudgetRequest r;
  r.budget_bytes = 256 << 20;
  r.num_nodes = 1000003;  // 400 MB of features: more than the caches can hold
  r.feature_dim = 100;
  r.feature_row_bytes = 400;
  r.batch_size = 100;
  r.fanouts = {10, 10};
  r.ncache_share = 0;
  auto none = SplitMemoryBudget(r);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->ncache_bytes, 0);
  const int64_t caches = none->fcache_bytes + 400;  // fcache_bytes is rounded down to rows
  for (double share : {0.25, 0.5, 0.75}) {
    r.ncache_share = share;
    auto s = SplitMemoryBudget(r);
    ASSERT_TRUE(s.ok());
    EXPECT_NEAR(static_cast<double>(s->ncache_bytes), share * none->fcache_bytes, 401) << share;
    EXPECT_LE(s->ncache_bytes + s->fcache_bytes, caches) << share;
    EXPECT_GT(s->ncache_bytes + s->fcache_bytes, caches - 800) << share;
  }
  r.ncache_share = 1;
  auto all = SplitMemoryBudget(r);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->fcache_rows, 0);
  // A share too small for the neighbor cache's 8 B/node table goes to the features.
  r.ncache_share = 0.001;
  auto tiny = SplitMemoryBudget(r);
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->ncache_bytes, 0);
  EXPECT_EQ(tiny->fcache_rows, none->fcache_rows);
}

TEST(MemoryBudgetTest, RefusesBudgetBelowPerNodeTables) {
  MemoryBudgetRequest r;
  r.budget_bytes = 10 << 20;
  r.num_nodes = 1 << 20;  // 12 MiB of tables
  r.feature_dim = 8;
  r.feature_row_bytes = 32;
  auto s = SplitMemoryBudget(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("per-node tables"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("--memory-budget"), std::string::npos);
}

TEST(MemoryBudgetTest, BatchEstimateIsCappedByNodes) {
  EXPECT_EQ(EstimateBatchRows(int64_t{1} << 40, 10, {2, 3}), 10 + 20 + 60);
  EXPECT_EQ(EstimateBatchRows(50, 10, {10, 10}), 50);  // 1110 draws from 50 nodes
  EXPECT_EQ(EstimateBatchRows(0, 10, {10}), 0);
  // 111000 draws from 100000 nodes: 100000 (1 - e^-1.11) = 67044 distinct.
  EXPECT_NEAR(EstimateBatchRows(100000, 1000, {10, 10}), 67044, 2);
  EXPECT_EQ(EstimateBatchRows(100000, 1000, {}), 1000);
}

// ---- cache policies -------------------------------------------------------------

// Brute-force LRU over whole batches: the K most recent of C ∪ ids, recency = (batch,
// position in the batch) — cache/policies.h's definition.
std::set<int64_t> BruteLru(std::map<int64_t, std::pair<int64_t, int64_t>>& last_use,
                           const std::vector<int64_t>& ids, int64_t batch, int64_t k) {
  for (size_t p = 0; p < ids.size(); ++p) last_use[ids[p]] = {batch, static_cast<int64_t>(p)};
  std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> order;
  for (auto& [v, t] : last_use) order.push_back({t, v});
  std::sort(order.rbegin(), order.rend());
  std::set<int64_t> keep;
  for (int64_t i = 0; i < std::min<int64_t>(k, static_cast<int64_t>(order.size())); ++i) keep.insert(order[i].second);
  for (auto it = last_use.begin(); it != last_use.end();) it = keep.count(it->first) ? std::next(it) : last_use.erase(it);
  return keep;
}

// The executor's adapter over cache/policies.h's LRU: the first superbatch installs the
// first K distinct nodes (fill), then the carried state and the changesets follow a
// brute-force LRU across superbatches and apply cleanly to a FeatureCache.
TEST(CachePolicyTest, LruChangesetsMatchBruteForceAndApplyCleanly) {
  const uint64_t seed = 20240611;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int64_t capacity : {1, 7, 40}) {
    PolicyOptions po;
    po.capacity_rows = capacity;
    auto made = MakeCachePolicy(PolicyKind::kLru, po);
    ASSERT_TRUE(made.ok());
    SuperbatchCachePlanner policy(std::move(made).value());
    FeatureCacheOptions co;
    co.num_nodes = 100;
    co.capacity_rows = capacity;
    co.row_bytes = 0;
    auto cache = FeatureCache::Create(co);
    ASSERT_TRUE(cache.ok());
    std::map<int64_t, std::pair<int64_t, int64_t>> last_use;
    int64_t batch_no = 0;
    for (int sb = 0; sb < 3; ++sb) {
      SuperbatchTrace trace;
      for (int b = 0; b < 5; ++b) {
        BatchTrace bt;
        std::set<int64_t> seen;
        const int n = static_cast<int>(rng() % 25);  // includes empty batches
        while (static_cast<int>(seen.size()) < n) {
          const int64_t v = static_cast<int64_t>(rng() % 100);
          if (seen.insert(v).second) bt.node_ids.push_back(v);
        }
        trace.batches.push_back(bt);
      }
      auto plan = policy.Plan(trace);
      ASSERT_TRUE(plan.ok());
      ASSERT_TRUE(plan->changesets);
      if (sb == 0) {
        // Initial fill: the first K distinct nodes of the superbatch, first-seen = least recent.
        std::vector<int64_t> expected_fill;
        for (const BatchTrace& bt : trace.batches) {
          for (int64_t v : bt.node_ids) {
            if (static_cast<int64_t>(expected_fill.size()) < capacity &&
                std::find(expected_fill.begin(), expected_fill.end(), v) == expected_fill.end()) {
              expected_fill.push_back(v);
            }
          }
        }
        expected_fill.resize(static_cast<size_t>(capacity), kFreeSlot);
        ASSERT_EQ(plan->fill_slots, expected_fill);
        for (size_t s = 0; s < expected_fill.size(); ++s) {
          if (expected_fill[s] == kFreeSlot) continue;
          cache->Install(static_cast<int32_t>(s), expected_fill[s], nullptr);
          last_use[expected_fill[s]] = {0, static_cast<int64_t>(s)};
        }
      } else {
        EXPECT_TRUE(plan->fill_slots.empty());
      }
      for (size_t i = 0; i < trace.batches.size(); ++i) {
        const auto& ids = trace.batches[i].node_ids;
        auto cs = plan->changesets->Get(static_cast<int64_t>(i));
        ASSERT_TRUE(cs.ok());
        int64_t misses = 0;
        for (int64_t v : ids) misses += cache->SlotOf(v) < 0;
        EXPECT_EQ(cs->num_misses, misses);
        ASSERT_NO_THROW(cache->Apply(*cs, ids.data(), static_cast<int64_t>(ids.size()), nullptr));
        const std::set<int64_t> expected = BruteLru(last_use, ids, ++batch_no, capacity);
        std::set<int64_t> actual;
        for (int64_t v : cache->SlotContents()) if (v != kFreeSlot) actual.insert(v);
        EXPECT_EQ(actual, expected) << "capacity " << capacity << " batch " << batch_no;
      }
      // The adapter's carried state is the cache's content.
      EXPECT_EQ(policy.slots(), cache->SlotContents());
    }
  }
}

TEST(CachePolicyTest, StaticPoliciesFillTopKOnceAndNeverChange) {
  PolicyOptions po;
  po.capacity_rows = 3;
  po.ranking = RankNodesByScore({5, 9, 9, 1, 7}, 3);
  EXPECT_EQ(po.ranking, (std::vector<int64_t>{1, 2, 4}));  // by score, ties by lower id
  EXPECT_EQ(RankNodesByScore({5, 9}, 10), (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(RankNodesByScore({}, 3).empty());
  EXPECT_FALSE(ParsePolicyKind("belady-ish").ok());
  auto made = MakeCachePolicy(PolicyKind::kStaticDegree, po);
  ASSERT_TRUE(made.ok());
  SuperbatchCachePlanner policy(std::move(made).value());
  SuperbatchTrace trace;
  trace.batches.resize(2);
  trace.batches[0].node_ids = {0, 3};
  auto first = policy.Plan(trace);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->fill_slots, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_FALSE(first->changesets);
  auto second = policy.Plan(trace);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->fill_slots.empty());
  EXPECT_EQ(policy.slots(), (std::vector<int64_t>{1, 2, 4}));
}

// ---- the rows the model receives --------------------------------------------------

// Independent oracle: features.bin read with plain file I/O, widened with float16.h.
std::vector<float> ReadAllFeatures(const std::string& dir, int64_t nodes, int64_t dim, FeatureDtype dtype) {
  std::string bytes = ReadWholeFile(dir + "/features.bin").value();
  std::vector<float> out(static_cast<size_t>(nodes * dim));
  for (int64_t i = 0; i < nodes * dim; ++i) {
    if (dtype == FeatureDtype::kFloat32) {
      std::memcpy(&out[i], bytes.data() + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out[i] = HalfToFloat(h);
    }
  }
  return out;
}

struct HookCase {
  PolicyKind policy;
  bool spill;
  FeatureDtype dtype;
  PipelineKind pipeline = PipelineKind::kSuperbatch;
  bool mmap = false;  // features and indices through the page cache (storage/io/mmap_reader.h)
};

std::string HookCaseName(const HookCase& c) {
  std::string name = PolicyKindName(c.policy);
  for (char& ch : name) if (ch == '-') ch = '_';
  return name + (c.spill ? "_spill" : "") + (c.dtype == FeatureDtype::kFloat16 ? "_f16" : "") +
         (c.pipeline == PipelineKind::kConventional ? "_conventional" : "") + (c.mmap ? "_mmap" : "");
}

class GatheredRowsTest : public ::testing::TestWithParam<HookCase> {};

TEST_P(GatheredRowsTest, RowsAreByteIdenticalToFeaturesBin) {
  const HookCase c = GetParam();
  const int64_t nodes = 3001, dim = 13;
  const std::string dir = MakeGraph("hook_" + HookCaseName(c), nodes, c.dtype, dim);
  const std::vector<float> oracle = ReadAllFeatures(dir, nodes, dim, c.dtype);
  TrainOptions o = SmallRun(dir);
  o.no_train = true;
  o.epochs = 2;
  o.cache_policy = c.policy;
  o.fcache_budget_bytes = 150 * dim * (c.dtype == FeatureDtype::kFloat32 ? 4 : 2);  // 150 rows: many evictions
  o.ncache_budget_bytes = 0;
  if (c.spill) o.trace_budget_bytes = 0;  // every trace and changeset goes through runtime files
  o.overlap = !c.spill;                   // both pipeline modes
  o.pipeline = c.pipeline;
  o.mmap_io = c.mmap;
  int64_t batches = 0, rows_checked = 0, mismatches = 0;
  std::map<int64_t, int64_t> rows_by_epoch;
  o.batch_hook = [&](const BatchTrace& batch, const float* rows, int64_t num_rows, int64_t feature_dim) {
    ++batches;
    ASSERT_EQ(feature_dim, dim);
    ASSERT_EQ(num_rows, static_cast<int64_t>(batch.node_ids.size()));
    for (int64_t r = 0; r < num_rows; ++r) {
      const int64_t v = batch.node_ids[static_cast<size_t>(r)];
      if (std::memcmp(rows + r * dim, oracle.data() + v * dim, dim * sizeof(float)) != 0) ++mismatches;
      ++rows_checked;
    }
    rows_by_epoch[batch.epoch] += num_rows;
  };
  auto summary = RunTraining(o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(batches, 8);
  EXPECT_EQ(summary->split.fcache_rows, 150);
  ASSERT_EQ(summary->epochs.size(), 2u);
  const GatherStats& g = summary->epochs[0].gather;
  EXPECT_EQ(g.rows, rows_by_epoch[0]);
  EXPECT_EQ(summary->epochs[1].gather.rows, rows_by_epoch[1]);
  if (c.policy == PolicyKind::kNone) {
    EXPECT_EQ(g.hits, 0);
  } else {
    EXPECT_GT(g.hits, 0);
    EXPECT_LT(g.hits, g.rows);  // the cache is much smaller than the graph
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllPolicies, GatheredRowsTest,
    ::testing::Values(HookCase{PolicyKind::kBelady, false, FeatureDtype::kFloat32},
                      HookCase{PolicyKind::kBelady, true, FeatureDtype::kFloat32},
                      HookCase{PolicyKind::kBelady, true, FeatureDtype::kFloat16},
                      HookCase{PolicyKind::kStaticDegree, false, FeatureDtype::kFloat32},
                      HookCase{PolicyKind::kPresc, true, FeatureDtype::kFloat32},
                      HookCase{PolicyKind::kLru, false, FeatureDtype::kFloat32},
                      HookCase{PolicyKind::kLru, true, FeatureDtype::kFloat16},
                      HookCase{PolicyKind::kNone, false, FeatureDtype::kFloat32},
                      // The conventional pipeline (pyg+ / ali+pg baselines), page cache or direct.
                      HookCase{PolicyKind::kNone, false, FeatureDtype::kFloat32, PipelineKind::kConventional, true},
                      HookCase{PolicyKind::kStaticDegree, false, FeatureDtype::kFloat16, PipelineKind::kConventional,
                               true},
                      HookCase{PolicyKind::kLru, true, FeatureDtype::kFloat32, PipelineKind::kConventional, false},
                      HookCase{PolicyKind::kBelady, false, FeatureDtype::kFloat32, PipelineKind::kSuperbatch, true}),
    [](const auto& info) { return HookCaseName(info.param); });

TEST(DataPathTest, BeladyMissesNoMoreThanOtherPolicies) {
  const std::string dir = MakeGraph("misses", 3001, FeatureDtype::kFloat32, 8);
  std::map<PolicyKind, int64_t> misses;
  for (auto policy : {PolicyKind::kBelady, PolicyKind::kStaticDegree,
                      PolicyKind::kLru, PolicyKind::kNone}) {
    TrainOptions o = SmallRun(dir);
    o.no_train = true;
    o.cache_policy = policy;
    o.fcache_budget_bytes = 300 * 8 * 4;
    o.ncache_budget_bytes = 0;
    auto s = RunTraining(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    misses[policy] = s->epochs[0].gather.misses;
  }
  EXPECT_LE(misses[PolicyKind::kBelady], misses[PolicyKind::kStaticDegree]);
  EXPECT_LE(misses[PolicyKind::kBelady], misses[PolicyKind::kLru]);
  EXPECT_LT(misses[PolicyKind::kBelady], misses[PolicyKind::kNone]);
}

// The split sizes staging from pilot batches sampled before the run: every real batch
// fits (the largest pilot batch x kPilotMargin), and the measurement is far tighter than
// the uniform-draw estimate on a power-law graph with many low-degree nodes.
TEST(DataPathTest, PilotBatchesSizeTheStaging) {
  const std::string dir = MakeGraph("pilot", 20000, FeatureDtype::kFloat32, 8);
  TrainOptions o = SmallRun(dir);
  o.no_train = true;
  o.fanouts = {10, 10, 10};
  o.batch_size = 100;
  o.epochs = 2;
  int64_t largest = 0;
  o.batch_hook = [&](const BatchTrace& b, const float*, int64_t, int64_t) {
    largest = std::max<int64_t>(largest, static_cast<int64_t>(b.node_ids.size()));
  };
  auto s = RunTraining(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->split.measured_batches, 2);
  ASSERT_GT(largest, 0);
  EXPECT_GE(s->split.estimated_batch_rows, largest);
  EXPECT_LE(s->split.estimated_batch_rows, 2 * largest);
  EXPECT_LT(s->split.estimated_batch_rows, EstimateBatchRows(20000, 100, {10, 10, 10}));
}

// The conventional pipeline trains on exactly the batches of the superbatch pipeline
// (same sampler, same seeds): only the lookahead and the cache policies differ.
TEST(DataPathTest, ConventionalPipelineSeesTheSameBatches) {
  const std::string dir = MakeGraph("conventional", 2501, FeatureDtype::kFloat32, 8);
  auto batches_of = [&](PipelineKind pipeline, int64_t prefetch) {
    TrainOptions o = SmallRun(dir);
    o.no_train = true;
    o.epochs = 2;
    o.pipeline = pipeline;
    o.prefetch_batches = prefetch;
    o.cache_policy = PolicyKind::kStaticDegree;
    std::vector<std::vector<int64_t>> seen;
    o.batch_hook = [&](const BatchTrace& b, const float*, int64_t, int64_t) {
      std::vector<int64_t> ids = b.node_ids;
      ids.push_back(b.epoch * 100000 + b.batch_index);
      seen.push_back(std::move(ids));
    };
    auto s = RunTraining(o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return seen;
  };
  const auto superbatch = batches_of(PipelineKind::kSuperbatch, 2);
  ASSERT_GT(superbatch.size(), 10u);
  EXPECT_EQ(batches_of(PipelineKind::kConventional, 1), superbatch);
  EXPECT_EQ(batches_of(PipelineKind::kConventional, 3), superbatch);

  TrainOptions o = SmallRun(dir);
  o.pipeline = PipelineKind::kConventional;
  auto refused = RunTraining(o);  // belady (the default) needs the lookahead
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("belady"), std::string::npos);
}

TEST(MmapReaderTest, ReadsMatchTheFileAndOutOfRangeIsAnError) {
  const std::string dir = MakeTempDir("mmap");
  const std::string path = dir + "/data.bin";
  std::string bytes(4111 * 47, '\0');
  std::mt19937_64 rng(7);
  for (char& c : bytes) c = static_cast<char>(rng());
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  auto reader = OpenMmapReader(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->file_size_bytes(), static_cast<int64_t>(bytes.size()));
  std::vector<std::string> out = {std::string(47, 'x'), std::string(1, 'x'), std::string(0, 'x'),
                                  std::string(4096, 'x')};
  std::vector<ReadRequest> requests = {{47 * 4110, 47, out[0].data()},  // the last row
                                       {0, 1, out[1].data()},
                                       {static_cast<int64_t>(bytes.size()), 0, out[2].data()},
                                       {1000, 4096, out[3].data()}};
  ReadStats stats;
  ASSERT_TRUE((*reader)->ReadBatch(requests, &stats).ok());
  EXPECT_EQ(out[0], bytes.substr(47 * 4110, 47));
  EXPECT_EQ(out[1], bytes.substr(0, 1));
  EXPECT_EQ(out[3], bytes.substr(1000, 4096));
  EXPECT_EQ(stats.requests, 4);
  EXPECT_GE(stats.device_reads, 0);
  std::vector<ReadRequest> beyond = {{static_cast<int64_t>(bytes.size()) - 10, 11, out[0].data()}};
  Status st = (*reader)->ReadBatch(beyond);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnexpectedEof);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(std::to_string(bytes.size() - 10)), std::string::npos) << st.message();
  EXPECT_FALSE(OpenMmapReader(dir + "/missing.bin").ok());
}

// ---- training runs ---------------------------------------------------------------

TEST(TrainLoopTest, ResumeReproducesTheUninterruptedLosses) {
  const std::string dir = MakeGraph("resume", 2000, FeatureDtype::kFloat32);
  const std::string ckpt = MakeTempDir("resume_ckpt");
  TrainOptions base = SmallRun(dir);
  base.epochs = 2;
  base.fcache_budget_bytes = 200 * 16 * 4;
  base.overlap = true;
  std::vector<std::pair<int64_t, double>> full, resumed;
  TrainOptions a = base;
  a.step_hook = [&](int64_t e, int64_t b, double loss) { full.push_back({e * 1000 + b, loss}); };
  auto ra = RunTraining(a);
  ASSERT_TRUE(ra.ok()) << ra.status().message();
  ASSERT_GE(full.size(), 10u);

  TrainOptions b = base;
  b.checkpoint_dir = ckpt;
  b.checkpoint_every = 1;
  b.overlap = false;  // the pipeline mode must not change the losses
  b.stop_after_superbatches = 4;  // 3 superbatches per epoch: stops inside epoch 1
  b.step_hook = [&](int64_t e, int64_t bi, double loss) { resumed.push_back({e * 1000 + bi, loss}); };
  auto rb = RunTraining(b);
  ASSERT_TRUE(rb.ok()) << rb.status().message();
  EXPECT_TRUE(rb->stopped_early);
  const size_t first_part = resumed.size();
  ASSERT_LT(first_part, full.size());
  ASSERT_GT(first_part, full.size() / 2);  // the stop is inside the second epoch

  TrainOptions c = base;
  c.checkpoint_dir = ckpt;
  c.resume = true;
  c.step_hook = b.step_hook;
  auto rc = RunTraining(c);
  ASSERT_TRUE(rc.ok()) << rc.status().message();
  ASSERT_EQ(resumed.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(resumed[i].first, full[i].first) << i;
    EXPECT_EQ(resumed[i].second, full[i].second) << "step " << i << " (resumed after " << first_part << ")";
  }
  EXPECT_EQ(rc->test_accuracy, ra->test_accuracy);

  // A damaged checkpoint is refused with the path in the message.
  {
    std::string bytes = ReadWholeFile(ckpt + "/checkpoint.ckpt").value();
    FILE* f = std::fopen((ckpt + "/checkpoint.ckpt").c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size() / 2, f);
    std::fclose(f);
    auto rd = RunTraining(c);
    ASSERT_FALSE(rd.ok());
    EXPECT_NE(rd.status().message().find("checkpoint.ckpt"), std::string::npos) << rd.status().message();
  }
}

TEST(TrainLoopTest, GraphSageBeatsFeaturesOnlyBaseline) {
  const std::string dir = MakeGraph("accuracy", 4000, FeatureDtype::kFloat32, 24);
  auto run = [&](ModelKind kind) {
    TrainOptions o = SmallRun(dir);
    o.model = kind;
    o.hidden = 32;
    o.fanouts = {10, 10};
    o.epochs = 3;
    o.learning_rate = 0.01;
    o.dropout = 0.2;
    auto s = RunTraining(o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? s->test_accuracy : -1.0;
  };
  const double sage = run(ModelKind::kSage);
  const double mlp = run(ModelKind::kMlp);
  std::printf("test accuracy: sage %.4f, mlp %.4f\n", sage, mlp);
  EXPECT_GT(sage, 0.75);
  EXPECT_GT(sage, mlp + 0.2);
}

TEST(TrainLoopTest, PredictionMatchesTrainingEvaluationPath) {
  const std::string dir = MakeGraph("predict", 2000, FeatureDtype::kFloat16);
  const std::string out = MakeTempDir("predict_out");
  TrainOptions o = SmallRun(dir);
  o.epochs = 2;
  o.learning_rate = 0.01;
  o.save_model_path = out + "/model.pt";
  auto s = RunTraining(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  PredictOptions p;
  p.dataset_dir = dir;
  p.model_path = o.save_model_path;
  p.fanouts = o.fanouts;
  p.batch_size = o.batch_size;
  p.superbatch = o.superbatch;
  p.seed = o.seed;
  p.direct_io = false;
  p.use_cuda = false;
  p.memory_budget_bytes = 32 << 20;
  p.want_embeddings = true;
  p.show_progress = false;
  auto r = RunPrediction(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Same sampler, same seed, same best model: the accuracy on the test split is the one
  // training reported.
  EXPECT_DOUBLE_EQ(r->accuracy, s->test_accuracy);
  EXPECT_EQ(r->embeddings.size(), r->nodes.size() * 16);
  // Duplicated and reordered node ids get the same answers as in the full run.
  PredictOptions q = p;
  q.nodes = {r->nodes[3], r->nodes[0], r->nodes[3]};
  auto r2 = RunPrediction(q);
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(r2->classes.size(), 3u);
  EXPECT_EQ(r2->classes[0], r2->classes[2]);
  q.nodes = {2000};
  EXPECT_EQ(RunPrediction(q).status().code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(WriteNpy(out + "/ids.npy", "<i8", {static_cast<int64_t>(r->nodes.size())}, r->nodes.data()).ok());
  auto ids_file = NpyFile::Open(out + "/ids.npy");
  ASSERT_TRUE(ids_file.ok());
  std::vector<int64_t> ids(r->nodes.size());
  ASSERT_TRUE(ids_file->ReadAsInt64(0, static_cast<int64_t>(ids.size()), ids.data()).ok());
  EXPECT_EQ(ids, r->nodes);
  ASSERT_TRUE(WriteNpy(out + "/emb.npy", "<f4", {static_cast<int64_t>(r->nodes.size()), 16}, r->embeddings.data()).ok());
  const std::string npy = ReadWholeFile(out + "/emb.npy").value();
  EXPECT_EQ(npy.size() % 16, 0u);  // header padded to 64, floats after
  EXPECT_NE(npy.find("'shape': (" + std::to_string(r->nodes.size()) + ", 16)"), std::string::npos);
}

// CUDA path: the GPU planner's changesets drive the same cache to the same misses and
// rows as the CPU planner, and training on the device (pinned staging, async copies)
// follows the CPU losses closely.
TEST(TrainLoopTest, GpuPlannerAndCudaTrainingMatchTheCpu) {
  if (kernels::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const std::string dir = MakeGraph("gpu", 3001, FeatureDtype::kFloat32, 8);
  auto data_run = [&](PlannerDevice device, std::vector<int64_t>* misses, uint64_t* digest) {
    TrainOptions o = SmallRun(dir);
    o.no_train = true;
    o.epochs = 2;
    o.planner = device;
    o.fcache_budget_bytes = 200 * 8 * 4;
    o.batch_hook = [&](const BatchTrace& b, const float* rows, int64_t n, int64_t dim) {
      for (int64_t i = 0; i < n * dim; ++i) {
        uint32_t bits;
        std::memcpy(&bits, rows + i, 4);
        *digest = (*digest ^ bits) * 0x100000001b3ULL;
      }
      (void)b;
    };
    auto s = RunTraining(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    for (const auto& e : s->epochs) misses->push_back(e.gather.misses);
  };
  std::vector<int64_t> cpu_misses, gpu_misses;
  uint64_t cpu_digest = 0, gpu_digest = 0;
  data_run(PlannerDevice::kCpu, &cpu_misses, &cpu_digest);
  data_run(PlannerDevice::kGpu, &gpu_misses, &gpu_digest);
  EXPECT_EQ(cpu_misses, gpu_misses);
  EXPECT_EQ(cpu_digest, gpu_digest);

  std::vector<double> cpu_losses, gpu_losses;
  for (bool cuda : {false, true}) {
    TrainOptions o = SmallRun(dir);
    o.use_cuda = cuda;
    o.dropout = 0;
    o.step_hook = [&](int64_t, int64_t, double loss) { (cuda ? gpu_losses : cpu_losses).push_back(loss); };
    auto s = RunTraining(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
  }
  ASSERT_EQ(cpu_losses.size(), gpu_losses.size());
  for (size_t i = 0; i < cpu_losses.size(); ++i) EXPECT_NEAR(cpu_losses[i], gpu_losses[i], 2e-3 * (1 + i));
}

TEST(TrainLoopTest, ErrorsNameTheProblem) {
  const std::string dir = MakeGraph("errors", 500, FeatureDtype::kFloat32);
  TrainOptions o = SmallRun(dir);
  o.memory_budget_bytes = 4096;
  auto s = RunTraining(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  o = SmallRun(dir);
  o.resume = true;
  o.checkpoint_dir = MakeTempDir("errors_ckpt");
  s = RunTraining(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no checkpoint"), std::string::npos);
  o = SmallRun(MakeTempDir("errors_missing"));
  EXPECT_FALSE(RunTraining(o).ok());
}

}  // namespace
}  // namespace seer
