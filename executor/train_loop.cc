// RunTraining and RunPrediction: the list of steps. Each step is a piece with its own
// contract (see the list at the top of train_loop.h); what is left here is the glue
// between the pieces.
#include "executor/train_loop.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cache/degrees.h"
#include "executor/cache_policy.h"
#include "executor/checkpointer.h"
#include "executor/data_path.h"
#include "executor/device_tier.h"
#include "executor/evaluation.h"
#include "executor/label_table.h"
#include "executor/process_group.h"
#include "executor/rank_env.h"
#include "executor/superbatch_pipeline.h"
#include "executor/training_executor.h"
#include "inspector/trace_stream.h"
#include "kernels/device.h"
#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"

namespace seer {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Batch buffers, traces and plans are large, short-lived allocations made on several
// threads. glibc's dynamic mmap threshold would move them onto arena heaps after the
// first free, where freed pages stay resident; a fixed threshold keeps them mmapped so
// peak RSS tracks the memory budget (measured: ~10 MiB less on a 32 MiB budget).
void KeepLargeAllocationsMapped() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
#endif
}

std::string JoinFanouts(const std::vector<int>& fanouts) { return fmt::format("{}", fmt::join(fanouts, ",")); }

Status ValidateTrainOptions(const TrainOptions& o) {
  if (o.epochs < 0 || o.batch_size <= 0 || o.superbatch < 0 || o.prefetch_batches <= 0 || o.fanouts.empty()) {
    return InvalidArgument(
        "train: epochs >= 0, batch size >= 1, superbatch >= 1 (or auto), prefetch >= 1 and at least one fan-out are "
        "required");
  }
  if (o.pipeline == PipelineKind::kConventional && o.cache_policy == PolicyKind::kBelady) {
    return InvalidArgument(
        "--feature-cache belady needs the superbatch pipeline's lookahead; with --pipeline conventional use "
        "static-degree, presc, lru or none");
  }
  if (o.ncache_share > 1) return InvalidArgument("the neighbor cache's share of the cache memory must be <= 1");
  return Status::Ok();
}

// Batches per superbatch: the lookahead (0 = auto: the memory split picks it), or
// (conventional pipeline) the `prefetch_batches` sampled together one group ahead (the
// planner then only runs online/static policies).
int64_t BatchesPerSuperbatch(const TrainOptions& o) {
  return o.pipeline == PipelineKind::kConventional ? o.prefetch_batches : o.superbatch;
}

// The fan-outs the sampler uses: none for the MLP, which reads only the seeds' rows.
std::vector<int> SampledFanouts(const TrainOptions& o) {
  return o.model == ModelKind::kMlp ? std::vector<int>{} : o.fanouts;
}

MemoryBudgetRequest TrainingBudgetRequest(const TrainOptions& o) {
  MemoryBudgetRequest request;
  request.budget_bytes = o.memory_budget_bytes;
  request.batch_size = o.batch_size;
  request.fanouts = SampledFanouts(o);
  request.ncache_budget_bytes = o.ncache_budget_bytes;
  request.fcache_budget_bytes = o.fcache_budget_bytes;
  request.ncache_share = o.ncache_share;
  // Training reserves the model's host working set; on a GPU its activations live in
  // device memory (ModelRunner trains on CUDA when asked and a device is present).
  request.reserve_model = !o.no_train;
  request.model.kind = o.model;
  request.model.hidden = o.hidden;
  request.model.heads = o.heads;
  request.model.num_layers = static_cast<int64_t>(o.fanouts.size());
  request.feature_cache_used = o.cache_policy != PolicyKind::kNone;
  request.model_on_host = !(o.use_cuda && kernels::CudaDeviceCount() > 0);
  // The inspector streams traces through the runtime dir: its RAM is a constant
  // (StreamingInspectorBytes) plus Belady's streaming sort buffer; LRU still reads a
  // superbatch's ids into RAM (8 B per access + its bookkeeping).
  request.superbatch = BatchesPerSuperbatch(o);
  request.traces_in_flight = 3;
  request.streaming_inspector = true;
  request.sampling_threads = o.num_threads;
  request.planner_working_bytes = o.cache_policy == PolicyKind::kBelady ? kPlannerWorkingAuto : 0;  // scaled with the budget
  request.node_score_bytes_per_node = o.cache_policy == PolicyKind::kBelady ? kBeladyScoreBytesPerNode : 0;
  request.policy_bytes_per_row = PolicyBytesPerCachedRow(o.cache_policy);
  request.planner_bytes_per_access = o.cache_policy == PolicyKind::kLru ? 16 : 0;
  return request;
}

