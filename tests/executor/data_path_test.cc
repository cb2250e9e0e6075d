// The executor's data path on generated graphs: the feature rows handed to the model are
// byte-identical to features.bin under every cache policy, pipeline and reader; Belady
// misses least; pilot batches size the staging; the conventional pipeline sees the
// superbatch pipeline's batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "executor/data_path.h"
#include "executor/memory_budget.h"
#include "executor/train_loop.h"
#include "cache/neighbor_cache.h"
#include "training_fixture.h"

namespace seer {
namespace {

using seer::testing::MakeSyntheticGraph;
using seer::testing::OpenDataPath;
using seer::testing::ReadAllFeatures;
using seer::testing::SmallRun;

struct HookCase {
  PolicyKind policy;
  bool spill;
  FeatureDtype dtype;
  PipelineKind pipeline = PipelineKind::kSuperbatch;
  bool mmap = false;  // features and indices through the page cache (storage/io/mmap_reader.h)
  int64_t read_block = 0;  // --read-block (0 = per-row reads)
};

std::string HookCaseName(const HookCase& c) {
  std::string name = PolicyKindName(c.policy);
  for (char& ch : name) if (ch == '-') ch = '_';
  return name + (c.spill ? "_spill" : "") + (c.dtype == FeatureDtype::kFloat16 ? "_f16" : "") +
         (c.pipeline == PipelineKind::kConventional ? "_conventional" : "") + (c.mmap ? "_mmap" : "") +
         (c.read_block > 0 ? "_block" + std::to_string(c.read_block) : "");
}

class GatheredRowsTest : public ::testing::TestWithParam<HookCase> {};

TEST_P(GatheredRowsTest, RowsAreByteIdenticalToFeaturesBin) {
  const HookCase c = GetParam();
  const int64_t nodes = 3001, dim = 13;
  const std::string dir = MakeSyntheticGraph("hook_" + HookCaseName(c), nodes, c.dtype, dim);
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
  if (c.mmap) o.io = DataIoMode::kMmap;
  o.read_block_bytes = c.read_block;
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
  // --feature-cache none never reads the cache, so the split gives it nothing.
  EXPECT_EQ(summary->split.fcache_rows, c.policy == PolicyKind::kNone ? 0 : 150);
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
  // Block reads: every miss's blocks, and belady admits free rows from them (13 floats =
  // 52 B rows straddle 64 B and 4 KiB blocks; the rows delivered are checked above).
  if (c.read_block > 0) {
    EXPECT_GE(g.block_reads, 1);
    EXPECT_EQ(g.block_bytes, g.block_reads * c.read_block);
    if (c.policy == PolicyKind::kBelady) {
      EXPECT_GT(g.block_admits, 0);
    } else {
      EXPECT_EQ(g.block_admits, 0);
    }
  } else {
    EXPECT_EQ(g.block_admits, 0);
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
                      HookCase{PolicyKind::kBelady, false, FeatureDtype::kFloat32, PipelineKind::kSuperbatch, true},
                      // Block-granular reads (--read-block): 4 KiB and 64 B blocks, spilled changesets.
                      HookCase{PolicyKind::kBelady, false, FeatureDtype::kFloat32, PipelineKind::kSuperbatch, false, 4096},
                      HookCase{PolicyKind::kBelady, true, FeatureDtype::kFloat16, PipelineKind::kSuperbatch, false, 64},
                      HookCase{PolicyKind::kBelady, true, FeatureDtype::kFloat32, PipelineKind::kSuperbatch, true, 128},
                      HookCase{PolicyKind::kLru, false, FeatureDtype::kFloat32, PipelineKind::kSuperbatch, false, 4096}),
    [](const auto& info) { return HookCaseName(info.param); });

// --read-block: a power of two, and not with the device tier (which plans per-row reads).
TEST(DataPathTest, ReadBlockRefusesBadSizesAndTheDeviceTier) {
  const std::string dir = MakeSyntheticGraph("read_block_refusals", 1001, FeatureDtype::kFloat32, 8);
  TrainOptions o = SmallRun(dir);
  o.no_train = true;
  o.read_block_bytes = 3000;
  auto odd = RunTraining(o);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("--read-block 3000"), std::string::npos) << odd.status().message();
  o.read_block_bytes = 4096;
  o.device_cache_bytes = 64 * 8 * 4;  // 64 float32 rows: a CPU-tensor tier without a device
  auto tiered = RunTraining(o);
  ASSERT_FALSE(tiered.ok());
  EXPECT_NE(tiered.status().message().find("--device-cache"), std::string::npos) << tiered.status().message();
}

// Training on CUDA pins the feature cache's slots; without a device (or when pinning
// fails) the allocator falls back to ordinary memory and the data path is the same.
TEST(DataPathTest, PinnedFeatureCacheFallsBackWithoutADevice) {
  const std::string dir = MakeSyntheticGraph("pinned", 2001, FeatureDtype::kFloat32, 8);
  TrainOptions o = SmallRun(dir);
  auto plain = OpenDataPath(o, /*pin=*/false);
  auto pinned = OpenDataPath(o, /*pin=*/true);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(pinned, nullptr);
  EXPECT_GT(pinned->split().fcache_rows, 0);
  EXPECT_EQ(pinned->split().fcache_rows, plain->split().fcache_rows);
}

TEST(DataPathTest, BeladyMissesNoMoreThanOtherPolicies) {
  const std::string dir = MakeSyntheticGraph("misses", 3001, FeatureDtype::kFloat32, 8);
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
  const std::string dir = MakeSyntheticGraph("pilot", 20000, FeatureDtype::kFloat32, 8);
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
  const std::string dir = MakeSyntheticGraph("conventional", 2501, FeatureDtype::kFloat32, 8);
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

// With room for every row, Belady misses each row at most once per run (cold misses):
// rows with no further use inside the superbatch are admitted into free capacity (the
// tie rule) instead of being dropped and read again in a later superbatch.
TEST(DataPathTest, BeladyWithRoomForEveryRowMissesOnlyColdRows) {
  const int64_t nodes = 3001;
  const std::string dir = MakeSyntheticGraph("cold", nodes, FeatureDtype::kFloat32, 8);
  TrainOptions o = SmallRun(dir);
  o.no_train = true;
  o.epochs = 3;
  o.superbatch = 3;
  o.fcache_budget_bytes = nodes * 8 * 4;
  o.ncache_budget_bytes = 0;
  std::vector<char> seen(static_cast<size_t>(nodes), 0);
  int64_t distinct = 0;
  o.batch_hook = [&](const BatchTrace& b, const float*, int64_t, int64_t) {
    for (int64_t v : b.node_ids) distinct += seen[static_cast<size_t>(v)]++ == 0;
  };
  auto s = RunTraining(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->split.fcache_rows, nodes);
  int64_t read = 0;
  for (const EpochReport& e : s->epochs) read += e.gather.misses + e.gather.fill_rows;
  EXPECT_GT(distinct, nodes / 2);
  EXPECT_LE(read, nodes) << "a row was read twice";
  EXPECT_GE(read, distinct);
  EXPECT_EQ(s->epochs[1].gather.misses, 0);
  EXPECT_EQ(s->epochs[2].gather.misses, 0);
}

// The neighbor cache in use is what the split reports: a prebuilt DIR/ncache smaller than
// the share is not used silently (a cache for the share is built), a prebuilt one that
// holds every list is used, and its unused share goes to the feature cache.
TEST(DataPathTest, SplitReportsTheNeighborCacheInUse) {
  const std::string dir = MakeSyntheticGraph("ncache_in_use", 4001, FeatureDtype::kFloat32, 8);
  auto dataset = Dataset::Open(dir);
  ASSERT_TRUE(dataset.ok());
  auto indptr = dataset->LoadIndptr();
  ASSERT_TRUE(indptr.ok());
  const DatasetManifest& m = dataset->manifest();
  const int64_t full = NeighborCacheFullBytes(m.num_nodes, m.num_edges, m.index_bytes());
  TrainOptions o = SmallRun(dir);
  o.memory_budget_bytes = 64 << 20;  // the share (1/4) holds the whole topology
  o.runtime_bytes = 0;  // a data-path budget: this test process is no runtime to measure
  // A small prebuilt cache: not used, a full one is built for the share.
  auto small = NeighborCache::Build(*dataset, *indptr, NeighborCache::TableBytes(m.num_nodes) + full / 10);
  ASSERT_TRUE(small.ok());
  ASSERT_LT(small->stats().edges_cached, m.num_edges);
  ASSERT_TRUE(small->Save(NeighborCache::DefaultDir(*dataset), /*force=*/true).ok());
  auto data = seer::testing::OpenDataPath(o);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->split().ncache_bytes, full);
  EXPECT_DOUBLE_EQ(data->split().ncache_edge_fraction, 1.0);
  EXPECT_NE(data->split().ncache_source.find("holds less than the share"), std::string::npos)
      << data->split().ToString();
  EXPECT_NE(data->split().ToString().find(" in use (built in memory"), std::string::npos) << data->split().ToString();
  // A prebuilt cache of every list: used, and reported as such.
  auto all = NeighborCache::Build(*dataset, *indptr, full);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->stats().edges_cached, m.num_edges);
  ASSERT_TRUE(all->Save(NeighborCache::DefaultDir(*dataset), /*force=*/true).ok());
  data = seer::testing::OpenDataPath(o);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->split().ncache_bytes, all->stats().bytes);
  EXPECT_EQ(data->split().ncache_source, "prebuilt " + NeighborCache::DefaultDir(*dataset));
  // Its share beyond the cache went to the features: every byte of the caches is in use.
  MemoryBudgetSplit by_hand;
  by_hand.ncache_bytes = 10 << 20;
  by_hand.fcache_bytes = 4000;
  by_hand.fcache_rows = 125;
  MemoryBudgetRequest request;
  request.num_nodes = 1000;
  request.feature_row_bytes = 32;
  RecordNeighborCacheInUse(1 << 20, "prebuilt x", 1.0, request, &by_hand);
  EXPECT_EQ(by_hand.ncache_bytes, 1 << 20);
  EXPECT_EQ(by_hand.ncache_share_bytes, 10 << 20);
  EXPECT_EQ(by_hand.fcache_rows, 1000);  // capped at every row
}

