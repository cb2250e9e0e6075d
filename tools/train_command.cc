// `seer train`: trains a GNN out of core (inspector samples and plans superbatches, the
// executor gathers through the feature cache and trains). See executor/train_loop.h.
// Every flag is bound to a TrainOptions field (executor/train_options.h), which holds
// the defaults --help prints.
//
// --preset picks the data-path flags of a system Ginex §5 compares (any of those flags
// given explicitly wins over the preset):
//   seer    --pipeline superbatch --io auto --feature-cache belady (budget split auto)
//   pyg+    --pipeline conventional --io mmap --feature-cache none --ncache-budget 0
//   ali+pg  --pipeline conventional --io mmap --feature-cache static-degree
//           --cache-split 50:50 (static neighbor cache : static-degree feature cache)
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "executor/checkpoint_file.h"
#include "executor/interrupt.h"
#include "executor/train_loop.h"
#include "storage/base/atomic_file.h"
#include "storage/base/parse_number.h"
#include "storage/base/stale_temp.h"
#include "storage/dataset/feature_units.h"
#include "flag_binding.h"
#include "local_launch.h"
#include "train_flags.h"
#include "commands.h"

namespace seer::cli {
namespace {

enum class Preset { kNone, kSeer, kPygPlus, kAliPg };
constexpr NameValue<Preset> kPresetNames[] = {
    {"none", Preset::kNone}, {"seer", Preset::kSeer}, {"pyg+", Preset::kPygPlus}, {"ali+pg", Preset::kAliPg}};

// The flags a preset sets, as if typed on the command line.
struct PresetFlags {
  Preset preset;
  std::pair<const char*, const char*> flags[5];
};
constexpr PresetFlags kPresetFlags[] = {
    {Preset::kSeer,
     {{"--pipeline", "superbatch"}, {"--io", "auto"}, {"--feature-cache", "belady"}, {"--ncache-budget", "auto"},
      {"--cache-split", "auto"}}},
    {Preset::kPygPlus,
     {{"--pipeline", "conventional"}, {"--io", "mmap"}, {"--feature-cache", "none"}, {"--ncache-budget", "0"},
      {"--cache-split", "auto"}}},
    {Preset::kAliPg,
     {{"--pipeline", "conventional"}, {"--io", "mmap"}, {"--feature-cache", "static-degree"},
      {"--ncache-budget", "auto"}, {"--cache-split", "50:50"}}},
};

// Gives every flag of `preset` that was not on the command line (or in --config) the
// preset's value, through the flag's own parser.
void ApplyPreset(CLI::App& cmd, Preset preset) {
  for (const PresetFlags& p : kPresetFlags) {
    if (p.preset != preset) continue;
    for (const auto& [flag, value] : p.flags) {
      CLI::Option* option = cmd.get_option(flag);
      if (option->count() > 0) continue;
      option->add_result(value);
      option->run_callback();
    }
  }
}

// "auto" -> -1; "NC:FC" (non-negative numbers, not both 0) -> NC / (NC + FC).
Result<double> ParseCacheSplit(const std::string& text) {
  if (text == "auto") return -1.0;
  const size_t colon = text.find(':');
  auto bad = [&] {
    return InvalidArgument("--cache-split '" + text + "': expected NC:FC, e.g. 25:75, or auto");
  };
  if (colon == std::string::npos) return bad();
  const std::optional<double> nc = ParseNumber<double>(std::string_view(text).substr(0, colon));
  const std::optional<double> fc = ParseNumber<double>(std::string_view(text).substr(colon + 1));
  if (!nc || !fc || !(*nc >= 0) || !(*fc >= 0) || *nc + *fc <= 0 || std::isinf(*nc + *fc)) return bad();
  return *nc / (*nc + *fc);
}

std::string CacheSplitText(double ncache_share) {
  if (ncache_share < 0) return "auto";
  return fmt::format("{:g}:{:g}", 100 * ncache_share, 100 * (1 - ncache_share));
}

// "auto" -> 0; a positive number of batches.
Result<int64_t> ParseSuperbatch(const std::string& text) {
  if (text == "auto") return int64_t{0};
  const std::optional<int64_t> value = ParseNumber<int64_t>(text);
  if (value && *value > 0) return *value;
  return InvalidArgument("--superbatch '" + text + "': expected a number of batches >= 1, or auto");
}

std::string SuperbatchText(int64_t superbatch) { return superbatch <= 0 ? "auto" : std::to_string(superbatch); }

// --checkpoint-every: "N" superbatches, or a duration "30s", "10m", "1.5h" (timed
// checkpoints at the next batch boundary); "0" = only at the end of every epoch.
Status StoreCheckpointEvery(const std::string& text, TrainOptions* o) {
  auto bad = [&] {
    return InvalidArgument("--checkpoint-every '" + text +
                           "': expected a number of superbatches or a duration such as 30s, 10m or 2h (0 = off)");
  };
  if (const std::optional<int64_t> n = ParseNumber<int64_t>(text)) {
    if (*n < 0) return bad();
    o->checkpoint_every = *n;
    o->checkpoint_every_seconds = 0;
    return Status::Ok();
  }
  if (text.empty()) return bad();
  const char unit = text.back();
  const double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
  const std::optional<double> value = ParseNumber<double>(std::string_view(text).substr(0, text.size() - 1));
  if (scale == 0 || !value || !(*value >= 0) || !std::isfinite(*value * scale)) return bad();
  o->checkpoint_every = 0;
  o->checkpoint_every_seconds = *value * scale;
  return Status::Ok();
}

// The one line a stopped run ends with: what was saved and how to go on.
std::string StopLine(const TrainOptions& o, const TrainSummary& s) {
  const std::string stopped = "stopped by " + StopSignalName(s.interrupted_by);
  if (!s.training_started) return stopped + " before training started: nothing saved";
  const TrainPosition& at = s.final_position;
  const std::string where = fmt::format(" in epoch {}/{} after {} of its {} batches", at.epoch + 1, o.epochs,
                                        at.epoch_batches, s.batches_per_epoch);
  if (!s.checkpoint_path.empty()) {
    return stopped + where + ": checkpoint saved to " + s.checkpoint_path + "; resume with: " + ResumeCommandLine();
  }
  if (o.no_train) return stopped + where + ": nothing to save (--no-train)";
  return stopped + where +
         ": nothing saved (no --checkpoint-dir); start a run with --checkpoint-dir DIR to make it resumable";
}

// --resume from the checkpoint alone. Every checkpoint records the run's settings
// (TrainOptions::settings): the dataset's path, the flags below as the run used them,
// and every other flag given on the command line or in --config as typed. A resume
// takes each one it is not given again; the flags below, given again, must agree.
struct RunSetting {
  const char* flag;
  std::string (*text)(const TrainOptions&);
};
// The flags that shape the model and the batches (their values as the run used them).
const RunSetting kRunSettings[] = {
    {"--model", [](const TrainOptions& o) -> std::string { return NameOf(kModelKindNames, o.model); }},
    {"--hidden", [](const TrainOptions& o) { return std::to_string(o.hidden); }},
    {"--heads", [](const TrainOptions& o) { return std::to_string(o.heads); }},
    {"--gcn-norm", [](const TrainOptions& o) -> std::string { return NameOf(kGcnNormNames, o.gcn_norm); }},
    {"--fanouts", [](const TrainOptions& o) { return fmt::format("{}", fmt::join(o.fanouts, ",")); }},
    {"--target-type", [](const TrainOptions& o) { return o.target_type; }},
    {"--relation-fanouts", [](const TrainOptions& o) { return o.relation_fanouts; }},
    {"--dropout", [](const TrainOptions& o) { return fmt::format("{}", o.dropout); }},
    {"--batch-size", [](const TrainOptions& o) { return std::to_string(o.batch_size); }},
    {"--seed", [](const TrainOptions& o) { return std::to_string(o.seed); }},
    {"--superbatch", [](const TrainOptions& o) { return SuperbatchText(o.superbatch); }},
    {"--pipeline", [](const TrainOptions& o) -> std::string { return PipelineKindName(o.pipeline); }},
    {"--prefetch", [](const TrainOptions& o) { return std::to_string(o.prefetch_batches); }},
    {"--task", [](const TrainOptions& o) -> std::string { return ModelTaskName(o.task); }},
    {"--scorer", [](const TrainOptions& o) -> std::string { return LinkScorerName(o.scorer); }},
    {"--negatives", [](const TrainOptions& o) { return std::to_string(o.link.negatives); }},
    {"--negative-dist", [](const TrainOptions& o) -> std::string { return NegativeDistributionName(o.link.distribution); }},
    {"--shared-negatives", [](const TrainOptions& o) -> std::string { return o.link.shared ? "true" : "false"; }},
};
// Never recorded: where this run's checkpoint is, the request to resume, the test stop,
// the rendezvous of this particular start (--nproc is recorded as the ranks' count).
const char* const kNotRecorded[] = {"--resume", "--checkpoint-dir", "--stop-after", "--config", "--help",
                                    "--nproc", "--rank", "--world-size", "--local-rank", "--master-addr",
                                    "--master-port"};

bool IsRecorded(const std::string& flag) {
  return std::none_of(std::begin(kNotRecorded), std::end(kNotRecorded), [&](const char* f) { return flag == f; });
}

// The first long name of a flag ("--overlap" for "--overlap,!--no-overlap"); "" for a positional.
std::string FlagName(const CLI::Option& option) {
  return option.get_lnames().empty() ? "" : "--" + option.get_lnames().front();
}

// `path` made absolute, so a resume from another working directory finds the same files.
std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec || path.empty() ? path : absolute.lexically_normal().string();
}

// What a checkpoint of this run records (TrainOptions::settings).
std::map<std::string, std::string> RecordSettings(const CLI::App& cmd, const TrainOptions& o) {
  std::map<std::string, std::string> settings;
  settings["dataset"] = AbsolutePath(o.dataset_dir);
  for (const CLI::Option* option : cmd.get_options()) {
    const std::string flag = FlagName(*option);
    if (flag.empty() || !IsRecorded(flag) || option->count() == 0 || option->results().empty()) continue;
    const bool is_path = flag == "--metrics" || flag == "--save-model" || flag == "--runtime-dir";
    settings[flag] = is_path ? AbsolutePath(option->results().back()) : option->results().back();
  }
  for (const RunSetting& s : kRunSettings) settings[s.flag] = s.text(o);
  // A rank started by `--nproc N` (tools/local_launch.h) records N, so a resume starts as many.
  const char* world = std::getenv("WORLD_SIZE");
  if (std::getenv("SEER_LAUNCH_COMMAND") != nullptr && world != nullptr) settings["--nproc"] = world;
  return settings;
}

// --resume: compares the flags given again with the checkpoint's settings (every
// difference at once, one per line) and takes the checkpoint's value for every flag not
// given. A missing or unreadable checkpoint is left to the Checkpointer to name.
Status RestoreCheckpointSettings(CLI::App& cmd, TrainOptions* o, int* nproc) {
  const std::string path = o->checkpoint_dir + "/checkpoint.ckpt";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::Ok();
  SEER_ASSIGN_OR_RETURN(CheckpointHeader header, ReadCheckpointHeader(path));
  const std::map<std::string, std::string>& saved = header.position.settings;
  if (saved.empty()) {
    if (!o->dataset_dir.empty()) return Status::Ok();
    return InvalidArgument(path + ": this checkpoint does not record its run's settings (written by an older Seer): "
                                  "give the dataset and the flags of the run as well");
  }
  std::string differences;
  for (const RunSetting& s : kRunSettings) {
    const auto it = saved.find(s.flag);
    if (it == saved.end() || cmd.get_option(s.flag)->count() == 0) continue;
    const std::string given = s.text(*o);
    if (given != it->second) differences += fmt::format("\n  {}: checkpoint {}, given {}", s.flag, it->second, given);
  }
  if (!differences.empty()) {
    return InvalidArgument(path + ": the flags given differ from the checkpoint's (leave them out to continue with "
                                  "the checkpoint's values, or start a new run in another --checkpoint-dir):" +
                           differences);
  }
  for (const auto& [flag, value] : saved) {
    if (flag == "dataset") {
      if (o->dataset_dir.empty()) o->dataset_dir = value;
    } else if (flag == "--nproc") {
      // Not inside a rank (the launcher or torchrun set WORLD_SIZE) and not when given.
      if (cmd.get_option("--nproc")->count() == 0 && std::getenv("WORLD_SIZE") == nullptr) {
        const std::optional<int> n = ParseNumber<int>(value);
        if (!n || *n < 1) return Corrupt(path + ": recorded --nproc '" + value + "' is not a number of ranks");
        *nproc = *n;
      }
    } else if (CLI::Option* option = cmd.get_option_no_throw(flag);
               option != nullptr && IsRecorded(flag) && option->count() == 0) {
      option->add_result(value);
      option->run_callback();
    }
  }
  return Status::Ok();
}

void AddModelFlags(CLI::App* cmd, TrainOptions* o) {
  AddEnumOption(cmd, "--model", &o->model, kModelKindNames, "model", "GNN (mlp: features only, a baseline)");
  cmd->add_option("--hidden", o->hidden, "Hidden units per layer")->capture_default_str();
  cmd->add_option("--heads", o->heads, "GAT attention heads (hidden must be a multiple)")->capture_default_str();
  AddEnumOption(cmd, "--gcn-norm", &o->gcn_norm, kGcnNormNames, "GCN normalisation",
                "Degrees GCN normalises by (graph: the full graph, D^-1/2 (A+I) D^-1/2; block: the sampled block)");
  AddFanoutsOption(cmd, "--fanouts", &o->fanouts, "Fan-out per layer, hop 1 first; the number of layers");
  cmd->add_option("--target-type", o->target_type,
                  "Typed datasets: the node type to classify (default: the only node type with labels)");
  cmd->add_option("--relation-fanouts", o->relation_fanouts,
                  "Typed datasets: per-relation fan-outs, e.g. 'cites=15,10;paper__written_by__author=5,5' (a relation "
                  "by its key SRC__NAME__DST or its unique NAME; others use --fanouts)");
  cmd->add_option("--dropout", o->dropout, "Dropout probability")->capture_default_str();
  cmd->add_option("--lr", o->learning_rate, "Adam learning rate")->capture_default_str();
  AddEnumOption(cmd, "--task", &o->task, kModelTaskNames, "task",
                "node: classify nodes (labels.bin, train/valid/test.bin); link: predict edges (every edge of the "
                "dataset trains; hold out valid/test edges first with seer split-edges)");
  AddEnumOption(cmd, "--scorer", &o->scorer, kLinkScorerNames, "scorer",
                "--task link: a pair's score from its two final embeddings (dot: their dot product; mlp: a "
                "one-hidden-layer MLP on their element-wise product)");
  cmd->add_option("--negatives", o->link.negatives,
                  "--task link: negatives per training edge (per batch with --shared-negatives), drawn by the "
                  "inspector so the cache plans their rows")
      ->capture_default_str();
  AddEnumOption(cmd, "--negative-dist", &o->link.distribution, kNegativeDistributionNames, "negative distribution",
                "--task link: uniform over the nodes, or degree: proportional to in-degree");
  cmd->add_flag("--shared-negatives", o->link.shared,
                "--task link: one set of --negatives negatives per batch, shared by all its edges");
  cmd->add_option("--eval-negatives", o->eval_negatives,
                  "--task link: negatives per held-out edge when the dataset has none of its own "
                  "(seer split-edges --eval-negatives K), drawn once from --seed")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, LinkSeedOptions::kMaxNegatives));
}

