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
#include "training_fixture.h"

namespace seer {
namespace {

using seer::testing::MakeSyntheticGraph;
using seer::testing::ReadAllFeatures;
using seer::testing::SmallRun;

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

}  // namespace
}  // namespace seer
