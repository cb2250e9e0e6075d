// The memory split (executor/memory_budget.h): the split stays within the budget and
// honours the per-cache overrides and the neighbor cache's share; the batch-size
// estimate; the model reservation — the footprint estimate against what libtorch really
// allocates during a training step (a counting CPU allocator installed in front of
// c10's), the parameter count against ModelRunner's, and where the split takes the
// model's bytes from.
#include "executor/memory_budget.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cache/degrees.h"
#include "cache/feature_cache.h"
#include "executor/feature_gather.h"
#include "executor/model_runner.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/base/byte_size.h"
#include "budget_requests.h"

namespace seer {
namespace {


// Counts the bytes of every live CPU tensor allocation and their peak; frees through
// c10 like the default allocator.
//
// c10::Allocator's interface changed in PyTorch 2.3: allocate() is const before and
// non-const after, and copy_data() became pure virtual. Both allocate() signatures are
// defined and none says `override`: on every version exactly one overrides the base's
// (and the other is an unrelated overload); were the class still abstract, `new
// CountingAllocator` below would not compile.
class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) { return Allocate(n); }
  c10::DataPtr allocate(size_t n) const { return Allocate(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }
  void ResetPeak() { peak_.store(current_.load()); }
  int64_t current() const { return current_.load(); }
  int64_t peak() const { return peak_.load(); }

 private:
  c10::DataPtr Allocate(size_t n) const {
    void* data = c10::alloc_cpu(n);
    auto* ctx = new Block{data, n, this};
    const int64_t now = current_.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return {data, ctx, &Delete, c10::Device(c10::DeviceType::CPU)};
  }
  struct Block {
    void* data;
    size_t bytes;
    const CountingAllocator* owner;
  };
  static void Delete(void* ctx_ptr) {
    auto* ctx = static_cast<Block*>(ctx_ptr);
    ctx->owner->current_.fetch_sub(static_cast<int64_t>(ctx->bytes));
    c10::free_cpu(ctx->data);
    delete ctx;
  }
  mutable std::atomic<int64_t> current_{0};
  mutable std::atomic<int64_t> peak_{0};
};

CountingAllocator& Counter() {
  static CountingAllocator* counter = [] {
    auto* c = new CountingAllocator;
    c10::SetCPUAllocator(c, /*priority=*/200);
    return c;
  }();
  return *counter;
}

// A batch with exactly the given block shapes: block l's dst d draws
// num_edges / num_dst distinct random src among block l's num_src.
struct ShapedBatch {
  BatchTrace trace;
  std::vector<float> rows;
  std::vector<int32_t> labels;
};

ShapedBatch MakeShapedBatch(const std::vector<BlockShape>& shapes, int64_t num_seeds, int64_t in_dim,
                            int64_t classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ShapedBatch b;
  b.trace.num_seeds = num_seeds;
  b.trace.batch_index = 1;
  const int64_t rows = shapes.empty() ? num_seeds : shapes[0].num_src;
  for (int64_t v = 0; v < rows; ++v) b.trace.node_ids.push_back(v);
  for (const BlockShape& s : shapes) {
    LayerBlock block;
    block.num_dst = s.num_dst;
    block.num_src = s.num_src;
    const int64_t fanout = s.num_dst == 0 ? 0 : s.num_edges / s.num_dst;
    block.row_ptr.push_back(0);
    std::vector<int32_t> picks;
    for (int64_t d = 0; d < s.num_dst; ++d) {
      picks.clear();
      while (static_cast<int64_t>(picks.size()) < fanout) {
        const auto src = static_cast<int32_t>(rng() % static_cast<uint64_t>(s.num_src));
        if (std::find(picks.begin(), picks.end(), src) == picks.end()) picks.push_back(src);
      }
      block.col_idx.insert(block.col_idx.end(), picks.begin(), picks.end());
      block.row_ptr.push_back(static_cast<int64_t>(block.col_idx.size()));
    }
    b.trace.blocks.push_back(std::move(block));
  }
  std::normal_distribution<float> normal;
  b.rows.resize(static_cast<size_t>(rows * in_dim));
  for (float& x : b.rows) x = normal(rng);
  for (int64_t i = 0; i < num_seeds; ++i) b.labels.push_back(static_cast<int32_t>(rng() % classes));
  return b;
}

// The estimate bounds the bytes libtorch holds during a training step from above, and
// is not loose by more than 2x, for every model kind on odd coupon-collector shapes.
TEST(ModelFootprintTest, BoundsTheAllocatorPeakOfATrainingStep) {
  CountingAllocator& counter = Counter();
  const int64_t num_nodes = 50021, batch = 97, in_dim = 47, classes = 7;
  const std::vector<int> fanouts = {10, 6};
  const std::vector<BlockShape> shapes = EstimateBlockShapes(num_nodes, batch, fanouts);
  const uint64_t seed = 20240611;
  std::printf("seed %llu; blocks:", static_cast<unsigned long long>(seed));
  for (const BlockShape& s : shapes) {
    std::printf(" [dst %lld src %lld edges %lld]", static_cast<long long>(s.num_dst),
                static_cast<long long>(s.num_src), static_cast<long long>(s.num_edges));
  }
  std::printf("\n");
  const ShapedBatch b = MakeShapedBatch(shapes, batch, in_dim, classes, seed);
  // GCN's full-graph degrees: 10 in-neighbors per node (>= every block's fan-out).
  std::vector<int64_t> indptr;
  for (int64_t v = 0; v <= static_cast<int64_t>(b.trace.node_ids.size()); ++v) indptr.push_back(10 * v);
  const CompactIndptr graph = indptr;
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat, ModelKind::kMlp}) {
    for (int64_t hidden : {64, 200}) {
      ModelConfig config;
      config.kind = kind;
      config.in_dim = in_dim;
      config.hidden = hidden;
      config.num_classes = classes;
      config.num_layers = static_cast<int64_t>(fanouts.size());
      config.heads = 4;
      const int64_t before_model = counter.current();
      auto runner = ModelRunner::Create(config, 0.01, seed, /*use_cuda=*/false);
      runner->SetGraphIndptr(&graph);
      ASSERT_EQ(CountModelParameters(config), runner->num_parameters()) << ModelKindName(kind);
      // The first step creates the gradients and Adam's moments; measure the second.
      runner->TrainStep(b.trace, b.rows.data(), b.labels.data());
      runner->SnapshotBest();
      const int64_t persistent = counter.current() - before_model;
      counter.ResetPeak();
      const int64_t baseline = counter.current();
      runner->TrainStep(b.trace, b.rows.data(), b.labels.data());
      const int64_t step_peak = counter.peak() - baseline;
      const ModelFootprint f = EstimateModelFootprint(config, shapes, batch, /*on_host=*/true);
      std::printf("%s hidden %lld: step peak %.2f MiB, estimate %.2f MiB; parameters+Adam+best %.2f MiB, "
                  "estimate %.2f MiB\n",
                  ModelKindName(kind), static_cast<long long>(hidden), step_peak / 1048576.0,
                  f.activation_bytes / 1048576.0, persistent / 1048576.0, f.parameter_bytes / 1048576.0);
      EXPECT_GE(f.activation_bytes, step_peak) << ModelKindName(kind) << " hidden " << hidden;
      EXPECT_LE(f.activation_bytes, 2 * step_peak) << ModelKindName(kind) << " hidden " << hidden;
      EXPECT_GE(f.parameter_bytes, persistent) << ModelKindName(kind) << " hidden " << hidden;
      EXPECT_LE(f.parameter_bytes, 2 * persistent + 4096) << ModelKindName(kind) << " hidden " << hidden;
    }
  }
}

