// RunTraining: the list of steps. Each step is a piece with its own contract (see the
// list at the top of train_loop.h); what is left here is the glue between the pieces.
#include "executor/train_loop.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cache/degrees.h"
#include "executor/superbatch_cache_planner.h"
#include "executor/checkpointer.h"
#include "executor/data_parallel.h"
#include "executor/data_path.h"
#include "executor/device_feature_tier.h"
#include "executor/evaluation.h"
#include "executor/label_table.h"
#include "executor/process_group.h"
#include "executor/rank_env.h"
#include "executor/superbatch_pipeline.h"
#include "executor/training_executor.h"
#include "executor/typed_data.h"
#include "executor/runtime_footprint.h"
#include "inspector/trace_stream.h"
#include "kernels/device.h"
#include "storage/base/exception_status.h"
#include "storage/base/file_io.h"
#include "storage/base/process_memory.h"
#include "storage/base/scratch_dir.h"

namespace seer {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

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
  // The model's numbers, before any work (a GAT with 0 heads divided by zero; a dropout
  // of 1.5 or a NaN learning rate failed only at the first step, or never).
  if (o.hidden < 1) return InvalidArgument(fmt::format("--hidden {}: expected 1 or more", o.hidden));
  if (o.heads < 1) return InvalidArgument(fmt::format("--heads {}: expected 1 or more", o.heads));
  if (!(o.dropout >= 0 && o.dropout < 1)) {
    return InvalidArgument(fmt::format("--dropout {}: expected a probability in [0, 1)", o.dropout));
  }
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate)) {
    return InvalidArgument(fmt::format("--lr {}: expected a finite number > 0", o.learning_rate));
  }
  if (o.epochs == 0 && !o.no_train) {
    return InvalidArgument("--epochs 0 trains nothing (and has no accuracy to report): use --epochs 1 or more");
  }
  if (o.memory_budget_bytes <= 0) return InvalidArgument("--memory-budget: expected a size > 0");
  for (int f : o.fanouts) {
    if (f == 0 || f < -1) return InvalidArgument(fmt::format("fan-out {}: expected >= 1, or -1 for all neighbours", f));
  }
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
  // A link batch of b edges holds up to b * (2 + k) seeds (inspector/link_batch.h).
  request.batch_size = o.task == ModelTask::kLink ? LinkBatchMaxSeeds(o.batch_size, o.link) : o.batch_size;
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
  request.model.task = o.task;
  request.model.scorer = o.scorer;
  request.feature_cache_used = o.cache_policy != PolicyKind::kNone;
  request.model_on_host = !(o.use_cuda && kernels::CudaDeviceCount() > 0);
  // The inspector streams traces through the runtime dir: its RAM is a constant
  // (StreamingInspectorBytes) plus Belady's streaming sort buffer; LRU still reads a
  // superbatch's ids into RAM (8 B per access + its bookkeeping).
  request.superbatch = BatchesPerSuperbatch(o);
  request.traces_in_flight = kPipelineTracesInFlight;
  request.streaming_inspector = true;
  request.sampling_threads = o.num_threads;
  request.planner_working_bytes = o.cache_policy == PolicyKind::kBelady ? kPlannerWorkingAuto : 0;  // scaled with the budget
  request.node_score_bytes_per_node = o.cache_policy == PolicyKind::kBelady ? kBeladyScoreBytesPerNode : 0;
  request.policy_bytes_per_row = PolicyBytesPerCachedRow(o.cache_policy, o.read_block_bytes > 0);
  request.planner_bytes_per_access = o.cache_policy == PolicyKind::kLru ? kLruPlannerBytesPerAccess : 0;
  return request;
}

DataIoOptions TrainingIo(const TrainOptions& o) {
  DataIoOptions io;
  io.mode = o.io;
  io.queue_depth = o.queue_depth;
  io.direct = o.direct_io;
  io.quiet = o.quiet;
  io.pin_feature_cache = o.use_cuda && kernels::CudaDeviceCount() > 0;
  io.read_block_bytes = o.read_block_bytes;
  io.target_type = o.target_type;
  io.relation_fanouts = o.relation_fanouts;
  // The device tier caches whole rows of one size: a typed dataset's rows padded then.
  io.pad_typed_rows =
      o.typed_rows_padded || o.device_cache_bytes > 0 || (o.device_cache_bytes < 0 && io.pin_feature_cache);
  return io;
}