void AddScheduleFlags(CLI::App* cmd, TrainOptions* o) {
  cmd->add_option("--epochs", o->epochs, "Training epochs")->capture_default_str();
  AddParsedOption(cmd, "--superbatch", &o->superbatch, ParseSuperbatch, SuperbatchText(o->superbatch),
                  "Mini-batches per superbatch (S), the planner's lookahead; auto = chosen from the budget and "
                  "the pilot batches: the whole epoch (at most 400) when the inspector's RAM does not grow with S "
                  "(the split line says why)");
  cmd->add_option("--eval-every", o->eval_every,
                  "Validate every N epochs and after the last (0 = never); the test split is evaluated once, "
                  "at the end, on the best-validation weights")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--test-every-epoch", o->test_every_epoch,
                "Also evaluate the test split at every validation (costs a test pass per validated epoch)");
  cmd->add_flag("--no-train", o->no_train, "Run the data path (sample, plan, gather, transfer) without the model");
  cmd->add_flag("--overlap,!--no-overlap", o->overlap,
                "Sampling superbatch k+1 overlaps executing k (default: on, measured faster, bench/RESULTS.md); "
                "--no-overlap: only planning overlaps sampling")
      ->capture_default_str();
}

void AddPipelineFlags(CLI::App* cmd, TrainOptions* o, Preset* preset) {
  AddEnumOption(cmd, "--preset", preset, kPresetNames, "preset",
                "Sets --pipeline, --io, --feature-cache, --ncache-budget and --cache-split as the compared "
                "systems use them (explicit flags win)");
  AddEnumOption(cmd, "--pipeline", &o->pipeline, kPipelineKindNames, "pipeline",
                "superbatch = inspector lookahead, Belady; conventional = per-batch sampling with prefetch, "
                "like PyG's DataLoader");
  cmd->add_option("--prefetch", o->prefetch_batches, "Conventional pipeline: batches sampled together, one group ahead")
      ->capture_default_str();
  AddEnumOption(cmd, "--feature-cache", &o->cache_policy, kPolicyKindNames, "cache policy", "Feature-cache policy");
  AddParsedOption(cmd, "--cache-split", &o->ncache_share, ParseCacheSplit, CacheSplitText(o->ncache_share),
                  "NC:FC shares of the cache memory for the neighbor and feature caches, e.g. 25:75 (auto = 1:3 "
                  "when the neighbor cache can hold its table)");
  AddEnumOption(cmd, "--planner", &o->planner, kPlannerDeviceNames, "planner", "Belady planner");
  // --io: the direct reader's modes plus mmap, which reads through the page cache.
  auto parse_io = [](const std::string& text) { return ParseName(kDataIoModeNames, text, "I/O mode"); };
  AddParsedOption(cmd, "--io", &o->io, parse_io, NameOf(kDataIoModeNames, o->io),
                  "SSD reads: " + JoinNames(kIoModeNames, " | ", " | ") +
                      " (O_DIRECT unless --buffered) | mmap (page cache, read-ahead off)");
  cmd->add_option("--queue-depth", o->queue_depth, "Reads in flight per thread")->capture_default_str();
}