DataIoOptions TrainingIo(const TrainOptions& o) {
  DataIoOptions io;
  io.mode = o.io;
  io.queue_depth = o.queue_depth;
  io.direct = o.direct_io;
  io.quiet = o.quiet;
  io.mmap = o.mmap_io;
  io.pin_feature_cache = o.use_cuda && kernels::CudaDeviceCount() > 0;
  return io;
}

RunDescription DescribeRun(const TrainOptions& o, const DataPath& data) {
  RunDescription run;
  run.split = data.split();
  run.policy = PolicyKindName(o.cache_policy);
  run.model = o.no_train ? "none" : ModelKindName(o.model);
  run.pipeline = PipelineKindName(o.pipeline);
  run.io = o.mmap_io ? "mmap" : IoModeName(data.features().mode());
  run.overlap = o.overlap;
  run.direct = data.features().direct();
  run.batches_per_superbatch = data.split().superbatch;
  run.ncache_share = o.ncache_share;
  return run;
}

// The run's seeds (train, valid, test) and the labels of all of them.
struct SeedSplits {
  std::vector<int64_t> train, valid, test;
  LabelTable labels;
};

Result<SeedSplits> LoadSeedSplits(const DataPath& data, PilotSpec& pilot) {
  SeedSplits s;
  const Dataset& dataset = data.dataset();
  SEER_ASSIGN_OR_RETURN(s.train, data.TakeSplit(pilot, "train"));
  SEER_ASSIGN_OR_RETURN(s.valid, dataset.LoadSplit("valid"));
  SEER_ASSIGN_OR_RETURN(s.test, dataset.LoadSplit("test"));
  if (s.train.empty()) return InvalidArgument(dataset.PathOf(dataset_files::kTrain) + ": no training nodes");
  SEER_ASSIGN_OR_RETURN(s.labels, LabelTable::LoadAll(dataset, {&s.train, &s.valid, &s.test}));
  return s;
}

// The training sampler and the evaluation samplers (no shuffle; absent for an empty split).
// Data-parallel runs: the training sampler takes this rank's share of every global batch
// (SuperbatchOptions::rank), the evaluation samplers a contiguous shard of each split.
Result<TrainingSamplers> MakeSamplers(const TrainOptions& o, const DataPath& data, const SeedSplits& seeds,
                                      const RankEnv& env) {
  SuperbatchOptions options = MakeSuperbatchOptions(o.batch_size, data.split().superbatch, o.num_threads,
                                                   SampledFanouts(o), o.seed, /*shuffle=*/true);
  options.rank = env.rank;
  options.world_size = env.world_size;
  const TopologyView view = data.topology().view();
  TrainingSamplers s;
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler train, SuperbatchSampler::Create(view, seeds.train, options));
  if (train.num_batches() == 0) {
    return InvalidArgument(fmt::format("{} training seeds cannot give each of {} ranks a batch",
                                       seeds.train.size(), env.world_size));
  }
  s.train.emplace(std::move(train));
  options.shuffle = false;
  options.rank = 0;
  options.world_size = 1;
  // Evaluation samples a superbatch whole into RAM: a few batches at a time suffice (its
  // batches do not depend on the grouping), so its RAM does not grow with S either.
  options.superbatch_size = std::min(options.superbatch_size, TraceChunkBatches(o.num_threads));
  for (auto [ids, out] : {std::pair{&seeds.valid, &s.valid}, std::pair{&seeds.test, &s.test}}) {
    if (ids->empty()) continue;
    SEER_ASSIGN_OR_RETURN(SuperbatchSampler eval,
                          SuperbatchSampler::Create(view, EvalShard(*ids, env.rank, env.world_size), options));
    out->emplace(std::move(eval));
  }
  return s;
}

// Spilled traces and changesets: --runtime-dir, or a fresh directory under $TMPDIR that
// is removed when the run ends.
class RuntimeDir {
 public:
  static Result<std::unique_ptr<RuntimeDir>> Create(const std::string& requested) {
    std::string dir = requested;
    if (dir.empty()) {
      dir = (std::filesystem::temp_directory_path() /
             fmt::format("seer-train-{}-{}", getpid(), Clock::now().time_since_epoch().count()))
                .string();
    }
    SEER_RETURN_IF_ERROR(MakeDirectories(dir));
    return std::unique_ptr<RuntimeDir>(new RuntimeDir(dir, requested.empty()));
  }
  ~RuntimeDir() {
    std::error_code ec;
    if (owned_) std::filesystem::remove_all(dir_, ec);
  }
  const std::string& path() const { return dir_; }

 private:
  RuntimeDir(std::string dir, bool owned) : dir_(std::move(dir)), owned_(owned) {}
  std::string dir_;
  bool owned_;
};

