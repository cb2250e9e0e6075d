// The executor's run loops (DESIGN.md "Executor and models", Ginex §3.1): RunTraining
// drives `seer train`, RunPrediction drives `seer predict`. Torch-free header: the model
// is behind executor/model_runner.h.
//
// Two pipelines share every stage below; only the sampling granularity and the policies
// allowed differ:
//   superbatch (Seer, the default): the inspector samples S batches ahead, the planner
//       plans the feature cache for all S (exact Belady needs that lookahead).
//   conventional (PyG's DataLoader; the pyg+ and ali+pg baselines of Ginex §5): batches
//       are sampled `prefetch_batches` at a time (in parallel, like DataLoader workers),
//       one group ahead of the executor; only policies that need no future knowledge
//       (static-degree, presc, lru, none) are allowed.
// With mmap_io, indices.bin and features.bin are read from a memory mapping through the
// page cache (executor/mmap_reader.h) instead of O_DIRECT io_uring.
//
// Stages (bounded queues between them):
//   inspector thread  samples superbatch (or group) k+1 (TBB workers) ...
//   planner thread    ... while the feature-cache policy plans k (Belady changesets, CPU
//                     or GPU; static policies: nothing); planned traces go through a
//                     TraceStore that spills to runtime files beyond the trace budget
//   gather thread     gathers batch after batch — cache hits, misses through the reader,
//                     changeset apply, float32 rows — one batch ahead of the model, also
//                     across superbatch boundaries (it waits at an epoch boundary until
//                     the executor's evaluation, which reads the cache, is done)
//   executor (caller) trains on batch i while batch i+1 is gathered.
// With `overlap` (the default, measured faster in bench/RESULTS.md) sampling k+1 runs
// while k executes; without it sampling and executing (gathering + training) k exclude
// each other (they share the CPU, the SSD and the memory budget) as in Ginex. Planning
// always overlaps sampling.
//
// Evaluation (valid/test accuracy) samples the split with the same sampler (fixed epoch
// 0, no shuffle) and gathers through the same cache read-only. The best-validation
// weights are kept; the final test accuracy is the best model's.
//
// Errors from any stage come back as the Status (with file and offset) of the first
// failure; every thread is joined before returning.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/policies.h"
#include "executor/feature_gather.h"
#include "executor/memory_budget.h"
#include "executor/model_runner.h"
#include "inspector/trace.h"
#include "storage/direct_reader.h"
#include "storage/status.h"

