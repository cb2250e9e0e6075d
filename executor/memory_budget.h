// How `seer train` splits its one --memory-budget (docs/design.md "Errors, determinism,
// budgets"). Plain arithmetic, no allocation, torch-free.
//
//   per-node tables   the compact indptr, ~4.13 B × (N+1) (storage/dataset/compact_indptr.h)
//                     + Belady's tie-rule scores, 1 B × N when the policy uses them
//                     (+ the neighbor cache's 2-bit-per-node table, counted in its budget);
//                     the split line shows the total per node (PerNodeBytes)
//   staging           batch buffers of the gather pipeline: `pipeline_depth` float32
//                     batches (one trains while the next is gathered), + one raw batch
//                     for float16 features, sized by the estimated rows of a batch (below);
//                     with --read-block the block reads' wave buffer and block list
//                     (BlockReadStagingBytes: fixed, plus ~20 B per row of a batch)
//   model             training only (--no-train reserves nothing): the trainer's host
//                     working set, EstimateModelFootprint below — parameters, their
//                     gradients, Adam's two moments and the best-validation copy, plus on
//                     the CPU the autograd activations and gradients of one step (on a
//                     GPU they live in device memory; the host keeps the pinned row
//                     staging and the block index tensors built before the copy)
//   trace buffers     RAM for superbatch traces and changesets before they spill to
//                     runtime files: an eighth of what is left, at least 1 MiB, at most
//                     what they need (TraceBufferNeed: one queued superbatch trace and
//                     one superbatch of changesets, each half of the buffers)
//   caches            the rest (the feature cache's slot index, 20 B per row
//                     (FeatureCache::IndexBytes), is paid from its share; with
//                     --fcache-budget the budget is the rows' bytes and the index comes on
//                     top): auto = 1/4 neighbor cache (only if it covers its own
//                     table, else 0) and 3/4 feature cache; --cache-split NC:FC sets the
//                     neighbor cache's share instead (same rule: a share that cannot
//                     hold its table goes to the feature cache);
//                     --ncache-budget / --fcache-budget override either (the other gets
//                     the remainder). Each cache is capped at what it can use — the
//                     neighbor cache at the whole topology (topology_bytes), the feature
//                     cache at every row (none with --feature-cache none) — and an
//                     automatic share's surplus goes to the other cache.
//
//   superbatch        --superbatch auto (request.superbatch <= 0): ChooseSuperbatch picks
//                     S from the pilot's measured trace and planner bytes (below).
//
//   inspector         the superbatch traces in flight (sampled, queued, planned, executed)
//                     and the planner's working set, sized from the pilot batches
//
// The model's and the inspector's bytes come out of the feature cache first, then the
// neighbor cache, then the trace buffers (down to 1 MiB), so --no-train and training runs keep the same
// tables, staging, traces and neighbor cache whenever the feature cache can pay.
// A budget that cannot hold the per-node tables plus a minimal staging area (plus the
// model when training) is refused (kResourceExhausted) with a one-line message saying
// how much is needed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/model_config.h"
#include "executor/superbatch_pipeline.h"
#include "storage/base/status.h"