// The model (null with --no-train), announced on stderr.
Result<std::unique_ptr<ModelRunner>> CreateModel(const TrainOptions& o, const DatasetManifest& m,
                                                 const MemoryBudgetRequest& request, EpochReporter& reporter) {
  if (o.no_train) return std::unique_ptr<ModelRunner>();
  ModelConfig config;
  config.kind = o.model;
  config.in_dim = m.feature_dim;
  config.hidden = o.hidden;
  config.num_classes = m.num_classes;
  config.num_layers = static_cast<int64_t>(o.fanouts.size());
  config.dropout = o.dropout;
  config.heads = o.heads;
  config.gcn_norm = o.gcn_norm;
  config.dataset = m.Identity();  // recorded in checkpoints and --save-model files
  std::unique_ptr<ModelRunner> model;
  try {
    model = ModelRunner::Create(config, o.learning_rate, o.seed, o.use_cuda);
  } catch (const std::invalid_argument& e) {
    return InvalidArgument(std::string("model: ") + e.what());
  }
  reporter.Say(fmt::format("model {}, {} layers (fan-outs {}), hidden {}, {} parameters, on {}", ModelKindName(o.model),
                           o.fanouts.size(), JoinFanouts(o.fanouts), o.hidden, model->num_parameters(),
                           model->on_cuda() ? "cuda" : "cpu"));
  if (!request.model_on_host && !model->on_cuda()) {
    reporter.Say("WARNING: the memory split assumed GPU training but the model runs on the CPU; its activations "
                 "are not reserved (peak RSS may exceed the budget)");
  }
  return model;
}

// --device-cache: the device tier of the feature cache, or null when off; says its size
// and why after the split line.
Result<std::unique_ptr<DeviceFeatureTier>> MakeTrainingDeviceTier(const TrainOptions& o, const DataPath& data,
                                                                   const MemoryBudgetRequest& request,
                                                                   EpochReporter& reporter) {
  const bool cuda = o.use_cuda && kernels::CudaDeviceCount() > 0;
  std::string reason;
  // auto: what the device has free now (the model's weights are already there) less a
  // training step's working set and an eighth of the free memory as allocator headroom.
  int64_t device_free = -1;
  if (cuda && o.device_cache_bytes < 0) {
    const int64_t free_now = kernels::CudaFreeMemoryBytes();
    if (free_now > 0) {
      device_free = free_now - free_now / 8 - DeviceTrainingWorkingSetBytes(request, data.split());
    }
  }
  const int64_t rows = DeviceCacheRows(o.device_cache_bytes, data.manifest().feature_dim, cuda, device_free, &reason);
  if (o.device_cache_bytes != 0) reporter.Say("device cache: " + reason);
  if (rows <= 0) return std::unique_ptr<DeviceFeatureTier>();
  DeviceTierOptions options;
  options.num_nodes = data.manifest().num_nodes;
  options.capacity_rows = rows;
  options.feature_dim = data.manifest().feature_dim;
  options.use_cuda = o.use_cuda;
  options.planner.device = o.planner;
  return DeviceFeatureTier::Create(options);
}

// (epoch, superbatch) from the resume position to the end.
std::vector<std::pair<int64_t, int64_t>> MakeSchedule(const TrainPosition& from, int64_t epochs, int64_t per_epoch) {
  std::vector<std::pair<int64_t, int64_t>> schedule;
  for (int64_t e = from.epoch; e < epochs; ++e) {
    for (int64_t k = (e == from.epoch ? from.next_superbatch : 0); k < per_epoch; ++k) schedule.emplace_back(e, k);
  }
  return schedule;
}

// After the last epoch: the best-validation model's test accuracy, and --save-model.
// Data-parallel runs: the test accuracy is summed over the ranks' shards, and rank 0
// alone writes the model, after a barrier (every rank has finished).
Status FinishModel(const TrainContext& ctx, const TrainPosition& position, TrainSummary* summary) {
  if (ctx.model == nullptr || summary->stopped_early) return Status::Ok();
  summary->best_valid_accuracy = position.best_valid_accuracy;
  summary->best_epoch = position.best_epoch;
  if (ctx.model->has_best()) {
    ctx.model->RestoreBest();
    if (ctx.samplers.test) {
      SEER_ASSIGN_OR_RETURN(EvalResult test,
                            EvaluateSplit(*ctx.samplers.test, ctx.data.gatherer(), *ctx.model, ctx.labels));
      SEER_ASSIGN_OR_RETURN(test, ReduceEvalResult(test, ctx.group, "test evaluation of the best model"));
      summary->test_accuracy = test.accuracy;
    }
  } else if (!summary->epochs.empty()) {
    summary->test_accuracy = summary->epochs.back().test_accuracy;
  }
  if (ctx.options.save_model_path.empty()) return Status::Ok();
  if (ctx.group != nullptr) {
    SEER_RETURN_IF_ERROR(ctx.group->Barrier("barrier before --save-model"));
    if (ctx.group->rank() != 0) return Status::Ok();
  }
  return ctx.model->SaveModel(ctx.options.save_model_path, /*best=*/true);
}