void AddMemoryFlags(CLI::App* cmd, TrainOptions* o) {
  AddBytesOrAutoOption(cmd, "--ncache-budget", &o->ncache_budget_bytes,
                       "Neighbor cache share of the budget (auto or bytes, 0 = none)");
  AddBytesOrAutoOption(cmd, "--fcache-budget", &o->fcache_budget_bytes, "Feature cache share of the budget (auto or bytes)");
  AddBytesOption(cmd, "--read-block", &o->read_block_bytes,
                 "Feature reads in aligned blocks of this size (a power of two, e.g. 4K): a miss reads its "
                 "blocks, and belady caches the block's other rows used before what they would evict "
                 "(0 = one read per missed row)");
  AddEnumOption(cmd, "--typed-cache", &o->typed_rows_padded, kTypedCacheNames, "typed feature cache",
                "Typed datasets: how the feature cache holds node types whose rows differ in size (bytes: units of "
                "one size, a featureless type never cached; padded: one row per node, padded to the widest type's; "
                "the device tier, --device-cache, always pads)");
  AddBytesOrAutoOption(cmd, "--device-cache", &o->device_cache_bytes,
                       "Device feature-cache tier in front of the host cache, in bytes of float32 rows (0 = off; auto = "
                       "what the device has left after the model, 0 without a CUDA device); a CPU tensor without one");
  AddBytesOrAutoOption(cmd, "--trace-budget", &o->trace_budget_bytes,
                       "RAM for traces and changesets before they spill (auto or bytes)");
  cmd->add_option("--runtime-dir", o->runtime_dir, "Where spilled traces/changesets go (default: a fresh dir under $TMPDIR)")
      ->capture_default_str();
}