TEST(ModelFootprintTest, BlockShapesFollowTheHops) {
  // No repeats among 10 + 20 + 60 draws from 2^40 nodes: exact hop sizes.
  const std::vector<BlockShape> s = EstimateBlockShapes(int64_t{1} << 40, 10, {2, 3});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].num_dst, 30);  // input layer: hop 1 (30) from hop 2 (90)
  EXPECT_EQ(s[0].num_src, 90);
  EXPECT_EQ(s[0].num_edges, 90);
  EXPECT_EQ(s[1].num_dst, 10);  // output layer: the seeds from hop 1
  EXPECT_EQ(s[1].num_src, 30);
  EXPECT_EQ(s[1].num_edges, 20);
  EXPECT_TRUE(EstimateBlockShapes(1000, 10, {}).empty());
  // Fan-out -1 (all neighbors) counts 32 per node; capped by the graph.
  const std::vector<BlockShape> all = EstimateBlockShapes(50, 10, {-1});
  EXPECT_EQ(all[0].num_src, 50);
  EXPECT_EQ(all[0].num_edges, 320);
}


TEST(MemoryBudgetTest, ModelIsPaidByTheFeatureCacheFirst) {
  MemoryBudgetRequest r = BenchLikeRequest();
  auto no_train = SplitMemoryBudget(r);
  ASSERT_TRUE(no_train.ok()) << no_train.status().message();
  EXPECT_EQ(no_train->model_bytes, 0);
  EXPECT_EQ(no_train->ToString().find("model"), std::string::npos);
  r.reserve_model = true;
  auto train = SplitMemoryBudget(r);
  ASSERT_TRUE(train.ok()) << train.status().message();
  // bench/RESULTS.md measured ~65 MiB of autograd activations for this configuration.
  EXPECT_GT(train->model_activation_bytes, int64_t{65} << 20);
  EXPECT_LT(train->model_activation_bytes, int64_t{130} << 20);
  EXPECT_EQ(train->model_bytes, train->model_activation_bytes + train->model_parameter_bytes);
  EXPECT_EQ(train->staging_bytes, no_train->staging_bytes);
  EXPECT_EQ(train->trace_bytes, no_train->trace_bytes);
  EXPECT_EQ(train->ncache_bytes, no_train->ncache_bytes);
  EXPECT_NEAR(static_cast<double>(FcacheAll(*train)),
              static_cast<double>(FcacheAll(*no_train) - train->model_bytes), 2 * (512 + 20));
  EXPECT_LE(train->table_bytes + train->staging_bytes + train->model_bytes + train->trace_bytes +
                train->ncache_bytes + FcacheAll(*train),
            r.budget_bytes);
  EXPECT_NE(train->ToString().find("\n  model "), std::string::npos) << train->ToString();
  std::printf("%s\n", train->ToString().c_str());

  // On a GPU the weights, Adam state and activations live in device memory; the host
  // keeps the pinned staging the runner copies the rows through (up to twice a batch).
  r.model_on_host = false;
  auto gpu = SplitMemoryBudget(r);
  ASSERT_TRUE(gpu.ok()) << gpu.status().message();
  EXPECT_EQ(gpu->model_parameter_bytes, 0);
  EXPECT_GE(gpu->model_activation_bytes, 2 * 4 * 128 * gpu->estimated_batch_rows);
}