// The MLP reads only its seeds' rows, so it samples no neighbors: every batch is its
// seeds (the feature cache sees each training seed once per epoch, the neighbor cache
// and indices.bin nothing).
TEST(DataPathTest, MlpSamplesOnlyTheSeeds) {
  const std::string dir = MakeSyntheticGraph("mlp_seeds", 2001, FeatureDtype::kFloat32, 8);
  TrainOptions o = SmallRun(dir);
  o.model = ModelKind::kMlp;
  o.epochs = 1;
  o.eval_every = 0;
  bool only_seeds = true;
  o.batch_hook = [&](const BatchTrace& b, const float*, int64_t, int64_t) {
    only_seeds = only_seeds && b.blocks.empty() && static_cast<int64_t>(b.node_ids.size()) == b.num_seeds;
  };
  auto s = RunTraining(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto train = Dataset::Open(dir)->LoadSplit("train");
  ASSERT_TRUE(train.ok());
  EXPECT_TRUE(only_seeds);
  EXPECT_EQ(s->epochs[0].gather.rows, static_cast<int64_t>(train->size()));
  EXPECT_EQ(s->epochs[0].ncache_lookups, 0);
  EXPECT_EQ(s->epochs[0].topology_reads.device_reads, 0);
}

}  // namespace
}  // namespace seer