// --metrics for rank r of a data-parallel run: rank 0 writes the file; every rank writes
// its own when the path contains "{rank}" (replaced by the rank).
std::string RankMetricsPath(const std::string& path, const RankEnv& env) {
  const size_t at = path.find("{rank}");
  if (at != std::string::npos) return path.substr(0, at) + std::to_string(env.rank) + path.substr(at + 6);
  return env.rank == 0 ? path : std::string();
}

// Data-parallel start-up checks, before any training: every rank has the same dataset
// (manifest identity), superbatch size and parameter count; a difference names the ranks.
Status CheckRanksMatch(ProcessGroup& group, const DataPath& data, const ModelRunner* model) {
  const std::string identity = data.manifest().Identity();
  const auto id = static_cast<int64_t>(std::stoull(identity, nullptr, 16));
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> ids, group.AllgatherInt64(id, "dataset identity check"));
  if (std::string odd = RanksDifferingFromRankZero(ids, /*hex=*/true); !odd.empty()) {
    return InvalidArgument(fmt::format("rank {}: the ranks train on different data: rank 0's dataset is {:016x}, "
                                       "{} ({}: each rank needs a copy of the same dataset)",
                                       group.rank(), static_cast<uint64_t>(ids[0]), odd, data.dataset().dir()));
  }
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> s,
                        group.AllgatherInt64(data.split().superbatch, "superbatch size check"));
  if (std::string odd = RanksDifferingFromRankZero(s); !odd.empty()) {
    return InvalidArgument(fmt::format("rank {}: --superbatch auto chose {} batches on rank 0 and differs at {}: "
                                       "give every rank the same --memory-budget or pass --superbatch N",
                                       group.rank(), s[0], odd));
  }
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> params,
                        group.AllgatherInt64(model ? model->num_parameters() : -1, "model size check"));
  if (std::string odd = RanksDifferingFromRankZero(params); !odd.empty()) {
    return InvalidArgument(fmt::format("rank {}: the ranks built different models (rank 0: {} parameters; {})",
                                       group.rank(), params[0], odd));
  }
  return Status::Ok();
}

// --resume in a data-parallel run: rank 0 (the only writer) sends its checkpoint's bytes,
// the other ranks load them from their runtime directory; then rank 0's weights go to
// every rank (also without a resume, so every rank starts from the same weights).
Result<TrainPosition> ResumeRanks(ProcessGroup& group, const TrainOptions& o, const Checkpointer& checkpointer,
                                  ModelRunner* model, const std::string& runtime_dir, TrainPosition position) {
  if (model == nullptr) return position;
  if (o.resume) {
    std::string bytes;
    if (group.rank() == 0) {
      SEER_ASSIGN_OR_RETURN(bytes, ReadWholeFile(checkpointer.path()));
    }
    SEER_RETURN_IF_ERROR(group.BroadcastBytes(&bytes, 0, "checkpoint broadcast for --resume"));
    if (group.rank() != 0) {
      const std::string copy = runtime_dir + "/resume-from-rank0.ckpt";
      SEER_RETURN_IF_ERROR(WriteFileAtomically(copy, bytes));
      SEER_ASSIGN_OR_RETURN(position, model->LoadCheckpoint(copy));
      std::error_code ec;
      std::filesystem::remove(copy, ec);
      if (position.seed != o.seed) {
        return InvalidArgument(fmt::format("{} (from rank 0): checkpoint was written with --seed {}, this run uses {}",
                                           checkpointer.path(), position.seed, o.seed));
      }
    }
  }
  SEER_RETURN_IF_ERROR(model->BroadcastParameters(group, 0));
  return position;
}

RunOutcome Outcome(const TrainOptions& o, const TrainSummary& summary, bool trained) {
  RunOutcome outcome;
  outcome.trained = trained;
  outcome.best_valid_accuracy = summary.best_valid_accuracy;
  outcome.best_epoch = summary.best_epoch;
  outcome.test_accuracy = summary.test_accuracy;
  outcome.peak_rss_bytes = summary.peak_rss_bytes;
  outcome.seconds = summary.seconds;
  outcome.stopped_early = summary.stopped_early;
  outcome.budget_bytes = o.memory_budget_bytes;
  return outcome;
}

}  // namespace