RunDescription DescribeRun(const TrainOptions& o, const DataPath& data) {
  RunDescription run;
  run.split = data.split();
  run.policy = PolicyKindName(o.cache_policy);
  run.model = o.no_train ? "none" : ModelKindName(o.model);
  run.task = ModelTaskName(o.task);
  run.pipeline = PipelineKindName(o.pipeline);
  run.io = o.io == DataIoMode::kMmap ? "mmap" : IoModeName(data.features().mode());
  run.overlap = o.overlap;
  run.direct = data.features().direct();
  run.batches_per_superbatch = data.split().superbatch;
  run.ncache_share = o.ncache_share;
  return run;
}

// "typed dataset: 4 node types, 8 relations; classifying paper (...)".
std::string DescribeTypedRun(const DataPath& data, const TypedTarget& target) {
  const DatasetManifest& m = data.dataset().manifest();
  int64_t featured = 0;
  for (const DatasetNodeType& t : m.node_types) featured += t.feature_dim > 0 ? 1 : 0;
  std::vector<std::string> names;
  for (const DatasetNodeType& t : m.node_types) names.push_back(t.name);
  const FeatureUnits* units = data.feature_units();
  return fmt::format("typed dataset: {}; classifying {} ({} nodes, {} classes); one feature cache over the {} types "
                     "with features (the model's rows: {} {} columns{}), {}{}",
                     m.TypedShape(), target.name, target.count, data.manifest().num_classes, featured,
                     data.manifest().feature_dim, FeatureDtypeName(data.manifest().feature_dtype),
                     featured < static_cast<int64_t>(m.node_types.size()) ? ", featureless types' zeros" : "",
                     units != nullptr ? units->Describe(names) : std::string("rows of one size"),
                     data.relation_fanouts().empty() ? "" : "; per-relation fan-outs");
}

// The training split's file (a typed dataset's target type's), for messages.
std::string TrainSplitPath(const DataPath& data) {
  if (const TypedTarget* target = data.target()) {
    return data.dataset().PathOf(data.dataset().manifest().node_types[static_cast<size_t>(target->type)].train);
  }
  return data.dataset().PathOf(dataset_files::kTrain);
}

// The run's seeds (train, valid, test) and the labels of all of them.
struct SeedSplits {
  std::vector<int64_t> train, valid, test;
  LabelTable labels;
};

Result<SeedSplits> LoadSeedSplits(const TrainOptions& o, const DataPath& data, PilotSpec& pilot) {
  SeedSplits s;
  const Dataset& dataset = data.dataset();
  if (o.task == ModelTask::kLink) return s;  // the edges are the seeds; no label is read
  SEER_ASSIGN_OR_RETURN(s.train, data.TakeSplit(pilot, "train"));
  SEER_ASSIGN_OR_RETURN(s.valid, data.LoadSplit("valid"));
  SEER_ASSIGN_OR_RETURN(s.test, data.LoadSplit("test"));
  if (s.train.empty()) return InvalidArgument(TrainSplitPath(data) + ": no training nodes");
  SEER_ASSIGN_OR_RETURN(s.labels, data.LoadLabels({&s.train, &s.valid, &s.test}));
  return s;
}

// Unlabeled training seeds are sampled but add nothing to the loss: say how many, or
// refuse a split with no labelled node at all (nothing would be learned).
Status CheckTrainingLabels(const TrainOptions& o, const DataPath& data, const SeedSplits& seeds,
                           EpochReporter& reporter) {
  if (o.task == ModelTask::kLink) return Status::Ok();
  int64_t unlabeled = 0;
  for (int64_t v : seeds.train) unlabeled += seeds.labels.Get(v) < 0 ? 1 : 0;
  const std::string train_path = TrainSplitPath(data);
  if (unlabeled == static_cast<int64_t>(seeds.train.size())) {
    return InvalidArgument(fmt::format("{}: none of its {} training nodes is labelled (labels.bin holds -1 for "
                                       "each): nothing to learn",
                                       train_path, seeds.train.size()));
  }
  if (unlabeled > 0) {
    reporter.Say(fmt::format("note: {} of the {} training nodes in {} are unlabeled (-1): they are sampled as "
                             "seeds but add nothing to the loss or the train accuracy",
                             unlabeled, seeds.train.size(), train_path));
  }
  return Status::Ok();
}