// Pilot batches: staging and the model are sized from the largest measured batch times
// kPilotMargin; without a measurement the uniform-draw estimate is used.
// --device-cache auto leaves a GPU training step its whole working set: the host tally of
// the model (weights, grads, Adam, best copy, autograd set) plus the float32 input batches,
// however the host split was made (model_on_host = false reserves only pinned staging).
TEST(MemoryBudgetTest, DeviceWorkingSetCountsTheWholeStepOnTheDevice) {
  MemoryBudgetRequest r = BenchLikeRequest();
  r.reserve_model = true;
  auto host = SplitMemoryBudget(r);
  ASSERT_TRUE(host.ok()) << host.status().message();
  r.model_on_host = false;
  auto gpu = SplitMemoryBudget(r);
  ASSERT_TRUE(gpu.ok()) << gpu.status().message();
  const int64_t inputs = gpu->estimated_batch_rows * r.pipeline_depth * 4 * r.feature_dim;
  EXPECT_EQ(DeviceTrainingWorkingSetBytes(r, *gpu), host->model_bytes + inputs);
  EXPECT_GT(DeviceTrainingWorkingSetBytes(r, *gpu), gpu->model_bytes);
  r.model.hidden = 512;  // a wider model needs more device memory
  EXPECT_GT(DeviceTrainingWorkingSetBytes(r, *gpu), host->model_bytes + inputs);
}