Result<PipelineKind> ParsePipelineKind(const std::string& text) {
  return ParseName(kPipelineKindNames, text, "pipeline");
}

const char* PipelineKindName(PipelineKind kind) { return NameOf(kPipelineKindNames, kind); }

Result<TrainSummary> RunTraining(const TrainOptions& o) {
  const auto run_start = Clock::now();
  KeepLargeAllocationsMapped();
  SEER_RETURN_IF_ERROR(ValidateTrainOptions(o));
  // Data-parallel: rank and world from the launcher or the flags; world size 1 makes no
  // process group and runs exactly as a plain single-process run.
  SEER_ASSIGN_OR_RETURN(const RankEnv env, ResolveRankEnv(o.dist));
  std::unique_ptr<ProcessGroup> group;
  if (env.distributed()) {
    SEER_ASSIGN_OR_RETURN(group, ProcessGroup::Connect(env));
  }
  SEER_ASSIGN_OR_RETURN(Checkpointer checkpointer, Checkpointer::Open({o.checkpoint_dir, o.checkpoint_every, o.resume,
                                                                       o.no_train, /*writer=*/env.rank == 0}));

  // The data path, sized by the pilot batches; then the reporter (metrics start line).
  const MemoryBudgetRequest request = TrainingBudgetRequest(o);
  PilotSpec pilot = MakePilot(o.batch_size, SampledFanouts(o), o.seed, o.num_threads);
  pilot.split = "train";
  pilot.epochs = o.epochs;
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<DataPath> data, DataPath::Open(o.dataset_dir, request, TrainingIo(o), &pilot));
  // The run record (dataset identity, batching flags): a resume with others is refused
  // before anything is written (the metrics file included).
  const auto run_record = TrainRunRecord(o, data->split().superbatch, data->manifest().Identity(), env.world_size);
  SEER_RETURN_IF_ERROR(checkpointer.CheckRun(run_record));
  TrainSummary summary;
  summary.split = data->split();
  summary.rank = env.rank;
  summary.world_size = env.world_size;
  // Rank 0 reports; the other ranks are quiet and write metrics only to a "{rank}" path.
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<EpochReporter> reporter,
                        EpochReporter::Open({env.distributed() ? RankMetricsPath(o.metrics_path, env) : o.metrics_path,
                                             o.quiet || env.rank != 0, o.show_progress && env.rank == 0,
                                             o.progress_interval_s, o.resume},
                                            DescribeRun(o, *data)));
  if (group) {
    reporter->Say(fmt::format("data-parallel: {} ranks ({}), rendezvous at {}:{}, {} seeds per rank per step "
                              "({} per step in all); --memory-budget is per rank",
                              env.world_size, env.source, env.master_addr, env.master_port, o.batch_size,
                              o.batch_size * env.world_size));
  }
  reporter->SaySplit(data->split());

  // Seeds, labels, samplers, the runtime directory and the feature-cache policy.
  SEER_ASSIGN_OR_RETURN(SeedSplits seeds, LoadSeedSplits(*data, pilot));
  SEER_ASSIGN_OR_RETURN(TrainingSamplers samplers, MakeSamplers(o, *data, seeds, env));
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<RuntimeDir> runtime_dir, RuntimeDir::Create(o.runtime_dir));
  const int64_t trace_budget = o.trace_budget_bytes >= 0 ? o.trace_budget_bytes : data->split().trace_bytes;
  CachePolicySpec policy_spec;
  policy_spec.kind = o.cache_policy;
  policy_spec.capacity_rows = data->split().fcache_rows;
  policy_spec.planner = o.planner;
  // Belady's sort buffer: what the split charged for it (a share of the budget).
  if (data->split().planner_working_bytes > 0) policy_spec.planner_working_bytes = data->split().planner_working_bytes;
  // Changesets of a superbatch spill to the runtime dir beyond a small constant (inspector/trace_stream.h).
  policy_spec.changeset_budget_bytes = std::min<int64_t>(kChangesetRamBytes, std::max<int64_t>(0, trace_budget / 2));
  policy_spec.spill_dir = runtime_dir->path();
  policy_spec.show_progress = o.show_progress && env.rank == 0;
  SEER_ASSIGN_OR_RETURN(SuperbatchCachePlanner policy,
                        MakeSuperbatchCachePlanner(policy_spec, data->dataset(), *samplers.train));

  // The model, resumed from the checkpoint when asked.
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> model, CreateModel(o, data->manifest(), request, *reporter));
  if (model) model->SetGraphIndptr(&data->topology().indptr());  // GCN's full-graph degrees
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<DeviceFeatureTier> device_tier, MakeTrainingDeviceTier(o, *data, request, *reporter));
  SEER_ASSIGN_OR_RETURN(TrainPosition position, checkpointer.Resume(model.get(), o.seed));
  position.run = run_record;
  if (group) {
    SEER_RETURN_IF_ERROR(CheckRanksMatch(*group, *data, model.get()));
    SEER_ASSIGN_OR_RETURN(position, ResumeRanks(*group, o, checkpointer, model.get(), runtime_dir->path(), position));
    if (model) model->SetProcessGroup(group.get());
  }
  if (checkpointer.resuming()) {
    // 1-based like the progress line ("epoch 2/10 sb 3/5").
    reporter->Say(fmt::format("resuming from {} at epoch {}, superbatch {}", checkpointer.path(), position.epoch + 1,
                              position.next_superbatch + 1));
  }
  summary.best_valid_accuracy = position.best_valid_accuracy;
  summary.best_epoch = position.best_epoch;

  // The pipeline's threads sample, plan and gather; this thread trains.
  PipelineOptions pipeline_options;
  pipeline_options.schedule = MakeSchedule(position, o.epochs, samplers.train->num_superbatches());
  pipeline_options.overlap = o.overlap;
  pipeline_options.runtime_dir = runtime_dir->path();
  pipeline_options.first_epoch = position.epoch;
  reporter->StartProgress(pipeline_options.schedule.empty() ? 0
                                                            : samplers.train->num_batches() * (o.epochs - position.epoch));
  const TrainContext ctx{o,          *data,     seeds.labels,      samplers,   model.get(),
                         checkpointer, *reporter, device_tier.get(), group.get()};
  TrainingExecutor executor(ctx, position);
  std::unique_ptr<SuperbatchPipeline> pipeline =
      SuperbatchPipeline::Start(WithDeviceTier(TrainingStages(*samplers.train, policy, data->gatherer()), device_tier.get()),
                                pipeline_options);
  // Any exception on this thread (a training step, evaluation, a checkpoint write,
  // bad_alloc) ends the run as a one-line Status like the stage threads' do.
  const Status run_status = RunGuarded("executor", [&] { return executor.Run(*pipeline); });
  SEER_RETURN_IF_ERROR(pipeline->Stop());
  SEER_RETURN_IF_ERROR(run_status);
  summary.epochs = executor.epochs();
  summary.stopped_early = executor.stopped_early();

  // The best model's test accuracy, the summary and the final metrics line.
  SEER_RETURN_IF_ERROR(
      RunGuarded("final evaluation", [&] { return FinishModel(ctx, executor.position(), &summary); }));
  summary.final_position = executor.position();
  summary.peak_rss_bytes = PeakRssBytes();
  summary.seconds = Since(run_start);
  SEER_RETURN_IF_ERROR(reporter->Finish(Outcome(o, summary, model != nullptr)));
  // Rank 0 hosts the rendezvous store: no rank leaves before every rank is done with it.
  if (group) SEER_RETURN_IF_ERROR(group->Barrier("barrier at the end of the run"));
  return summary;
}