// The training sampler and the evaluation samplers (no shuffle; absent for an empty split).
// Data-parallel runs: the training sampler takes this rank's share of every global batch
// (SuperbatchOptions::rank), the evaluation samplers a contiguous shard of each split.
// The training sampler's options: the split's superbatch, shuffled, this rank's share.
SuperbatchOptions TrainingSuperbatchOptions(const TrainOptions& o, const DataPath& data, const RankEnv& env) {
  SuperbatchOptions options = MakeSuperbatchOptions(o.batch_size, data.split().superbatch, o.num_threads,
                                                   SampledFanouts(o), o.seed, /*shuffle=*/true);
  options.sampler.relation_fanouts = data.relation_fanouts();
  options.rank = env.rank;
  options.world_size = env.world_size;
  return options;
}

// Link prediction's samplers: the topology's edges for training; the held-out edges of
// `seer split-edges` (with their fixed negatives) for validation and test, each rank a
// contiguous shard of the pairs.
Result<TrainingSamplers> MakeLinkSamplers(const TrainOptions& o, const DataPath& data, const RankEnv& env,
                                          EpochReporter& reporter) {
  SuperbatchOptions options = TrainingSuperbatchOptions(o, data, env);
  const TopologyView view = data.topology_view();
  TrainingSamplers s;
  SEER_ASSIGN_OR_RETURN(LinkBatcher edges, LinkBatcher::ForTopologyEdges(view, o.link, o.seed));
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler train,
                        SuperbatchSampler::CreateLink(view, std::make_shared<LinkBatcher>(std::move(edges)), options));
  if (train.num_batches() == 0) {
    return InvalidArgument(fmt::format("{} training edges cannot give each of {} ranks a batch", train.num_seeds(),
                                       env.world_size));
  }
  s.train.emplace(std::move(train));
  options.shuffle = false;
  options.rank = 0;
  options.world_size = 1;
  options.superbatch_size = std::min(options.superbatch_size, TraceChunkBatches(o.num_threads));
  const Dataset& dataset = data.dataset();
  const DatasetEdgeSplits& splits = dataset.manifest().edge_splits;
  if (!splits.present()) {
    reporter.Say(fmt::format("note: {} has no held-out edges: no validation or test metrics (hold some out first with "
                             "seer split-edges {} --out DIR --eval-negatives {})",
                             dataset.dir(), dataset.dir(), o.eval_negatives));
    return s;
  }
  const int64_t k = splits.negatives_per_edge > 0 ? splits.negatives_per_edge : o.eval_negatives;
  // An evaluation batch holds at most a training batch's seeds (what the memory split sized
  // the batch buffers and the model's working set for): with K negatives per pair instead
  // of the training's k, fewer pairs per batch.
  options.batch_size = std::max<int64_t>(1, LinkBatchMaxSeeds(o.batch_size, o.link) / (2 + k));
  reporter.Say(fmt::format("link evaluation: {} valid and {} test edges, each ranked against {} {} negatives (MRR, "
                           "hits@1/10/50 as OGB), {} edges per batch",
                           splits.num_valid, splits.num_test, k,
                           splits.negatives_per_edge > 0 ? "fixed (the dataset's)" : "uniform (drawn once from --seed)",
                           options.batch_size));
  const std::pair<std::string, std::string> files[2] = {{splits.valid, splits.valid_negatives},
                                                        {splits.test, splits.test_negatives}};
  std::optional<SuperbatchSampler>* outs[2] = {&s.valid, &s.test};
  for (int i = 0; i < 2; ++i) {
    const auto& [pairs, negatives] = files[i];
    SEER_ASSIGN_OR_RETURN(LinkBatcher batcher,
                          LinkBatcher::ForPairFile(dataset.PathOf(pairs),
                                                   splits.negatives_per_edge > 0 ? dataset.PathOf(negatives) : "",
                                                   k, dataset.manifest().num_nodes, o.seed));
    const int64_t n = batcher.num_pairs();
    if (n == 0) continue;
    SEER_ASSIGN_OR_RETURN(SuperbatchSampler eval,
                          SuperbatchSampler::CreateLink(view, std::make_shared<LinkBatcher>(std::move(batcher)), options,
                                                        env.rank * n / env.world_size,
                                                        (env.rank + 1) * n / env.world_size));
    outs[i]->emplace(std::move(eval));
  }
  return s;
}