namespace seer {

enum class PipelineKind { kSuperbatch, kConventional };
// "superbatch" | "conventional"; anything else is kInvalidArgument naming the value.
Result<PipelineKind> ParsePipelineKind(const std::string& text);
const char* PipelineKindName(PipelineKind kind);

// Debug hook: called on the executor thread for every batch with the float32 rows the
// model receives (node_ids.size() × feature_dim, rows in node_ids order).
using BatchRowsHook = std::function<void(const BatchTrace& batch, const float* rows,
                                         int64_t num_rows, int64_t feature_dim)>;
// Called after every training step.
using StepHook = std::function<void(int64_t epoch, int64_t batch_index, double loss)>;

struct TrainOptions {
  std::string dataset_dir;
  // Model (in_dim / num_classes / num_layers come from the dataset and fan-outs).
  ModelKind model = ModelKind::kSage;
  int64_t hidden = 256;
  int64_t heads = 4;
  double dropout = 0.5;
  double learning_rate = 0.003;
  // Sampling and schedule.
  std::vector<int> fanouts = {10, 10, 10};
  int64_t batch_size = 1000;
  int64_t superbatch = 100;
  int64_t epochs = 3;
  int64_t eval_every = 1;            // epochs; 0 = only after the last epoch
  uint64_t seed = 0;
  int num_threads = 0;               // sampling workers (0 = all cores)
  bool no_train = false;             // data path only
  bool overlap = true;               // sampling k+1 overlaps executing k
  PipelineKind pipeline = PipelineKind::kSuperbatch;
  int64_t prefetch_batches = 2;      // conventional: batches sampled together, one group ahead
  // Data path.
  PolicyKind cache_policy = PolicyKind::kBelady;
  PlannerDevice planner = PlannerDevice::kAuto;
  IoMode io = IoMode::kAuto;
  int queue_depth = 64;
  bool direct_io = true;
  bool mmap_io = false;              // read through the page cache (mmap, MADV_RANDOM)
  bool use_cuda = true;              // train on the GPU when one is present
  // Memory.
  int64_t memory_budget_bytes = int64_t{4} << 30;
  int64_t ncache_budget_bytes = -1;  // -1 = auto
  int64_t fcache_budget_bytes = -1;  // -1 = auto
  double ncache_share = -1;          // neighbor cache's share of the cache memory; -1 = auto
  int64_t trace_budget_bytes = -1;   // -1 = from the split (tests force spilling with 0)
  std::string runtime_dir;           // spill files; "" = a fresh dir under $TMPDIR
  // Checkpoints and outputs.
  std::string checkpoint_dir;        // "" = no checkpoints
  int64_t checkpoint_every = 0;      // superbatches; 0 = at the end of every epoch
  bool resume = false;
  int64_t stop_after_superbatches = -1;  // tests: stop (after checkpointing) early
  std::string save_model_path;
  std::string metrics_path;          // JSON lines
  bool show_progress = true;
  double progress_interval_s = 10;   // plain lines when stderr is not a TTY
  bool quiet = false;                // no summary lines on stderr
  BatchRowsHook batch_hook;
  StepHook step_hook;
};

struct EpochReport {
  int64_t epoch = 0;
  int64_t batches = 0;
  int64_t seeds = 0;
  double train_loss = 0;             // mean over the epoch's batches (labeled seeds)
  double train_accuracy = 0;
  double valid_accuracy = -1;        // -1 = not evaluated this epoch
  double test_accuracy = -1;
  double seconds = 0;                // wall time of the epoch (executor)
  double inspect_seconds = 0, plan_seconds = 0, gather_seconds = 0, io_wait_seconds = 0,
         cache_update_seconds = 0, transfer_seconds = 0, compute_seconds = 0,
         stall_seconds = 0, eval_seconds = 0;
  GatherStats gather;
  int64_t ncache_lookups = 0, ncache_hits = 0;
  ReadStats topology_reads;
  std::string ToJson() const;
  std::string Summary() const;       // multi-line human summary
};

struct TrainSummary {
  MemoryBudgetSplit split;
  std::vector<EpochReport> epochs;   // epochs run by this invocation
  double best_valid_accuracy = -1;
  int64_t best_epoch = -1;
  double test_accuracy = -1;         // of the best-validation model (or the last one)
  int64_t peak_rss_bytes = -1;
  double seconds = 0;
  bool stopped_early = false;
  TrainPosition final_position;
};

Result<TrainSummary> RunTraining(const TrainOptions& options);

struct PredictOptions {
  std::string dataset_dir;
  std::string model_path;
  std::vector<int64_t> nodes;        // empty = the test split
  std::vector<int> fanouts;          // empty = 10 per model layer
  int64_t batch_size = 1000;
  int64_t superbatch = 100;
  uint64_t seed = 0;
  int num_threads = 0;
  IoMode io = IoMode::kAuto;
  bool direct_io = true;
  bool use_cuda = true;
  int64_t memory_budget_bytes = int64_t{4} << 30;
  bool want_embeddings = false;
  bool show_progress = true;
};

struct PredictResult {
  std::vector<int64_t> nodes;
  std::vector<int64_t> classes;      // per node
  std::vector<float> embeddings;     // nodes × embedding_dim (when asked)
  int64_t embedding_dim = 0;
  double accuracy = -1;              // against labels.bin over labeled nodes
};

Result<PredictResult> RunPrediction(const PredictOptions& options);

}  // namespace seer