TEST(MemoryBudgetTest, MeasuredBatchShapesReplaceTheEstimate) {
  MemoryBudgetRequest r = BenchLikeRequest();
  r.reserve_model = true;
  auto estimated = SplitMemoryBudget(r);
  ASSERT_TRUE(estimated.ok()) << estimated.status().message();
  EXPECT_EQ(estimated->measured_batches, 0);
  EXPECT_NE(estimated->ToString().find("estimated)"), std::string::npos) << estimated->ToString();

  const int64_t rows = estimated->estimated_batch_rows / 3;
  r.measured_batch_rows = rows;
  r.measured_batches = 2;
  for (const BlockShape& b : EstimateBlockShapes(r.num_nodes, r.batch_size, r.fanouts)) {
    r.measured_blocks.push_back({b.num_dst / 3, b.num_src / 3, b.num_edges / 3});
  }
  auto measured = SplitMemoryBudget(r);
  ASSERT_TRUE(measured.ok()) << measured.status().message();
  const int64_t with_margin = static_cast<int64_t>(std::ceil(kPilotMargin * static_cast<double>(rows)));
  EXPECT_EQ(measured->estimated_batch_rows, with_margin);
  EXPECT_EQ(measured->staging_bytes, with_margin * r.pipeline_depth * 4 * r.feature_dim);
  EXPECT_EQ(measured->measured_batches, 2);
  EXPECT_NE(measured->ToString().find("measured on 2 pilot batches"), std::string::npos) << measured->ToString();
  // Smaller batches: smaller activations, and the memory goes to the caches.
  EXPECT_LT(measured->model_activation_bytes, estimated->model_activation_bytes);
  EXPECT_GT(measured->fcache_bytes + measured->ncache_bytes, estimated->fcache_bytes + estimated->ncache_bytes);
  // The inspector: traces in flight x superbatch x the largest pilot trace (with the
  // margin) + the planner's bytes per access over one superbatch, paid by the caches.
  r.superbatch = 4;
  r.traces_in_flight = 2;
  r.measured_trace_bytes = 1 << 20;
  r.planner_bytes_per_access = 32;
  auto inspected = SplitMemoryBudget(r);
  ASSERT_TRUE(inspected.ok()) << inspected.status().message();
  const int64_t trace = static_cast<int64_t>(std::ceil(kPilotMargin * (1 << 20)));
  EXPECT_EQ(inspected->inspector_bytes, 2 * 4 * trace + 32 * 4 * with_margin);
  EXPECT_EQ(inspected->staging_bytes, measured->staging_bytes);
  // (the trace buffers hold what superbatches of 4 need, paid by the caches too)
  EXPECT_NEAR(static_cast<double>(FcacheAll(*inspected) + inspected->ncache_bytes + inspected->inspector_bytes +
                                  inspected->trace_bytes),
              static_cast<double>(FcacheAll(*measured) + measured->ncache_bytes + measured->trace_bytes),
              2.0 * (r.feature_row_bytes + 20));
  EXPECT_NE(inspected->ToString().find("inspector "), std::string::npos) << inspected->ToString();
  r.superbatch = 4000;  // traces that cannot fit: refused, naming --superbatch
  auto refused = SplitMemoryBudget(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--superbatch"), std::string::npos) << refused.status().message();
  r.superbatch = 4;
  r.traces_in_flight = 0;
  // Blocks that do not match the fan-outs are ignored (the estimate is used).
  r.measured_blocks.pop_back();
  auto mismatched = SplitMemoryBudget(r);
  ASSERT_TRUE(mismatched.ok());
  EXPECT_EQ(mismatched->estimated_batch_rows, estimated->estimated_batch_rows);
}

// --read-block: the gather reads a batch's miss blocks in waves through one fixed buffer
// (FeatureGatherer, kBlockWaveBytes) and writes the admitted rows straight into their
// cache slots, so staging charges BlockReadStagingBytes — the wave buffer and its
// requests plus ~20 B per row of a batch (its block list and miss order) — where it
// charged two blocks per row of a batch (int8 rows, 4 KiB blocks, 170K-row batches: up to
// 2.6 GiB, capped at twice the file; ~11 MiB now).
TEST(MemoryBudgetTest, BlockReadsChargeOneWaveBufferNotTheBatchsBlocks) {
  const int64_t b = 4096, req = static_cast<int64_t>(sizeof(ReadRequest));
  const int64_t wave_blocks = kBlockWaveBytes / b;
  const int64_t big_file = 1'000'000'000;  // rows: the file never caps below
  // 136 B rows (int8, 128 codes + scale + bias) straddle 4 KiB blocks: 2 blocks per row.
  EXPECT_EQ(BlockReadStagingBytes(136, b, big_file, 170'000), wave_blocks * (b + req) + 8 * 2 * 170'000 + 4 * 170'000);
  EXPECT_LT(BlockReadStagingBytes(136, b, big_file, 170'000), int64_t{12} << 20);
  // Twice the batch: 20 B more per row, not two more blocks.
  EXPECT_EQ(BlockReadStagingBytes(136, b, big_file, 340'000) - BlockReadStagingBytes(136, b, big_file, 170'000),
            20 * 170'000);
  // Aligned rows touch one block each.
  EXPECT_EQ(BlockReadStagingBytes(512, b, big_file, 1000), wave_blocks * (b + req) + 8 * 1000 + 4 * 1000);
  // A small file caps the wave buffer and the block list at its blocks.
  const int64_t file_blocks = (1000 * 136 + b - 1) / b;
  EXPECT_EQ(BlockReadStagingBytes(136, b, 1000, 1000), file_blocks * (b + req) + 8 * file_blocks + 4 * 1000);
  // Blocks larger than the wave: the wave holds one row's blocks.
  const int64_t huge = int64_t{16} << 20;
  EXPECT_EQ(BlockReadStagingBytes(136, huge, big_file, 10), 2 * (huge + req) + 8 * 20 + 4 * 10);
  // Rows over three blocks, the smallest wave (what the gather tests use).
  EXPECT_EQ(BlockReadStagingBytes(100, 64, big_file, 10, 0), 3 * (64 + req) + 8 * 30 + 4 * 10);
  EXPECT_EQ(BlockReadStagingBytes(0, b, big_file, 10), 0);
  EXPECT_EQ(BlockReadStagingBytes(136, 0, big_file, 10), 0);

  // In the split: staging grows by exactly the term, named on its line; the rest of the
  // budget still goes to the caches. (Two blocks per row made this request need more
  // than its 256 MiB: the file's 34K blocks twice, 272 MiB.)
  MemoryBudgetRequest r = BenchLikeRequest();
  r.feature_row_bytes = 136;
  auto per_row = SplitMemoryBudget(r);
  ASSERT_TRUE(per_row.ok()) << per_row.status().message();
  r.read_block_bytes = b;
  auto blocks = SplitMemoryBudget(r);
  ASSERT_TRUE(blocks.ok()) << blocks.status().message();
  EXPECT_EQ(per_row->block_buffer_bytes, 0);
  EXPECT_EQ(blocks->block_buffer_bytes, BlockReadStagingBytes(136, b, r.num_nodes, blocks->estimated_batch_rows));
  EXPECT_EQ(blocks->staging_bytes, per_row->staging_bytes + blocks->block_buffer_bytes);
  EXPECT_LT(blocks->block_buffer_bytes, int64_t{12} << 20);
  EXPECT_NE(blocks->ToString().find("block reads " + FormatBytes(blocks->block_buffer_bytes)), std::string::npos)
      << blocks->ToString();
  EXPECT_EQ(per_row->ToString().find("block reads"), std::string::npos) << per_row->ToString();
  EXPECT_NEAR(static_cast<double>(FcacheAll(*blocks) + blocks->ncache_bytes + blocks->trace_bytes + blocks->block_buffer_bytes),
              static_cast<double>(FcacheAll(*per_row) + per_row->ncache_bytes + per_row->trace_bytes),
              4.0 * (136 + 20));
  std::printf("%s\n", blocks->ToString().c_str());
}

TEST(MemoryBudgetTest, ModelBeyondTheFeatureCacheTakesTheNeighborCacheThenTraces) {
  MemoryBudgetRequest r = BenchLikeRequest();
  r.reserve_model = true;
  r.model.hidden = 512;  // roughly twice the activations of hidden 256
  r.budget_bytes = int64_t{320} << 20;
  auto no_train_r = r;
  no_train_r.reserve_model = false;
  auto no_train = SplitMemoryBudget(no_train_r);
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(no_train.ok() && s.ok()) << s.status().message();
  ASSERT_GT(s->model_bytes, no_train->fcache_bytes) << "the test needs a model larger than the feature cache";
  ASSERT_LT(s->model_bytes, no_train->fcache_bytes + no_train->ncache_bytes);
  EXPECT_LT(s->ncache_bytes, no_train->ncache_bytes);
  EXPECT_EQ(s->trace_bytes, no_train->trace_bytes);
  EXPECT_LE(FcacheAll(*s) + s->ncache_bytes, FcacheAll(*no_train) + 532 + no_train->ncache_bytes - s->model_bytes);
  EXPECT_LE(s->table_bytes + s->staging_bytes + s->model_bytes + s->trace_bytes + s->ncache_bytes + FcacheAll(*s),
            r.budget_bytes);
  // A model larger than both caches shrinks the trace buffers too (not below 1 MiB): the
  // smallest budget that holds the fixed parts leaves 2 MiB beside the model.
  const MemoryBudgetSplit fixed_parts = SizeFixedParts(r);
  r.budget_bytes = fixed_parts.table_bytes + fixed_parts.staging_bytes + fixed_parts.model_bytes + (2 << 20);
  no_train_r.budget_bytes = r.budget_bytes;
  no_train = SplitMemoryBudget(no_train_r);
  s = SplitMemoryBudget(r);
  ASSERT_TRUE(no_train.ok() && s.ok()) << s.status().message();
  ASSERT_GT(s->model_bytes, no_train->fcache_bytes + no_train->ncache_bytes);
  EXPECT_EQ(s->fcache_rows, 0);
  EXPECT_EQ(s->ncache_bytes, 0);
  EXPECT_LT(s->trace_bytes, no_train->trace_bytes);
  EXPECT_GE(s->trace_bytes, 1 << 20);
  EXPECT_LE(s->table_bytes + s->staging_bytes + s->model_bytes + s->trace_bytes, r.budget_bytes);

  // Explicit cache budgets are kept; the model then has to fit beside them.
  r.budget_bytes = int64_t{320} << 20;
  r.fcache_budget_bytes = 16 << 20;
  r.ncache_budget_bytes = 0;
  auto fixed = SplitMemoryBudget(r);
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_EQ(fixed->fcache_bytes, 16 << 20);
  r.fcache_budget_bytes = int64_t{1} << 40;
  EXPECT_EQ(SplitMemoryBudget(r).status().code(), StatusCode::kResourceExhausted);
}

TEST(MemoryBudgetTest, RefusesABudgetThatCannotHoldTheModel) {
  MemoryBudgetRequest r = BenchLikeRequest();
  r.budget_bytes = int64_t{192} << 20;  // tables + staging fit, + ~90 MiB of model does not
  ASSERT_TRUE(SplitMemoryBudget(r).ok());
  r.reserve_model = true;
  auto s = SplitMemoryBudget(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  const std::string& message = s.status().message();
  EXPECT_NE(message.find("model"), std::string::npos) << message;
  EXPECT_NE(message.find("--hidden"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  // The features-only baseline (seed rows only) fits the same budget.
  r.model.kind = ModelKind::kMlp;
  EXPECT_TRUE(SplitMemoryBudget(r).ok());
}

// The three phases compose to SplitMemoryBudget: fixed parts first (no cache memory),
// then the cache split as if there were no model, then the model and the inspector paid
// by the feature cache before anything else.
TEST(MemoryBudgetTest, PhasesComposeToTheSplit) {
  MemoryBudgetRequest r = BenchLikeRequest();
  r.budget_bytes = int64_t{1} << 30;
  r.reserve_model = true;
  r.traces_in_flight = 3;
  r.superbatch = 4;
  r.planner_bytes_per_access = 32;
  MemoryBudgetSplit s = SizeFixedParts(r);
  EXPECT_GT(s.table_bytes, 0);
  EXPECT_GT(s.staging_bytes, 0);
  EXPECT_GT(s.model_bytes, 0);
  EXPECT_GT(s.inspector_bytes, 0);
  EXPECT_EQ(s.fcache_bytes + s.ncache_bytes + s.trace_bytes, 0);
  ASSERT_TRUE(SplitCacheMemory(r, &s).ok());
  const int64_t left = r.budget_bytes - s.table_bytes - s.staging_bytes;
  EXPECT_EQ(s.trace_bytes, std::max<int64_t>(1 << 20, std::min(left / 8, TraceBufferNeed(r, s.estimated_batch_rows))));
  EXPECT_EQ(s.trace_bytes + s.ncache_bytes + s.fcache_bytes, left);
  const MemoryBudgetSplit before = s;
  ASSERT_TRUE(PayReservations(r, &s).ok());
  EXPECT_EQ(before.fcache_bytes - s.fcache_bytes, s.model_bytes + s.inspector_bytes);
  EXPECT_EQ(s.ncache_bytes, before.ncache_bytes);
  auto whole = SplitMemoryBudget(r);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->trace_bytes, s.trace_bytes);
  EXPECT_EQ(whole->ncache_bytes, s.ncache_bytes);
  EXPECT_EQ(whole->fcache_rows, std::min(r.num_nodes, FeatureCacheRowsFor(s.fcache_bytes, r.feature_row_bytes)));
}

}  // namespace
}  // namespace seer