void AddOutputFlags(CLI::App* cmd, TrainOptions* o) {
  cmd->add_option("--checkpoint-dir", o->checkpoint_dir, "Write checkpoints here (checkpoint.ckpt; empty = none)")
      ->capture_default_str();
  AddTextOption(
      cmd, "--checkpoint-every", [o](const std::string& text) { return StoreCheckpointEvery(text, o); }, "10m",
      "Checkpoints inside an epoch (epoch ends always checkpoint): every N superbatches, or every DURATION (30s, "
      "10m, 2h) at the next batch boundary; 0 = at epoch ends only. Default with --checkpoint-dir: 10m. SIGINT/"
      "SIGTERM also checkpoint where the run stands and print the command that resumes it");
  cmd->add_flag("--resume", o->resume, "Continue from the checkpoint in --checkpoint-dir");
  cmd->add_option("--stop-after", o->stop_after_superbatches,
                  "Stop after N superbatches, checkpointing first (-1 = never; for tests)")
      ->capture_default_str();
  cmd->add_option("--save-model", o->save_model_path, "Write the best-validation weights (torch.load-able dict)")
      ->capture_default_str();
  cmd->add_option("--metrics", o->metrics_path, "Write per-epoch metrics as JSON lines")->capture_default_str();
  cmd->add_option("--progress-interval", o->progress_interval_s,
                  "Seconds between progress lines when stderr is not a terminal (0 = one per batch)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  auto quiet = [o] {
    o->quiet = true;
    o->show_progress = false;
  };
  cmd->add_flag_callback("--quiet", quiet, "No progress or summaries on stderr");
}

}  // namespace

