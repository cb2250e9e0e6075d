// `seer train`: trains a GNN out of core (inspector samples and plans superbatches, the
// executor gathers through the feature cache and trains). See executor/train_loop.h.
//
// --preset picks the data-path flags of a system Ginex §5 compares (any of those flags
// given explicitly wins over the preset):
//   seer    --pipeline superbatch --io auto --feature-cache belady (budget split auto)
//   pyg+    --pipeline conventional --io mmap --feature-cache none --ncache-budget 0
//   ali+pg  --pipeline conventional --io mmap --feature-cache static-degree
//           --cache-split 50:50 (static neighbor cache : static-degree feature cache)
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "executor/train_loop.h"
#include "inspector/sampler.h"
#include "storage/base/byte_size.h"

namespace seer::cli {
namespace {

// The flags a preset sets, by name, for every preset: pipeline, io, feature-cache,
// ncache-budget, cache-split.
struct Preset {
  const char* name;
  const char* values[5];
};
constexpr Preset kPresets[] = {
    {"seer", {"superbatch", "auto", "belady", "auto", "auto"}},
    {"pyg+", {"conventional", "mmap", "none", "0", "auto"}},
    {"ali+pg", {"conventional", "mmap", "static-degree", "auto", "50:50"}},
};

// Sets every flag in `flags` (same order as Preset::values) that was not given on the
// command line to the preset's value; "none" leaves them alone.
Status ApplyPreset(const CLI::App& cmd, const std::string& preset,
                   const std::vector<std::pair<const char*, std::string*>>& flags) {
  if (preset == "none") return Status::Ok();
  for (const Preset& p : kPresets) {
    if (preset != p.name) continue;
    for (size_t i = 0; i < flags.size(); ++i) {
      if (cmd.count(flags[i].first) == 0) *flags[i].second = p.values[i];
    }
    return Status::Ok();
  }
  return InvalidArgument("unknown preset '" + preset + "' (expected none, seer, pyg+ or ali+pg)");
}

// "auto" -> -1; "NC:FC" (non-negative numbers, not both 0) -> NC / (NC + FC).
Result<double> ParseCacheSplit(const std::string& text) {
  if (text == "auto") return -1.0;
  const size_t colon = text.find(':');
  auto bad = [&] {
    return InvalidArgument("--cache-split '" + text + "': expected NC:FC, e.g. 25:75, or auto");
  };
  if (colon == std::string::npos) return bad();
  double nc = 0, fc = 0;
  try {
    size_t used_nc = 0, used_fc = 0;
    nc = std::stod(text.substr(0, colon), &used_nc);
    fc = std::stod(text.substr(colon + 1), &used_fc);
    if (used_nc != colon || used_fc != text.size() - colon - 1) return bad();
  } catch (const std::exception&) {
    return bad();
  }
  if (!(nc >= 0) || !(fc >= 0) || nc + fc <= 0) return bad();
  return nc / (nc + fc);
}

}  // namespace

CommandMain RegisterTrainCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "train", "Train a GNN (GraphSAGE/GCN/GAT) out of core through the Belady feature cache");
  struct Flags {
    std::string dataset;
    std::string model = "sage";
    int64_t hidden = 256;
    int64_t heads = 4;
    std::string fanouts = "10,10,10";
    double dropout = 0.5;
    double lr = 0.003;
    int64_t epochs = 10;
    int64_t batch_size = 1000;
    int64_t superbatch = 100;
    uint64_t seed = 0;
    int threads = 0;
    int64_t eval_every = 1;
    bool no_train = false;
    bool overlap = true;
    std::string preset = "none";
    std::string pipeline = "superbatch";
    int64_t prefetch = 2;
    std::string cache_split = "auto";
    std::string feature_cache = "belady";
    std::string planner = "auto";
    std::string io = "auto";
    int queue_depth = 64;
    bool buffered = false;
    bool cpu = false;
    std::string memory_budget = "4G";
    std::string ncache_budget = "auto";
    std::string fcache_budget = "auto";
    std::string trace_budget = "auto";
    std::string runtime_dir;
    std::string checkpoint_dir;
    int64_t checkpoint_every = 0;
    bool resume = false;
    int64_t stop_after = -1;
    std::string save_model;
    std::string metrics;
    bool quiet = false;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("dataset", f->dataset, "Dataset directory")->required();
  cmd->add_option("--model", f->model, "sage | gcn | gat | mlp (features only, a baseline)")->capture_default_str();
  cmd->add_option("--hidden", f->hidden, "Hidden units per layer")->capture_default_str();
  cmd->add_option("--heads", f->heads, "GAT attention heads (hidden must be a multiple)")->capture_default_str();
  cmd->add_option("--fanouts", f->fanouts, "Fan-out per layer, hop 1 first; the number of layers")->capture_default_str();
  cmd->add_option("--dropout", f->dropout, "Dropout probability")->capture_default_str();
  cmd->add_option("--lr", f->lr, "Adam learning rate")->capture_default_str();
  cmd->add_option("--epochs", f->epochs, "Training epochs")->capture_default_str();
  cmd->add_option("--batch-size", f->batch_size, "Seeds per mini-batch")->capture_default_str();
  cmd->add_option("--superbatch", f->superbatch, "Mini-batches per superbatch (S)")->capture_default_str();
  cmd->add_option("--seed", f->seed, "Random seed (same seed, same batches and losses on the CPU)")->capture_default_str();
  cmd->add_option("--threads", f->threads, "Sampling threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--eval-every", f->eval_every, "Validate/test every N epochs (0 = after the last only)")->capture_default_str();
  cmd->add_flag("--no-train", f->no_train, "Run the data path (sample, plan, gather, transfer) without the model");
  cmd->add_flag("--overlap,!--no-overlap", f->overlap,
                "Sampling superbatch k+1 overlaps executing k (default: on, measured faster, bench/RESULTS.md); "
                "--no-overlap: only planning overlaps sampling")
      ->capture_default_str();
  cmd->add_option("--preset", f->preset,
                  "none | seer | pyg+ | ali+pg: sets --pipeline, --io, --feature-cache, --ncache-budget and "
                  "--cache-split as the compared systems use them (explicit flags win)")
      ->capture_default_str();
  cmd->add_option("--pipeline", f->pipeline,
                  "superbatch (inspector lookahead, Belady) | conventional (per-batch sampling with prefetch, "
                  "like PyG's DataLoader)")
      ->capture_default_str();
  cmd->add_option("--prefetch", f->prefetch, "Conventional pipeline: batches sampled together, one group ahead")
      ->capture_default_str();
  cmd->add_option("--feature-cache", f->feature_cache, "belady | static-degree | presc | lru | none")->capture_default_str();
  cmd->add_option("--cache-split", f->cache_split,
                  "NC:FC shares of the cache memory for the neighbor and feature caches, e.g. 25:75 (auto = 1:3 "
                  "when the neighbor cache can hold its table)")
      ->capture_default_str();
  cmd->add_option("--planner", f->planner, "Belady planner: auto | cpu | gpu")->capture_default_str();
  cmd->add_option("--io", f->io,
                  "SSD reads: auto | uring | pread (O_DIRECT unless --buffered) | mmap (page cache, read-ahead off)")
      ->capture_default_str();
  cmd->add_option("--queue-depth", f->queue_depth, "Reads in flight per thread")->capture_default_str();
  cmd->add_flag("--buffered", f->buffered, "Buffered reads instead of O_DIRECT (tmpfs, tests)");
  cmd->add_flag("--cpu", f->cpu, "Train on the CPU even when a GPU is present");
  cmd->add_option("--memory-budget", f->memory_budget, "Host memory for tables, caches, traces and staging")->capture_default_str();
  cmd->add_option("--ncache-budget", f->ncache_budget, "Neighbor cache share of the budget (auto or bytes, 0 = none)")->capture_default_str();
  cmd->add_option("--fcache-budget", f->fcache_budget, "Feature cache share of the budget (auto or bytes)")->capture_default_str();
  cmd->add_option("--trace-budget", f->trace_budget, "RAM for traces and changesets before they spill (auto or bytes)")->capture_default_str();
  cmd->add_option("--runtime-dir", f->runtime_dir, "Where spilled traces/changesets go (default: a fresh dir under $TMPDIR)")->capture_default_str();
  cmd->add_option("--checkpoint-dir", f->checkpoint_dir, "Write checkpoints here (checkpoint.ckpt; empty = none)")->capture_default_str();
  cmd->add_option("--checkpoint-every", f->checkpoint_every, "Checkpoint every N superbatches (0 = every epoch)")->capture_default_str();
  cmd->add_flag("--resume", f->resume, "Continue from the checkpoint in --checkpoint-dir");
  cmd->add_option("--stop-after", f->stop_after, "Stop after N superbatches, checkpointing first (-1 = never; for tests)")->capture_default_str();
  cmd->add_option("--save-model", f->save_model, "Write the best-validation weights (torch.load-able dict)")->capture_default_str();
  cmd->add_option("--metrics", f->metrics, "Write per-epoch metrics as JSON lines")->capture_default_str();
  cmd->add_flag("--quiet", f->quiet, "No progress or summaries on stderr");

  return [f, cmd]() -> int {
    const char* name = "train";
    Status preset = ApplyPreset(*cmd, f->preset, {{"--pipeline", &f->pipeline},
                                                  {"--io", &f->io},
                                                  {"--feature-cache", &f->feature_cache},
                                                  {"--ncache-budget", &f->ncache_budget},
                                                  {"--cache-split", &f->cache_split}});
    if (!preset.ok()) return ReportError(name, preset);
    TrainOptions o;
    o.dataset_dir = f->dataset;
    auto model = ParseModelKind(f->model);
    if (!model.ok()) return ReportError(name, model.status());
    o.model = *model;
    o.hidden = f->hidden;
    o.heads = f->heads;
    auto fanouts = ParseFanouts(f->fanouts);
    if (!fanouts.ok()) return ReportError(name, fanouts.status());
    o.fanouts = *fanouts;
    o.dropout = f->dropout;
    o.learning_rate = f->lr;
    o.epochs = f->epochs;
    o.batch_size = f->batch_size;
    o.superbatch = f->superbatch;
    o.seed = f->seed;
    o.num_threads = f->threads;
    o.eval_every = f->eval_every;
    o.no_train = f->no_train;
    o.overlap = f->overlap;
    auto policy = ParsePolicyKind(f->feature_cache);
    if (!policy.ok()) return ReportError(name, policy.status());
    o.cache_policy = *policy;
    auto planner = ParsePlannerDevice(f->planner);
    if (!planner.ok()) return ReportError(name, planner.status());
    o.planner = *planner;
    auto pipeline = ParsePipelineKind(f->pipeline);
    if (!pipeline.ok()) return ReportError(name, pipeline.status());
    o.pipeline = *pipeline;
    o.prefetch_batches = f->prefetch;
    auto share = ParseCacheSplit(f->cache_split);
    if (!share.ok()) return ReportError(name, share.status());
    o.ncache_share = *share;
    if (f->io == "mmap") {
      o.mmap_io = true;
    } else {
      auto io = ParseIoMode(f->io);
      if (!io.ok()) {
        return ReportError(name, InvalidArgument("unknown I/O mode '" + f->io + "' (expected auto, uring, pread or mmap)"));
      }
      o.io = *io;
    }
    o.queue_depth = f->queue_depth;
    o.direct_io = !f->buffered;
    o.use_cuda = !f->cpu;
    auto budget = ParseBytes(f->memory_budget);
    if (!budget.ok()) return ReportError(name, budget.status());
    o.memory_budget_bytes = *budget;
    auto optional_bytes = [&](const std::string& text, int64_t* out) -> Status {
      if (text == "auto") return Status::Ok();
      SEER_ASSIGN_OR_RETURN(*out, ParseBytes(text));
      return Status::Ok();
    };
    for (auto [text, out] : {std::pair<const std::string*, int64_t*>{&f->ncache_budget, &o.ncache_budget_bytes},
                             {&f->fcache_budget, &o.fcache_budget_bytes},
                             {&f->trace_budget, &o.trace_budget_bytes}}) {
      Status st = optional_bytes(*text, out);
      if (!st.ok()) return ReportError(name, st);
    }
    o.runtime_dir = f->runtime_dir;
    o.checkpoint_dir = f->checkpoint_dir;
    o.checkpoint_every = f->checkpoint_every;
    o.resume = f->resume;
    o.stop_after_superbatches = f->stop_after;
    o.save_model_path = f->save_model;
    o.metrics_path = f->metrics;
    o.quiet = f->quiet;
    o.show_progress = !f->quiet;
    auto summary = RunTraining(o);
    if (!summary.ok()) return ReportError(name, summary.status());
    // The results go to stdout even with --quiet (which silences stderr only), so
    // scripts can read them: "test accuracy X" is the last accuracy line.
    if (!o.no_train && !summary->stopped_early) {
      std::printf("test accuracy %.4f\nbest valid accuracy %.4f (epoch %lld)\n", summary->test_accuracy,
                  summary->best_valid_accuracy, static_cast<long long>(summary->best_epoch + 1));
    }
    std::printf("peak RSS bytes %lld\n", static_cast<long long>(summary->peak_rss_bytes));
    return 0;
  };
}

}  // namespace seer::cli
