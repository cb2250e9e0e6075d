// The options of `seer train` and `seer predict`: the one source of truth for every
// default. The CLI (tools/train_command.cc, tools/predict_command.cc) binds its flags
// straight to these fields, so `--help` prints these defaults; change a default here,
// not in tools/. Plain values.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/policies.h"
#include "executor/data_io_mode.h"
#include "executor/model_config.h"
#include "executor/rank_env.h"
#include "inspector/link_batch.h"
#include "inspector/trace.h"
#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

enum class PipelineKind { kSuperbatch, kConventional };
inline constexpr NameValue<PipelineKind> kPipelineKindNames[] = {
    {"superbatch", PipelineKind::kSuperbatch}, {"conventional", PipelineKind::kConventional}};
// "superbatch" | "conventional"; anything else is kInvalidArgument naming the value.
Result<PipelineKind> ParsePipelineKind(const std::string& text);
const char* PipelineKindName(PipelineKind kind);

// Debug hook: called on the executor thread for every batch with the float32 rows the
// model receives (node_ids.size() × feature_dim, rows in node_ids order).
using BatchRowsHook = std::function<void(const BatchTrace& batch, const float* rows,
                                         int64_t num_rows, int64_t feature_dim)>;
// Called after every training step.
using StepHook = std::function<void(int64_t epoch, int64_t batch_index, double loss)>;

// --checkpoint-every's default with --checkpoint-dir: a checkpoint every 10 minutes.
inline constexpr double kDefaultCheckpointEverySeconds = 600;

struct TrainOptions {
  std::string dataset_dir;
  // Node classification, or link prediction (`--task link`, inspector/link_batch.h):
  // batches of batch_size training edges (every edge of the dataset's topology: hold out
  // valid/test edges first with `seer split-edges`), each with `link.negatives` negatives
  // drawn by the inspector; validation and test rank the held-out edges against their
  // fixed negatives (the dataset's from `split-edges --eval-negatives`, else
  // eval_negatives uniform ones drawn once from the seed).
  ModelTask task = ModelTask::kNode;
  LinkScorer scorer = LinkScorer::kDot;
  LinkSeedOptions link;
  int64_t eval_negatives = 100;
  // Model (in_dim / num_classes / num_layers come from the dataset and fan-outs).
  ModelKind model = ModelKind::kSage;
  int64_t hidden = 256;
  int64_t heads = 4;
  GcnNorm gcn_norm = GcnNorm::kGraph;  // GCN only (executor/model_config.h)
  double dropout = 0.5;
  double learning_rate = 0.003;
  // Sampling and schedule.
  std::vector<int> fanouts = {10, 10, 10};
  // Typed datasets (executor/typed_data.h): the node type to classify ("" = the only one
  // with labels) and per-relation fan-outs ("REL=10,5;REL2=..." by relation key or name,
  // inspector ParseRelationFanouts; "" = `fanouts` for every relation).
  std::string target_type;
  std::string relation_fanouts;
  int64_t batch_size = 1000;
  int64_t superbatch = 0;            // batches per superbatch; 0 = auto (chosen from the budget)
  int64_t epochs = 10;
  // Validation after every eval_every-th epoch and after the last (0 = never: the test
  // split is then evaluated on the final weights). The test split is evaluated once, after
  // training, on the best-validation weights; test_every_epoch also evaluates it with
  // each validation (the old behaviour, for curves).
  int64_t eval_every = 1;
  bool test_every_epoch = false;
  uint64_t seed = 0;
  int num_threads = 0;               // sampling workers (0 = all cores)
  bool no_train = false;             // data path only
  bool overlap = true;               // sampling k+1 overlaps executing k
  PipelineKind pipeline = PipelineKind::kSuperbatch;
  int64_t prefetch_batches = 2;      // conventional: batches sampled together, one group ahead
  // Data path.
  PolicyKind cache_policy = PolicyKind::kBelady;
  PlannerDevice planner = PlannerDevice::kAuto;
  DataIoMode io = DataIoMode::kAuto;  // --io: the direct reader's mode, or mmap (the page cache)
  int queue_depth = 64;
  bool direct_io = true;             // O_DIRECT (false: --buffered); not used with mmap
  bool use_cuda = true;              // train on the GPU when one is present
  // Memory.
  int64_t memory_budget_bytes = int64_t{4} << 30;
  // What the runtime takes before Seer's data path (libtorch, the program, the CUDA
  // context): charged first, so the budget covers the whole process. -1 = measured at
  // start (executor/runtime_footprint.h), 0 = not charged (--budget-scope data).
  int64_t runtime_bytes = -1;
  int64_t ncache_budget_bytes = -1;  // -1 = auto
  int64_t fcache_budget_bytes = -1;  // -1 = auto
  // Block-granular feature reads (cache/read_blocks.h): 0 = per-row reads; B > 0 (a power
  // of two) = a miss reads its B-aligned blocks and Belady admits their free rows.
  int64_t read_block_bytes = 0;
  // Typed datasets: the feature cache's rows padded to the widest type's (--typed-cache
  // padded) instead of cached by bytes (storage/dataset/feature_units.h).
  bool typed_rows_padded = false;
  int64_t device_cache_bytes = 0;    // device feature-cache tier (executor/device_feature_tier.h): 0 = off, -1 = auto
  double ncache_share = -1;          // neighbor cache's share of the cache memory; -1 = auto
  int64_t trace_budget_bytes = -1;   // -1 = from the split (tests force spilling with 0)
  std::string runtime_dir;           // spill files; "" = a fresh dir under $TMPDIR
  // Checkpoints and outputs.
  std::string checkpoint_dir;        // "" = no checkpoints
  int64_t checkpoint_every = 0;      // superbatches; 0 = at the end of every epoch
  // Timed checkpoints at batch boundaries (inside a superbatch too), seconds since the
  // last checkpoint; 0 = off; -1 = auto: kDefaultCheckpointEverySeconds with a
  // checkpoint_dir and checkpoint_every 0, else off.
  double checkpoint_every_seconds = -1;
  bool resume = false;
  // The command line's settings (flag -> text, "dataset" -> its path), recorded in every
  // checkpoint (TrainPosition::settings): `seer train --resume --checkpoint-dir K` alone
  // continues with them (tools/train_command.cc). Empty for library callers.
  std::map<std::string, std::string> settings;
  int64_t stop_after_superbatches = -1;  // tests: stop (after checkpointing) early
  std::string save_model_path;
  std::string metrics_path;          // JSON lines
  bool show_progress = true;
  double progress_interval_s = 10;   // plain lines when stderr is not a TTY
  bool quiet = false;                // no summary lines on stderr
  BatchRowsHook batch_hook;
  StepHook step_hook;
  // SIGINT/SIGTERM (executor/interrupt.h; null = never): once it holds a signal number,
  // the run stops at the next batch boundary (every rank at the same one), checkpoints
  // there when checkpoint_dir is set and returns (TrainSummary::interrupted_by).
  const std::atomic<int>* stop_signal = nullptr;
  // Data-parallel training (executor/rank_env.h): rank and world size from the launcher's
  // environment (torchrun, MPI, Slurm) or these flags; world size 1 = one process.
  // batch_size is per rank. Rank 0 alone writes metrics, checkpoints and the model.
  DistOptions dist;
};