namespace {

// The distinct ids of `nodes` in first-occurrence order (the sampler needs distinct
// seeds; first-occurrence order makes the test split give the batches evaluation used),
// and where each id sits among them.
struct DistinctNodes {
  std::vector<int64_t> ids;
  std::unordered_map<int64_t, size_t> index_of;
};

DistinctNodes Distinct(const std::vector<int64_t>& nodes) {
  DistinctNodes d;
  for (int64_t v : nodes) {
    if (d.index_of.emplace(v, d.ids.size()).second) d.ids.push_back(v);
  }
  return d;
}

Status CheckNodeRange(const std::vector<int64_t>& nodes, int64_t num_nodes) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] < 0 || nodes[i] >= num_nodes) {
      return InvalidArgument(fmt::format("node id {} at position {} is out of range [0, {})", nodes[i], i, num_nodes));
    }
  }
  return Status::Ok();
}

// The model's dataset identity (when recorded) must be this dataset's, and its input and
// output sizes must fit.
Status CheckModelFitsDataset(const ModelRunner& model, const Dataset& dataset, const std::string& model_path,
                             bool allow_other_dataset) {
  const DatasetManifest& m = dataset.manifest();
  const ModelConfig& c = model.config();
  if (!c.dataset.empty() && c.dataset != m.Identity() && !allow_other_dataset) {
    return InvalidArgument(fmt::format("{}: the model was trained on dataset {}, {} is dataset {} (pass "
                                       "--allow-other-dataset to predict on it anyway)",
                                       model_path, c.dataset, dataset.dir(), m.Identity()));
  }
  if (m.feature_dim == c.in_dim && m.num_classes == c.num_classes) return Status::Ok();
  return InvalidArgument(fmt::format("{}: model expects feature_dim {} and {} classes, dataset {} has {} and {}",
                                     model_path, c.in_dim, c.num_classes, dataset.dir(), m.feature_dim, m.num_classes));
}