Result<TrainingSamplers> MakeSamplers(const TrainOptions& o, const DataPath& data, const SeedSplits& seeds,
                                      const RankEnv& env) {
  SuperbatchOptions options = TrainingSuperbatchOptions(o, data, env);
  const TopologyView view = data.topology_view();
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

// The run's runtime directory (trace files, spilled changesets, the planner's sort runs):
// a scratch directory .seer-train-PID-XXXXXX inside --runtime-dir (created if missing) or
// $TMPDIR, owned by the run and removed when it ends; after a crash the start-up sweep
// removes it (storage/base/scratch_dir.h).
Result<ScratchDir> CreateRuntimeDir(const std::string& requested) {
  std::string parent = requested;
  if (parent.empty()) {
    std::error_code ec;
    parent = std::filesystem::temp_directory_path(ec).string();
    if (ec || parent.empty()) parent = "/tmp";
  } else {
    SEER_RETURN_IF_ERROR(MakeDirectories(parent));
  }
  return ScratchDir::Create(parent, "train");
}

// The model (null with --no-train), announced on stderr.
ModelConfig RunModelConfig(const TrainOptions& o, const DatasetManifest& m) {
  ModelConfig config;
  config.kind = o.model;
  config.in_dim = m.feature_dim;
  config.hidden = o.hidden;
  config.num_classes = o.task == ModelTask::kLink ? 0 : m.num_classes;
  config.task = o.task;
  config.scorer = o.scorer;
  config.num_layers = static_cast<int64_t>(o.fanouts.size());
  config.dropout = o.dropout;
  config.heads = o.heads;
  config.gcn_norm = o.gcn_norm;
  if (m.typed() && config.relational()) {  // the relational models' types (executor/typed_data.h)
    auto target = ResolveTarget(m, o.target_type);
    auto relation_types = RelationTypes(m);
    if (target.ok() && relation_types.ok()) {
      config.node_type_offsets = NodeTypeOffsets(m);
      config.relation_types = std::move(relation_types).value();
      config.target_type = target->type;
    }
  }
  return config;
}

// On a CUDA machine, before the runtime is measured (executor/runtime_footprint.h): a
// tiny plan on the GPU planner when it will plan, and the warm-up step of the run's model
// (not with --no-train), shaped from the dataset's manifest; skipped when the manifest
// cannot be read or the model not built (DataPath::Open and CreateModel report those).
std::function<void()> CudaTrainingWarmUp(const TrainOptions& o) {
  return [&o] {
    // Belady planned on the GPU: Seer's own kernels (another module) load on the first plan.
    if (o.cache_policy == PolicyKind::kBelady && o.read_block_bytes == 0 &&
        ResolvePlannerDevice(o.planner) == PlannerDevice::kGpu) {
      const std::vector<int64_t> a{1, 2, 3}, b{3, 4, 5};
      BeladyPlannerOptions planner;
      planner.device = PlannerDevice::kGpu;
      (void)PlanBelady(EmptyCacheState(2), {IdSpan{a.data(), 3}, IdSpan{b.data(), 3}}, planner);
    }
    if (o.no_train) return;
    const std::string path = o.dataset_dir + "/" + dataset_files::kManifest;
    auto text = ReadWholeFile(path);
    if (!text.ok()) return;
    auto manifest = DatasetManifest::FromJson(*text, path);
    if (!manifest.ok()) return;
    try {
      WarmUpTrainingStep(RunModelConfig(o, *manifest), o.fanouts, /*use_cuda=*/true);
    } catch (const std::exception&) {
      // An invalid configuration is refused, naming the flag, by CreateModel.
    }
  };
}

// Relational models need a typed dataset; GCN's graph normalisation needs one graph's
// degrees, which a typed dataset's relations do not give.
Status CheckModelFitsDataset(const ModelConfig& config, const DatasetManifest& m) {
  if (config.relational() && !m.typed()) {
    return InvalidArgument(fmt::format("--model {}: a relational model needs a typed dataset (node types and "
                                       "relations); on this one use sage, gcn, gat or mlp",
                                       ModelKindName(config.kind)));
  }
  if (m.typed() && config.kind == ModelKind::kGcn && config.gcn_norm == GcnNorm::kGraph) {
    return InvalidArgument("--model gcn --gcn-norm graph on a typed dataset: the relations give no one graph's degrees; "
                           "use --gcn-norm block (relations merged) or --model rgcn");
  }
  return Status::Ok();
}

Result<std::unique_ptr<ModelRunner>> CreateModel(const TrainOptions& o, const DatasetManifest& m,
                                                 const MemoryBudgetRequest& request, EpochReporter& reporter) {
  if (o.no_train) return std::unique_ptr<ModelRunner>();
  ModelConfig config = RunModelConfig(o, m);
  config.dataset = m.Identity();  // recorded in checkpoints and --save-model files
  SEER_RETURN_IF_ERROR(CheckModelFitsDataset(config, m));
  std::unique_ptr<ModelRunner> model;
  try {
    model = ModelRunner::Create(config, o.learning_rate, o.seed, o.use_cuda);
  } catch (const std::invalid_argument&) {
    return StatusFromCurrentException("model");  // kInvalidArgument "model: WHAT"
  }
  reporter.Say(fmt::format("model {}, {} layers (fan-outs {}), hidden {}, {} parameters, on {}{}", ModelKindName(o.model),
                           o.fanouts.size(), JoinFanouts(o.fanouts), o.hidden, model->num_parameters(),
                           model->on_cuda() ? "cuda" : "cpu",
                           o.task == ModelTask::kLink
                               ? fmt::format("; link prediction: {} scorer, {} {}{} negative{} per {}",
                                             LinkScorerName(o.scorer), o.link.negatives,
                                             NegativeDistributionName(o.link.distribution),
                                             o.link.shared ? " shared" : "", o.link.negatives == 1 ? "" : "s",
                                             o.link.shared ? "batch" : "training edge")
                               : ""));
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

// After the last epoch: the test split, evaluated once, on the best-validation weights
// (kept in memory by ModelRunner::SnapshotBest and in every checkpoint, so a resumed run
// has them too), or on the final weights when nothing was validated (no labelled
// validation node, --eval-every 0); then --save-model. Data-parallel runs: the test
// accuracy is summed over the ranks' shards, and rank 0 alone writes the model, after a
// barrier (every rank has finished).
Status FinishModel(const TrainContext& ctx, const TrainPosition& position, TrainSummary* summary) {
  if (ctx.model == nullptr || summary->stopped_early) return Status::Ok();
  summary->best_valid_accuracy = position.best_valid_accuracy;
  summary->best_epoch = position.best_epoch;
  if (ctx.model->has_best()) ctx.model->RestoreBest();
  if (ctx.samplers.test) {
    SEER_ASSIGN_OR_RETURN(EvalResult test, EvaluateSplit(*ctx.samplers.test, ctx.data.gatherer(), *ctx.model, ctx.labels));
    SEER_ASSIGN_OR_RETURN(test, ReduceEvalResult(test, ctx.group, "test evaluation of the best model"));
    summary->test_accuracy = test.accuracy;
    summary->test_link = test.link;
  }
  ctx.model->SetTrainingRecord(
      TrainingRecord{ctx.options.fanouts, ctx.options.batch_size, ctx.options.relation_fanouts});
  if (ctx.options.save_model_path.empty()) return Status::Ok();
  if (ctx.group != nullptr) {
    SEER_RETURN_IF_ERROR(ctx.group->Barrier("barrier before --save-model"));
    if (ctx.group->rank() != 0) return Status::Ok();
  }
  return ctx.model->SaveModel(ctx.options.save_model_path, /*best=*/true);
}

bool StopRequested(const TrainOptions& o) { return o.stop_signal != nullptr && o.stop_signal->load() != 0; }

// A stop request before the first batch: nothing trained, nothing to save.
TrainSummary StoppedBeforeTraining(const TrainOptions& o, const RankEnv& env) {
  TrainSummary summary;
  summary.rank = env.rank;
  summary.world_size = env.world_size;
  summary.stopped_early = true;
  summary.interrupted_by = o.stop_signal->load();
  return summary;
}

RunOutcome Outcome(const TrainOptions& o, const TrainSummary& summary, bool trained) {
  RunOutcome outcome;
  outcome.trained = trained;
  outcome.best_valid_accuracy = summary.best_valid_accuracy;
  outcome.best_epoch = summary.best_epoch;
  outcome.test_accuracy = summary.test_accuracy;
  outcome.link = o.task == ModelTask::kLink;
  outcome.test_link = summary.test_link;
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
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<ProcessGroup> group, ConnectIfDistributed(env));
  SEER_ASSIGN_OR_RETURN(Checkpointer checkpointer,
                        Checkpointer::Open({o.checkpoint_dir, o.checkpoint_every, o.resume, o.no_train,
                                            /*writer=*/env.rank == 0, TimedCheckpointSeconds(o)}));

  // The data path, sized by the pilot batches; then the reporter (metrics start line).
  MemoryBudgetRequest request = TrainingBudgetRequest(o);
  // --memory-budget covers the whole process: the runtime (libtorch, the CUDA context and
  // what a first training step on the device loads) as it stands now is paid first.
  request.runtime_bytes = RuntimeBytesToCharge(o.runtime_bytes, o.use_cuda && kernels::CudaDeviceCount() > 0,
                                               CudaTrainingWarmUp(o));
  PilotSpec pilot = MakePilot(o.batch_size, SampledFanouts(o), o.seed, o.num_threads);
  pilot.split = "train";
  if (o.task == ModelTask::kLink) {
    pilot.split.clear();
    pilot.link = o.link;
  }
  pilot.epochs = o.epochs;
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<DataPath> data, DataPath::Open(o.dataset_dir, request, TrainingIo(o), &pilot));
  if (StopRequested(o)) return StoppedBeforeTraining(o, env);
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
  if (group) reporter->Say(DescribeDataParallel(env, o.batch_size));
  reporter->SaySplit(data->split());
  if (const TypedTarget* target = data->target()) reporter->Say(DescribeTypedRun(*data, *target));

  // Seeds, labels, samplers, the runtime directory and the feature-cache policy.
  SEER_ASSIGN_OR_RETURN(SeedSplits seeds, LoadSeedSplits(o, *data, pilot));
  SEER_RETURN_IF_ERROR(CheckTrainingLabels(o, *data, seeds, *reporter));
  SEER_ASSIGN_OR_RETURN(TrainingSamplers samplers, o.task == ModelTask::kLink
                                                        ? MakeLinkSamplers(o, *data, env, *reporter)
                                                        : MakeSamplers(o, *data, seeds, env));
  SEER_ASSIGN_OR_RETURN(ScratchDir runtime_dir, CreateRuntimeDir(o.runtime_dir));
  const int64_t trace_budget = o.trace_budget_bytes >= 0 ? o.trace_budget_bytes : data->split().trace_bytes;
  CachePolicySpec policy_spec;
  policy_spec.kind = o.cache_policy;
  policy_spec.capacity_rows = data->split().fcache_rows;
  policy_spec.planner = o.planner;
  // Belady's sort buffer: what the split charged for it (a share of the budget).
  if (data->split().planner_working_bytes > 0) policy_spec.planner_working_bytes = data->split().planner_working_bytes;
  // Changesets of a superbatch spill to the runtime dir beyond a small constant (inspector/trace_stream.h).
  policy_spec.changeset_budget_bytes = std::min<int64_t>(kChangesetRamBytes, std::max<int64_t>(0, trace_budget / 2));
  policy_spec.spill_dir = runtime_dir.path();
  policy_spec.show_progress = o.show_progress && env.rank == 0;
  policy_spec.read_block_bytes = o.read_block_bytes;
  policy_spec.units = data->feature_units();
  if (o.read_block_bytes > 0) {
    reporter->Say(fmt::format("feature reads: {}-byte aligned blocks (--read-block), one read per distinct block of a "
                              "batch's misses{}",
                              o.read_block_bytes,
                              o.cache_policy == PolicyKind::kBelady
                                  ? "; belady caches a block's other rows used before what they would evict"
                                  : ""));
  }
  SEER_ASSIGN_OR_RETURN(SuperbatchCachePlanner policy,
                        MakeSuperbatchCachePlanner(policy_spec, data->dataset(), *samplers.train));
  if (StopRequested(o)) return StoppedBeforeTraining(o, env);

  // The model, resumed from the checkpoint when asked.
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> model, CreateModel(o, data->manifest(), request, *reporter));
  if (model) model->SetGraphIndptr(data->graph_indptr());  // GCN's full-graph degrees (none: typed)
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<DeviceFeatureTier> device_tier, MakeTrainingDeviceTier(o, *data, request, *reporter));
  if (device_tier && o.read_block_bytes > 0) {
    return InvalidArgument("--read-block with --device-cache: the device tier plans per-row reads; use one or the other");
  }
  SEER_ASSIGN_OR_RETURN(TrainPosition position, checkpointer.Resume(model.get(), o.seed));
  position.run = run_record;
  position.settings = o.settings;
  if (group) {
    SEER_RETURN_IF_ERROR(CheckRanksMatch(*group, *data, model.get()));
    SEER_ASSIGN_OR_RETURN(position, ResumeRanks(*group, o, checkpointer, model.get(), runtime_dir.path(), position));
    if (model) model->SetProcessGroup(group.get());
  }
  if (checkpointer.resuming()) {
    // 1-based like the progress line ("epoch 2/10 sb 3/5").
    reporter->Say(fmt::format("resuming from {} at epoch {}, superbatch {}{}", checkpointer.path(), position.epoch + 1,
                              position.next_superbatch + 1,
                              position.next_batch > 0 ? fmt::format(" after its batch {}", position.next_batch) : ""));
  }
  summary.best_valid_accuracy = position.best_valid_accuracy;
  summary.best_epoch = position.best_epoch;

  // The pipeline's threads sample, plan and gather; this thread trains.
  PipelineOptions pipeline_options;
  pipeline_options.schedule = MakeSchedule(position, o.epochs, samplers.train->num_superbatches());
  pipeline_options.overlap = o.overlap;
  pipeline_options.runtime_dir = runtime_dir.path();
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
  const Status run_status = RunGuarded("executor stage", [&] { return executor.Run(*pipeline); });
  SEER_RETURN_IF_ERROR(pipeline->Stop());
  SEER_RETURN_IF_ERROR(run_status);
  summary.epochs = executor.epochs();
  summary.stopped_early = executor.stopped_early() || executor.interrupted_by() != 0;
  summary.interrupted_by = executor.interrupted_by();
  summary.training_started = true;
  summary.batches_per_epoch = samplers.train->num_batches();
  if (summary.interrupted_by != 0 && checkpointer.enabled() && model && env.rank == 0) {
    summary.checkpoint_path = checkpointer.path();
  }

  // The best model's test accuracy, the summary and the final metrics line.
  SEER_RETURN_IF_ERROR(
      RunGuarded("final evaluation stage", [&] { return FinishModel(ctx, executor.position(), &summary); }));
  summary.final_position = executor.position();
  summary.peak_rss_bytes = PeakRssBytes();
  summary.seconds = Since(run_start);
  SEER_RETURN_IF_ERROR(reporter->Finish(Outcome(o, summary, model != nullptr)));
  // Rank 0 hosts the rendezvous store: no rank leaves before every rank is done with it.
  if (group) SEER_RETURN_IF_ERROR(group->Barrier("barrier at the end of the run"));
  return summary;
}

}  // namespace seer