CommandMain RegisterTrainCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "train", "Train a GNN (GraphSAGE/GCN/GAT) out of core through the Belady feature cache");
  auto o = std::make_shared<TrainOptions>();
  auto preset = std::make_shared<Preset>(Preset::kNone);
  AddSharedDataPathFlags(cmd, o.get(), /*dataset_required=*/false);  // --resume reads it from the checkpoint
  AddModelFlags(cmd, o.get());
  AddScheduleFlags(cmd, o.get());
  AddPipelineFlags(cmd, o.get(), preset.get());
  AddMemoryFlags(cmd, o.get());
  AddOutputFlags(cmd, o.get());
  auto nproc = std::make_shared<int>(1);
  AddDistributedFlags(cmd, o.get(), nproc.get());

  return [o, preset, cmd, nproc]() -> int {
    if (o->resume && o->checkpoint_dir.empty()) {
      return ReportError("train", "--resume needs --checkpoint-dir DIR (the checkpoint of the run to continue)");
    }
    if (o->resume) {
      if (Status st = RestoreCheckpointSettings(*cmd, o.get(), nproc.get()); !st.ok()) return ReportError("train", st);
    }
    if (o->dataset_dir.empty()) {
      return ReportError("train", "the dataset directory is required (seer train DATASET ...; --resume "
                                  "--checkpoint-dir DIR alone takes it from the checkpoint)");
    }
    if (int launched = LaunchRanksIfAsked("train", *nproc, *o); launched >= 0) return launched;
    ApplyPreset(*cmd, *preset);
    o->settings = RecordSettings(*cmd, *o);
    // Before any work: dead runs' runtime directories ($TMPDIR, an explicit
    // --runtime-dir), and the outputs' folders (an error names the user's path now, not
    // after the training).
    SweepAtStart({o->runtime_dir});
    for (const std::string& out : {o->save_model_path, o->metrics_path}) {
      if (out.empty()) continue;
      if (Status st = CheckOutputPath(out); !st.ok()) return ReportError("train", st);
    }
    // Ctrl-C / SIGTERM: stop at the next batch boundary, checkpoint, say how to resume
    // (executor/interrupt.h); a second one ends the process at once. Ranks started by
    // --nproc leave the notice to their launcher.
    InstallStopSignalHandlers(std::getenv("SEER_LAUNCH_COMMAND") != nullptr
                                  ? nullptr
                                  : "\nseer train: stopping at the next batch boundary (once more to stop at once)\n");
    o->stop_signal = &StopSignalFlag();
    auto summary = RunTraining(*o);
    if (!summary.ok()) return ReportError("train", summary.status());
    if (summary->interrupted_by != 0) {
      if (summary->rank == 0) fmt::print(stderr, "seer train: {}\n", StopLine(*o, *summary));
      return 128 + summary->interrupted_by;
    }
    // Data-parallel runs: rank 0 prints the results (the other ranks' are the same).
    if (summary->rank != 0) return 0;
    // The results go to stdout even with --quiet (which silences stderr only), so
    // scripts can read them: "test accuracy X" is the last accuracy line (link
    // prediction: "test mrr X", "test hits@K X" and "best valid mrr X").
    if (!o->no_train && !summary->stopped_early && o->task == ModelTask::kLink) {
      const LinkMetrics& t = summary->test_link;
      if (t.pairs > 0) {
        fmt::print("test mrr {:.4f}\ntest hits@1 {:.4f}\ntest hits@10 {:.4f}\ntest hits@50 {:.4f}\n", t.mrr(), t.hits(1),
                   t.hits(10), t.hits(50));
      } else {
        fmt::print("test mrr none (no held-out test edges: seer split-edges)\n");
      }
      if (summary->best_epoch >= 0) {
        fmt::print("best valid mrr {:.4f} (epoch {})\n", summary->best_valid_accuracy, summary->best_epoch + 1);
      } else {
        fmt::print("best valid mrr none (not validated: --eval-every 0 or no held-out validation edges)\n");
      }
    } else if (!o->no_train && !summary->stopped_early) {
      fmt::print("test accuracy {}\n", summary->test_accuracy >= 0 ? fmt::format("{:.4f}", summary->test_accuracy)
                                                                     : std::string("none (no labelled test node)"));
      if (summary->best_epoch >= 0) {
        fmt::print("best valid accuracy {:.4f} (epoch {})\n", summary->best_valid_accuracy, summary->best_epoch + 1);
      } else {
        fmt::print("best valid accuracy none (not validated: --eval-every 0 or no labelled validation node)\n");
      }
    }
    fmt::print("peak RSS bytes {}\n", summary->peak_rss_bytes);
    return 0;
  };
}

}  // namespace seer::cli