struct PredictOptions {
  std::string dataset_dir;
  std::string model_path;
  // empty = the test split; a link prediction model's default is every node (its
  // embeddings), or with `pairs` the pairs' endpoints
  std::vector<int64_t> nodes;
  // Link prediction models only: score these (src, dst) node pairs (PredictResult::
  // pair_scores); `nodes` must then be empty.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  // The task the model must have been trained for (nullopt = whichever it was): a model
  // of the other task is refused, naming both.
  std::optional<ModelTask> task;
  // Typed datasets: the node type the model classifies ("" = the only one with labels);
  // `nodes` are then that type's local ids, and so are PredictResult::nodes.
  std::string target_type;
  std::vector<int> fanouts;          // empty = the model's training fan-outs (10 per layer if unrecorded)
  int64_t batch_size = 1000;
  int64_t superbatch = 100;
  uint64_t seed = 0;
  int num_threads = 0;
  DataIoMode io = DataIoMode::kAuto;
  bool direct_io = true;
  bool use_cuda = true;
  int64_t memory_budget_bytes = int64_t{4} << 30;
  int64_t runtime_bytes = -1;  // as TrainOptions::runtime_bytes
  bool want_embeddings = false;
  bool want_logits = false;          // PredictResult::logits (the last layer's outputs)
  bool show_progress = true;
  // The model's recorded dataset identity differs from the dataset's: predict anyway
  // (refused by default, naming both).
  bool allow_other_dataset = false;
  // Data-parallel prediction (executor/rank_env.h): each rank predicts a contiguous share
  // of the distinct nodes and the results are summed over the ranks, so every rank
  // returns the whole result (the CLI writes on rank 0). World size 1 = no process group.
  DistOptions dist;
};

}  // namespace seer