// The pilot for prediction: the test split, or the first distinct ids of --nodes.
PilotSpec PredictionPilot(const PredictOptions& o, const std::vector<int>& fanouts) {
  PilotSpec pilot = MakePilot(o.batch_size, fanouts, o.seed, o.num_threads);
  if (o.nodes.empty()) {
    pilot.split = "test";
    return pilot;
  }
  std::unordered_set<int64_t> seen;  // range-checked later, with positions
  for (int64_t v : o.nodes) {
    if (static_cast<int64_t>(pilot.ids.size()) >= pilot.batches * o.batch_size) break;
    if (v >= 0 && seen.insert(v).second) pilot.ids.push_back(v);
  }
  return pilot;
}

// Predicts `distinct`'s classes (and embeddings), indexed like distinct.ids.
Status PredictDistinct(const PredictOptions& o, const std::vector<int>& fanouts, DataPath& data, ModelRunner& model,
                       const DistinctNodes& distinct, std::vector<int64_t>* classes, std::vector<float>* embeddings,
                       EvalResult* result) {
  SEER_ASSIGN_OR_RETURN(LabelTable labels, LabelTable::Load(data.dataset(), distinct.ids));
  const SuperbatchOptions sb =
      MakeSuperbatchOptions(o.batch_size, o.superbatch, o.num_threads, fanouts, o.seed, /*shuffle=*/false);
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler, SuperbatchSampler::Create(data.topology().view(), distinct.ids, sb));
  const int64_t dim = model.embedding_dim();
  classes->assign(distinct.ids.size(), -1);
  if (o.want_embeddings) embeddings->resize(distinct.ids.size() * static_cast<size_t>(dim));
  ProgressReporter progress("predict", static_cast<int64_t>(distinct.ids.size()), "nodes", o.show_progress);
  auto sink = [&](const BatchTrace& batch, const int64_t* batch_classes, const std::vector<float>& emb) {
    for (int64_t s = 0; s < batch.num_seeds; ++s) {
      const size_t idx = distinct.index_of.at(batch.node_ids[static_cast<size_t>(s)]);
      (*classes)[idx] = batch_classes[s];
      if (o.want_embeddings) {
        std::copy(emb.begin() + s * dim, emb.begin() + (s + 1) * dim, embeddings->begin() + static_cast<int64_t>(idx) * dim);
      }
    }
    progress.Add(batch.num_seeds);
  };
  SEER_ASSIGN_OR_RETURN(EvalResult eval, EvaluateSplit(sampler, data.gatherer(), model, labels, o.want_embeddings, sink));
  progress.Finish();
  *result = eval;
  return Status::Ok();
}

// Data-parallel prediction: rank r predicts distinct.ids[lo_r, hi_r) (contiguous shares)
// and the classes, embeddings and (correct, labeled) counts are summed over the ranks —
// every position has exactly one rank's value, the others add zeros, so the sums are
// exact. A node's prediction does not depend on the nodes predicted with it (the sampler
// draws by (seed, epoch, node, hop)), so the result equals one process's.
Status PredictShared(const PredictOptions& o, const std::vector<int>& fanouts, DataPath& data, ModelRunner& model,
                     ProcessGroup& group, const DistinctNodes& distinct, std::vector<int64_t>* classes,
                     std::vector<float>* embeddings, EvalResult* result) {
  const auto n = static_cast<int64_t>(distinct.ids.size());
  const int64_t w = group.world_size();
  const int64_t lo = n * group.rank() / w;
  const int64_t hi = n * (group.rank() + 1) / w;
  const int64_t dim = model.embedding_dim();
  classes->assign(static_cast<size_t>(n), 0);
  if (o.want_embeddings) embeddings->assign(static_cast<size_t>(n * dim), 0.0f);
  int64_t counts[2] = {0, 0};  // correct, labeled
  if (hi > lo) {
    const DistinctNodes share =
        Distinct(std::vector<int64_t>(distinct.ids.begin() + lo, distinct.ids.begin() + hi));
    PredictOptions share_options = o;
    share_options.show_progress = o.show_progress && group.rank() == 0;
    std::vector<int64_t> share_classes;
    std::vector<float> share_embeddings;
    EvalResult eval;
    SEER_RETURN_IF_ERROR(
        PredictDistinct(share_options, fanouts, data, model, share, &share_classes, &share_embeddings, &eval));
    std::copy(share_classes.begin(), share_classes.end(), classes->begin() + lo);
    if (o.want_embeddings) std::copy(share_embeddings.begin(), share_embeddings.end(), embeddings->begin() + lo * dim);
    counts[0] = eval.correct;
    counts[1] = eval.labeled;
  }
  SEER_RETURN_IF_ERROR(group.AllreduceInt64(classes->data(), n, ProcessGroup::ReduceOp::kSum, "predicted classes"));
  if (o.want_embeddings) SEER_RETURN_IF_ERROR(group.AllreduceSum(embeddings->data(), n * dim, "predicted embeddings"));
  SEER_RETURN_IF_ERROR(group.AllreduceInt64(counts, 2, ProcessGroup::ReduceOp::kSum, "prediction accuracy counts"));
  result->correct = counts[0];
  result->labeled = counts[1];
  result->accuracy = counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : -1;
  return Status::Ok();
}

}  // namespace