namespace seer {

// One block's expected shape (input layer first, as ModelRunner consumes them).
struct BlockShape {
  int64_t num_dst = 0;
  int64_t num_src = 0;
  int64_t num_edges = 0;
};

struct MemoryBudgetRequest {
  int64_t budget_bytes = 0;
  // The process's resident bytes before Seer's data path (libtorch, the program, the
  // CUDA context and libraries when training on a GPU; MeasureRuntimeBytes in
  // executor/runtime_footprint.h): charged before every other part, so --memory-budget
  // covers the whole process. 0 = not charged (the budget is Seer's data path alone).
  int64_t runtime_bytes = 0;
  int64_t num_nodes = 0;
  int64_t feature_dim = 0;
  int64_t feature_row_bytes = 0;         // on disk (float16 rows are half of float32)
  int64_t batch_size = 1000;
  std::vector<int> fanouts = {10, 10, 10};
  int64_t pipeline_depth = kPipelineRowBuffers;  // float32 batch buffers alive at once
  // --read-block B (0 = per-row reads): the gather reads whole B-byte blocks of a batch's
  // misses in waves through one fixed buffer and writes the admitted rows straight into
  // their cache slots, so staging adds BlockReadStagingBytes (the wave buffer and the
  // batch's block list); and the block planner keeps a superbatch's accesses in RAM
  // (kBeladyInRamBytesPerAccess each) even when the inspector streams.
  int64_t read_block_bytes = 0;
  int64_t ncache_budget_bytes = -1;      // -1 = auto
  int64_t fcache_budget_bytes = -1;      // -1 = auto
  double ncache_share = -1;              // [0, 1]: neighbor cache's share of the caches; -1 = auto (1/4)
  // Training: reserve the model's host working set. model.in_dim / num_classes may be
  // left 0 (then feature_dim / num_classes below are used); num_layers = fanouts.size().
  bool reserve_model = false;
  ModelConfig model;
  int64_t num_classes = 0;
  bool model_on_host = true;             // false: training on a GPU (activations in device memory)
  // Batch shapes measured on pilot batches (MeasureBatchShapes; 0 / empty = unknown).
  // When set, staging and the model's activations are sized from the largest measured
  // batch times kPilotMargin instead of the uniform-draw estimate below, which assumes
  // every node has >= fan-out neighbours and overshoots 2-4x on power-law graphs.
  int64_t measured_batch_rows = 0;
  std::vector<BlockShape> measured_blocks;         // input layer first, per-field max
  int64_t measured_batches = 0;
  // The inspector's working set outside the trace buffers: whole superbatch traces held
  // in RAM while they are sampled, queued, planned and executed (`traces_in_flight` of
  // them, `superbatch` batches each; 0 = not reserved), plus the planner's per-access
  // working set (sort pairs, next uses, heaps) over one superbatch. superbatch <= 0 =
  // auto (ChooseSuperbatch).
  int64_t superbatch = 1;
  int64_t traces_in_flight = 0;
  int64_t measured_trace_bytes = 0;      // largest pilot batch's trace (ids + blocks)
  int64_t planner_bytes_per_access = 0;  // 0 = no planner working set
  // The streaming pipeline (traces on the runtime dir, inspector/trace_stream.h): the
  // inspector's RAM is StreamingInspectorBytes(one batch's trace, sampling_threads) less
  // its changesets, plus the planner's working memory (at most what S batches' accesses
  // need), whatever S is beyond that (traces_in_flight > 0 turns it on; a
  // planner that reads the ids into RAM, LRU, adds planner_bytes_per_access per access),
  // and the trace buffers hold changesets only (at most 2 x kChangesetRamBytes).
  bool streaming_inspector = false;
  int sampling_threads = 0;              // 0 = the hardware's threads
  // Belady's streaming sort buffer: > 0 bytes, kPlannerWorkingAuto = scaled with the
  // budget (PlannerWorkingBytesFor), 0 = no planner. The split charges (and the run gives
  // the planner) at most what S batches' accesses need: MemoryBudgetSplit::planner_working_bytes.
  int64_t planner_working_bytes = 0;
  // Batches per epoch (0 = unknown): caps an automatic superbatch.
  int64_t epoch_batches = 0;
  // What a neighbor cache holding every adjacency list takes (NeighborCacheFullBytes);
  // 0 = unknown (no cap).
  int64_t topology_bytes = 0;
  // Entries of the in-RAM indptr(s): 0 = num_nodes + 1 (one CSC); a typed dataset's
  // relations hold one CSC each over their destination type (sum of count_dst + 1).
  int64_t indptr_entries = 0;
  // The feature cache's row space: 0 = num_nodes rows of feature_row_bytes; a typed dataset
  // cached by bytes (storage/dataset/feature_units.h): its units (feature_row_bytes = U).
  int64_t feature_cache_rows_max = 0;
  // false (--feature-cache none): the feature cache is never read, so it gets nothing
  // and an automatic neighbor cache may take its share.
  bool feature_cache_used = true;
  // Bytes per node of the planner's static score table (Belady's tie rule:
  // kBeladyScoreBytesPerNode, cache/degrees.h); 0 when the policy has none.
  int64_t node_score_bytes_per_node = 0;
  // The cache policy's bookkeeping per cached feature row beyond the slot index (the
  // planner's cache state, changesets, the fill/static ranking), charged with the slot
  // index: PolicyBytesPerCachedRow (executor/superbatch_cache_planner.h), measured. 0 in unit tests.
  int64_t policy_bytes_per_row = 0;
};
// --memory-budget's share for Belady's streaming sort buffer, within [min, max]. The
// planner plans equally fast with 2-64 MiB (bench/RESULTS.md), while at a small budget a
// constant 8 MiB was a third of the feature cache (Ginex-like scale, 256M: 8,192 of ~23K rows).
constexpr int64_t kPlannerWorkingAuto = -1;
constexpr int64_t kPlannerWorkingPercent = 1;
constexpr int64_t kPlannerWorkingMinBytes = int64_t{1} << 20;
constexpr int64_t kPlannerWorkingMaxBytes = int64_t{8} << 20;
// kPlannerWorkingPercent % of `budget_bytes` clamped to [kPlannerWorkingMinBytes,
// kPlannerWorkingMaxBytes] (the maximum for a budget <= 0, i.e. none).
int64_t PlannerWorkingBytesFor(int64_t budget_bytes);

// Headroom over the largest pilot batch (batches of the same size vary by a few %).
constexpr double kPilotMargin = 1.2;

// --read-block's part of staging (FeatureGatherer, executor/feature_gather.h): the wave
// buffer (BlockWaveBufferBytes of wave_bytes, at most the file's blocks) with its read
// requests, and per batch of `batch_rows` rows the sorted list of its miss blocks
// (8 B each, at most the blocks those rows touch) and the misses' order (4 B per row).
// It no longer grows with the blocks' bytes: at 4 KiB blocks ~8 MiB + 20 B per row.
// wave_bytes -1 = the gatherer's kBlockWaveBytes.
int64_t BlockReadStagingBytes(int64_t row_bytes, int64_t block_bytes, int64_t num_rows, int64_t batch_rows,
                              int64_t wave_bytes = -1);

// The feature cache's RAM for `rows` rows of `row_bytes`: the rows plus its slot index
// (FeatureCache::IndexBytes) plus `policy_bytes_per_row` per row (0 for 0 rows).
int64_t FeatureCacheBytes(int64_t rows, int64_t row_bytes, int64_t policy_bytes_per_row = 0);
// The most rows whose FeatureCacheBytes fit in `bytes` (0 when row_bytes <= 0).
int64_t FeatureCacheRowsFor(int64_t bytes, int64_t row_bytes, int64_t policy_bytes_per_row = 0);

// A neighbor cache holding every list of a graph: its table, 8 B per cached node and
// every index (NeighborCache's layout).
int64_t NeighborCacheFullBytes(int64_t num_nodes, int64_t num_edges, int64_t index_bytes);

// --superbatch auto: the share of the memory left for caches (after tables, staging and
// the model) that the inspector's S-dependent RAM (traces in flight, the planner's
// per-access working set and the trace buffers) may take. The lookahead's gain in hits
// flattens out long before the cache it costs does (bench/RESULTS.md, the S sweep).
constexpr double kAutoSuperbatchShare = 0.125;
// ... and never more batches than this per superbatch when the epoch is longer (the
// first superbatch is sampled before anything else can run).
constexpr int64_t kAutoSuperbatchMax = 400;


// The host memory a ModelRunner needs while training (bytes). Activations are the peak of
// one training step, followed op by op along forward and backward: the block index
// tensors, the tensors autograd keeps for backward of the layers so far, and the current
// layer's temporaries (forward messages; backward message and input gradients), times
// kModelSafetyFactor.
struct ModelFootprint {
  int64_t num_parameters = 0;
  int64_t parameter_bytes = 0;   // CPU: 5 x 4 B x params (weights, grads, Adam m and v, best copy); GPU: 0
  int64_t activation_bytes = 0;  // CPU: autograd working set of one step; GPU: pinned staging + host block tensors
  int64_t total_bytes() const { return parameter_bytes + activation_bytes; }
};
// Headroom over the tally: allocator rounding, small tensors not counted (degrees,
// norms, views' bases, the loss), and block shapes above the coupon-collector mean.
constexpr double kModelSafetyFactor = 1.25;

// Same count as ModelRunner::num_parameters() for `config` (config.num_layers layers).
int64_t CountModelParameters(const ModelConfig& config);
// Expected block shapes of one batch: hop k holds EstimateBatchRows(N, B, fanouts[0..k))
// nodes; block l (input first) maps hop L-l onto hop L-1-l with dst × fan-out edges
// (fan-out -1 counted as 32): an upper bound for sampling without replacement.
std::vector<BlockShape> EstimateBlockShapes(int64_t num_nodes, int64_t batch_size, const std::vector<int>& fanouts);
// config.num_layers must equal blocks.size() (MLP: blocks may be empty; seeds only).
ModelFootprint EstimateModelFootprint(const ModelConfig& config, const std::vector<BlockShape>& blocks,
                                      int64_t num_seeds, bool on_host);

struct MemoryBudgetSplit {
  int64_t budget_bytes = 0;
  int64_t runtime_bytes = 0;        // charged first (MemoryBudgetRequest::runtime_bytes)
  int64_t num_nodes = 0;
  int64_t table_bytes = 0;          // per-node tables: indptr_bytes + node_score_bytes
  int64_t indptr_bytes = 0;         // the compact indptr (CompactIndptr::EstimateBytes)
  int64_t node_score_bytes = 0;     // the planner's static per-node scores (Belady's tie rule)
  int64_t staging_bytes = 0;
  int64_t block_buffer_bytes = 0;  // part of staging_bytes: --read-block's BlockReadStagingBytes
  int64_t trace_bytes = 0;
  int64_t ncache_bytes = 0;         // neighbor cache budget (its table included)
  int64_t fcache_bytes = 0;         // feature cache slots (rows × row bytes)
  int64_t fcache_index_bytes = 0;   // its slot index (FeatureCache::IndexBytes(fcache_rows)) + the policy's per-row bookkeeping
  int64_t model_bytes = 0;          // training: the model's host working set (0 with --no-train)
  int64_t model_parameter_bytes = 0;
  int64_t model_activation_bytes = 0;
  int64_t inspector_bytes = 0;      // superbatch traces in flight + the planner's working set
  int64_t planner_working_bytes = 0; // of which Belady's sort buffer (what the planner is given; 0 = none)
  int64_t fcache_rows = 0;          // = fcache_bytes / feature_row_bytes
  bool cache_units = false;         // typed, by bytes: fcache_rows are units (storage/dataset/feature_units.h)
  int64_t estimated_batch_rows = 0; // the staging estimate's rows per batch
  int64_t measured_batches = 0;     // > 0: estimated_batch_rows comes from that many pilot batches
  int64_t superbatch = 0;           // batches per superbatch the split was made for
  std::string superbatch_reason;    // --superbatch auto: why this S ("" when given)
  // The neighbor cache in use, filled by whoever opens it (DataPath): where it came from
  // ("" = not opened yet: ncache_bytes is the share) and the fraction of edges it holds.
  std::string ncache_source;
  double ncache_edge_fraction = -1;
  int64_t ncache_share_bytes = -1;  // the split's share when the cache in use differs
  // Lines to show the user (a cache that gets nothing, with the flag that fixes it).
  std::vector<std::string> warnings;
  // Resident bytes per node of every table sized by N: table_bytes plus the neighbor
  // cache's bitmap when it is in use, over num_nodes (0 when num_nodes is 0).
  double PerNodeBytes() const;
  // "memory budget 1.0 GiB: per-node tables 5.4 MiB (5.38 B/node: indptr 4.13 + ...), ..."
  std::string ToString() const;
};

// Estimated unique nodes of one batch: s = B × Σ_l Π_{j<=l} f_j sampled ids (fan-out -1
// counted as 32), of which N (1 - e^{-s/N}) are distinct if draws were uniform; at least
// min(B, N), at most N.
int64_t EstimateBatchRows(int64_t num_nodes, int64_t batch_size, const std::vector<int>& fanouts);

// The split, in three pure phases (exposed for tests; SplitMemoryBudget runs them in
// order and refuses a budget below the fixed parts between phases 1 and 2). With
// request.superbatch <= 0 it first picks S (ChooseSuperbatch) and splits for it; the
// result's warnings name each cache that gets nothing (SplitWarnings).
Result<MemoryBudgetSplit> SplitMemoryBudget(const MemoryBudgetRequest& request);

// What one training step holds on a training device (GPU): parameters, gradients, Adam's
// moments and the best copy, the autograd working set of the largest (pilot-measured,
// with margin) batch, and `pipeline_depth` float32 input batches — the host tally of
// EstimateModelFootprint, counted on the device. --device-cache auto gives the device
// tier what the device has free beyond this.
int64_t DeviceTrainingWorkingSetBytes(const MemoryBudgetRequest& request, const MemoryBudgetSplit& split);

// --superbatch auto: the largest S (at most the epoch's batches and kAutoSuperbatchMax)
// whose S-dependent inspector RAM — traces in flight and the planner's working set
// (InspectorReservation) plus the trace buffers' need — fits kAutoSuperbatchShare of
// the memory the caches could have; at least 1. With the streaming inspector nothing in
// RAM depends on S, so the longest lookahead wins: the whole epoch (up to
// kAutoSuperbatchMax). `reason` says which bound chose it.
int64_t ChooseSuperbatch(const MemoryBudgetRequest& request, std::string* reason);

// RAM the trace buffers can use for superbatch S: one queued superbatch trace and one
// superbatch of changesets (kChangesetBytesPerInsertedRow, cache/changeset_store.h, per
// changed row, at most every row of a batch), each half of the buffers (the run gives
// half to the trace store, half to the changesets).
int64_t TraceBufferNeed(const MemoryBudgetRequest& request, int64_t batch_rows);

// One line per cache that gets nothing although the run would use it: what took the
// memory and the --memory-budget that would give it something (the feature cache 10 %
// of the rows, the neighbor cache a quarter of the topology), found by re-splitting.
std::vector<std::string> SplitWarnings(const MemoryBudgetRequest& request, const MemoryBudgetSplit& split);
// 1. The fixed parts: tables, staging (rows per batch estimated or measured), the
//    model's working set and the inspector's traces in flight. Caches and traces are 0.
MemoryBudgetSplit SizeFixedParts(const MemoryBudgetRequest& request);
// 2. What the fixed tables and staging leave goes to the trace buffers (an eighth, at
//    least 1 MiB) and the two caches (auto, --cache-split, or --ncache/--fcache-budget),
//    as if there were no model. Refuses explicit cache budgets that do not fit.
Status SplitCacheMemory(const MemoryBudgetRequest& request, MemoryBudgetSplit* split);
// 4. The feature cache's rows from its bytes (an automatic share pays the slot index,
//    FeatureCacheRowsFor; an explicit --fcache-budget is the rows' bytes); sets
//    fcache_rows, fcache_bytes = rows × row bytes and fcache_index_bytes.
void FinishFeatureCache(const MemoryBudgetRequest& request, MemoryBudgetSplit* split);
// 3. The model's and the inspector's bytes are taken from unused room, then the feature
//    cache, the neighbor cache (unless set explicitly; dropped below its table) and the
//    trace buffers down to 1 MiB. Refuses when explicit budgets leave too little.
Status PayReservations(const MemoryBudgetRequest& request, MemoryBudgetSplit* split);

}  // namespace seer