Result<PredictResult> RunPrediction(const PredictOptions& o) {
  KeepLargeAllocationsMapped();
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> model, ModelRunner::LoadModel(o.model_path, o.use_cuda));
  std::vector<int> fanouts = o.fanouts;
  if (fanouts.empty()) fanouts.assign(static_cast<size_t>(model->config().num_layers), 10);
  if (model->config().kind != ModelKind::kMlp && static_cast<int64_t>(fanouts.size()) != model->config().num_layers) {
    return InvalidArgument(fmt::format("--fanouts has {} layers, the model {}", fanouts.size(), model->config().num_layers));
  }
  MemoryBudgetRequest request;
  request.budget_bytes = o.memory_budget_bytes;
  request.batch_size = o.batch_size;
  request.fanouts = fanouts;
  DataIoOptions io;
  io.mode = o.io;
  io.direct = o.direct_io;
  PilotSpec pilot = PredictionPilot(o, fanouts);
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<DataPath> data, DataPath::Open(o.dataset_dir, request, io, &pilot));
  SEER_RETURN_IF_ERROR(CheckModelFitsDataset(*model, data->dataset(), o.model_path, o.allow_other_dataset));
  SEER_ASSIGN_OR_RETURN(const RankEnv env, ResolveRankEnv(o.dist));
  std::unique_ptr<ProcessGroup> group;
  if (env.distributed()) {
    SEER_ASSIGN_OR_RETURN(group, ProcessGroup::Connect(env));
    SEER_RETURN_IF_ERROR(CheckRanksMatch(*group, *data, model.get()));
  }
  model->SetGraphIndptr(&data->topology().indptr());  // GCN's full-graph degrees
  PredictResult result;
  result.rank = env.rank;
  result.world_size = env.world_size;
  result.nodes = o.nodes;
  if (result.nodes.empty()) {
    SEER_ASSIGN_OR_RETURN(result.nodes, data->TakeSplit(pilot, "test"));
  }
  SEER_RETURN_IF_ERROR(CheckNodeRange(result.nodes, data->manifest().num_nodes));
  result.embedding_dim = model->embedding_dim();
  const DistinctNodes distinct = Distinct(result.nodes);
  if (distinct.ids.empty()) return result;
  std::vector<int64_t> classes;
  std::vector<float> embeddings;
  EvalResult eval;
  if (group != nullptr) {
    SEER_RETURN_IF_ERROR(PredictShared(o, fanouts, *data, *model, *group, distinct, &classes, &embeddings, &eval));
  } else {
    SEER_RETURN_IF_ERROR(PredictDistinct(o, fanouts, *data, *model, distinct, &classes, &embeddings, &eval));
  }
  result.accuracy = eval.accuracy;
  // Back to the caller's order (duplicates included).
  const int64_t dim = result.embedding_dim;
  result.classes.resize(result.nodes.size());
  if (o.want_embeddings) result.embeddings.resize(result.nodes.size() * static_cast<size_t>(dim));
  for (size_t i = 0; i < result.nodes.size(); ++i) {
    const size_t idx = distinct.index_of.at(result.nodes[i]);
    result.classes[i] = classes[idx];
    if (o.want_embeddings) {
      std::copy(embeddings.begin() + static_cast<int64_t>(idx) * dim, embeddings.begin() + static_cast<int64_t>(idx + 1) * dim,
                result.embeddings.begin() + static_cast<int64_t>(i) * dim);
    }
  }
  return result;
}

}  // namespace seer
