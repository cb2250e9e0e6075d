#include "executor/prediction.h"

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "executor/data_parallel.h"
#include "executor/data_path.h"
#include "executor/evaluation.h"
#include "executor/label_table.h"
#include "executor/model_runner.h"
#include "executor/process_group.h"
#include "executor/rank_env.h"
#include "executor/runtime_footprint.h"
#include "storage/base/progress.h"

namespace seer {
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
Status CheckModelFitsDataset(const ModelRunner& model, const DataPath& data, const std::string& model_path,
                             bool allow_other_dataset) {
  const DatasetManifest& m = data.manifest();  // a typed dataset's training view
  const Dataset& dataset = data.dataset();
  const ModelConfig& c = model.config();
  if (!c.dataset.empty() && c.dataset != m.Identity() && !allow_other_dataset) {
    return InvalidArgument(fmt::format("{}: the model was trained on dataset {}, {} is dataset {} (pass "
                                       "--allow-other-dataset to predict on it anyway)",
                                       model_path, c.dataset, dataset.dir(), m.Identity()));
  }
  if (m.feature_dim == c.in_dim && (c.task == ModelTask::kLink || m.num_classes == c.num_classes)) {
    return Status::Ok();
  }
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

// Predicts `distinct`'s classes (and embeddings, logits), indexed like distinct.ids.
Status PredictDistinct(const PredictOptions& o, const std::vector<int>& fanouts, DataPath& data, ModelRunner& model,
                       const DistinctNodes& distinct, std::vector<int64_t>* classes, std::vector<float>* embeddings,
                       std::vector<float>* logits, EvalResult* result) {
  SEER_ASSIGN_OR_RETURN(LabelTable labels, data.LoadLabels({&distinct.ids}));
  SuperbatchOptions sb =
      MakeSuperbatchOptions(o.batch_size, o.superbatch, o.num_threads, fanouts, o.seed, /*shuffle=*/false);
  sb.sampler.relation_fanouts = data.relation_fanouts();
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler, SuperbatchSampler::Create(data.topology_view(), distinct.ids, sb));
  const int64_t dim = model.embedding_dim();
  const int64_t num_classes = model.config().num_classes;
  classes->assign(distinct.ids.size(), -1);
  if (o.want_embeddings) embeddings->resize(distinct.ids.size() * static_cast<size_t>(dim));
  if (o.want_logits) logits->resize(distinct.ids.size() * static_cast<size_t>(num_classes));
  ProgressReporter progress("predict", static_cast<int64_t>(distinct.ids.size()), "nodes", o.show_progress);
  auto sink = [&](const BatchTrace& batch, const int64_t* batch_classes, const std::vector<float>& emb,
                  const std::vector<float>& batch_logits) {
    for (int64_t s = 0; s < batch.num_seeds; ++s) {
      const size_t idx = distinct.index_of.at(batch.node_ids[static_cast<size_t>(s)]);
      (*classes)[idx] = batch_classes[s];
      if (o.want_embeddings) {
        std::copy(emb.begin() + s * dim, emb.begin() + (s + 1) * dim, embeddings->begin() + static_cast<int64_t>(idx) * dim);
      }
      if (o.want_logits) {
        std::copy(batch_logits.begin() + s * num_classes, batch_logits.begin() + (s + 1) * num_classes,
                  logits->begin() + static_cast<int64_t>(idx) * num_classes);
      }
    }
    progress.Add(batch.num_seeds);
  };
  SEER_ASSIGN_OR_RETURN(EvalResult eval, EvaluateSplit(sampler, data.gatherer(), model, labels, o.want_embeddings, sink,
                                                       /*gather_stats=*/nullptr, o.want_logits));
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
                     std::vector<float>* embeddings, std::vector<float>* logits, EvalResult* result) {
  const auto n = static_cast<int64_t>(distinct.ids.size());
  const int64_t w = group.world_size();
  const int64_t lo = n * group.rank() / w;
  const int64_t hi = n * (group.rank() + 1) / w;
  const int64_t dim = model.embedding_dim();
  const int64_t num_classes = model.config().num_classes;
  classes->assign(static_cast<size_t>(n), 0);
  if (o.want_embeddings) embeddings->assign(static_cast<size_t>(n * dim), 0.0f);
  if (o.want_logits) logits->assign(static_cast<size_t>(n * num_classes), 0.0f);
  int64_t counts[2] = {0, 0};  // correct, labeled
  if (hi > lo) {
    const DistinctNodes share =
        Distinct(std::vector<int64_t>(distinct.ids.begin() + lo, distinct.ids.begin() + hi));
    PredictOptions share_options = o;
    share_options.show_progress = o.show_progress && group.rank() == 0;
    std::vector<int64_t> share_classes;
    std::vector<float> share_embeddings;
    std::vector<float> share_logits;
    EvalResult eval;
    SEER_RETURN_IF_ERROR(PredictDistinct(share_options, fanouts, data, model, share, &share_classes, &share_embeddings,
                                         &share_logits, &eval));
    std::copy(share_classes.begin(), share_classes.end(), classes->begin() + lo);
    if (o.want_embeddings) std::copy(share_embeddings.begin(), share_embeddings.end(), embeddings->begin() + lo * dim);
    if (o.want_logits) std::copy(share_logits.begin(), share_logits.end(), logits->begin() + lo * num_classes);
    counts[0] = eval.correct;
    counts[1] = eval.labeled;
  }
  SEER_RETURN_IF_ERROR(group.AllreduceInt64(classes->data(), n, ProcessGroup::ReduceOp::kSum, "predicted classes"));
  if (o.want_embeddings) SEER_RETURN_IF_ERROR(group.AllreduceSum(embeddings->data(), n * dim, "predicted embeddings"));
  if (o.want_logits) SEER_RETURN_IF_ERROR(group.AllreduceSum(logits->data(), n * num_classes, "predicted logits"));
  SEER_RETURN_IF_ERROR(group.AllreduceInt64(counts, 2, ProcessGroup::ReduceOp::kSum, "prediction accuracy counts"));
  result->correct = counts[0];
  result->labeled = counts[1];
  result->accuracy = counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : -1;
  return Status::Ok();
}

}  // namespace

Result<PredictResult> RunPrediction(const PredictOptions& options) {
  KeepLargeAllocationsMapped();
  PredictOptions o = options;
  std::string load_warning;
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> model, ModelRunner::LoadModel(o.model_path, o.use_cuda, &load_warning));
  // Default fan-outs: the ones the model was trained with (recorded in the file), else
  // 10 per layer (files written before they were recorded).
  std::vector<int> fanouts = o.fanouts;
  if (fanouts.empty()) fanouts = model->training_record().fanouts;
  if (fanouts.empty()) fanouts.assign(static_cast<size_t>(model->config().num_layers), 10);
  if (model->config().kind != ModelKind::kMlp && static_cast<int64_t>(fanouts.size()) != model->config().num_layers) {
    return InvalidArgument(fmt::format("--fanouts has {} layers, the model {}", fanouts.size(), model->config().num_layers));
  }
  MemoryBudgetRequest request;
  request.budget_bytes = o.memory_budget_bytes;
  // The model is loaded; on CUDA a throwaway copy's first steps load the kernels the
  // predictions use before the runtime is measured (executor/runtime_footprint.h).
  request.runtime_bytes = RuntimeBytesToCharge(o.runtime_bytes, o.use_cuda && model->on_cuda(),
                                               [&] { WarmUpTrainingStep(model->config(), fanouts, /*use_cuda=*/true); });
  request.batch_size = o.batch_size;
  request.fanouts = fanouts;
  DataIoOptions io;
  io.mode = o.io;
  io.direct = o.direct_io;
  io.target_type = o.target_type;
  // A typed model samples each relation as it was trained (unless --fanouts changes the layers).
  if (o.fanouts.empty()) io.relation_fanouts = model->training_record().relation_fanouts;
  if (o.task && *o.task != model->config().task) {
    return InvalidArgument(fmt::format("{}: a {} model (seer train --task {}), not the --task {} it was asked for",
                                       o.model_path,
                                       model->config().task == ModelTask::kLink ? "link prediction" : "node classification",
                                       ModelTaskName(model->config().task), ModelTaskName(*o.task)));
  }
  if (!o.pairs.empty()) {
    if (model->config().task != ModelTask::kLink) {
      return InvalidArgument(o.model_path + ": a node classification model scores no pairs");
    }
    if (!o.nodes.empty()) return InvalidArgument("predict: give nodes or pairs, not both");
    for (const auto& [u, v] : o.pairs) {  // endpoints in pair order: u of pair i at 2i, v at 2i + 1
      o.nodes.push_back(u);
      o.nodes.push_back(v);
    }
    o.want_embeddings = true;
  }
  PilotSpec pilot = PredictionPilot(o, fanouts);
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<DataPath> data, DataPath::Open(o.dataset_dir, request, io, &pilot));
  SEER_RETURN_IF_ERROR(CheckModelFitsDataset(*model, *data, o.model_path, o.allow_other_dataset));
  SEER_ASSIGN_OR_RETURN(const RankEnv env, ResolveRankEnv(o.dist));
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<ProcessGroup> group, ConnectIfDistributed(env));
  if (group) SEER_RETURN_IF_ERROR(CheckRanksMatch(*group, *data, model.get()));
  model->SetGraphIndptr(data->graph_indptr());  // GCN's full-graph degrees (none: typed)
  PredictResult result;
  result.warning = load_warning;
  result.fanouts = fanouts;
  result.rank = env.rank;
  result.world_size = env.world_size;
  result.link = model->config().task == ModelTask::kLink;
  result.nodes = o.nodes;
  if (result.nodes.empty() && result.link) {
    result.nodes.resize(static_cast<size_t>(data->manifest().num_nodes));
    for (size_t v = 0; v < result.nodes.size(); ++v) result.nodes[v] = static_cast<int64_t>(v);
  } else if (result.nodes.empty()) {
    SEER_ASSIGN_OR_RETURN(result.nodes, data->TakeSplit(pilot, "test"));
  } else if (const TypedTarget* target = data->target()) {
    // A typed dataset: --nodes are the target type's local ids.
    SEER_RETURN_IF_ERROR(CheckNodeRange(result.nodes, target->count));
    for (int64_t& v : result.nodes) v += target->offset;
  }
  SEER_RETURN_IF_ERROR(CheckNodeRange(result.nodes, data->manifest().num_nodes));
  result.embedding_dim = model->embedding_dim();
  result.num_classes = model->config().num_classes;
  const DistinctNodes distinct = Distinct(result.nodes);
  result.distinct_nodes = static_cast<int64_t>(distinct.ids.size());
  if (distinct.ids.empty()) return result;
  std::vector<int64_t> classes;
  std::vector<float> embeddings;
  std::vector<float> logits;
  EvalResult eval;
  if (group != nullptr) {
    SEER_RETURN_IF_ERROR(
        PredictShared(o, fanouts, *data, *model, *group, distinct, &classes, &embeddings, &logits, &eval));
  } else {
    SEER_RETURN_IF_ERROR(PredictDistinct(o, fanouts, *data, *model, distinct, &classes, &embeddings, &logits, &eval));
  }
  result.accuracy = result.link ? -1 : eval.accuracy;  // a link model predicts no class
  result.labeled = result.link ? 0 : eval.labeled;
  result.correct = result.link ? 0 : eval.correct;
  // Back to the caller's order (duplicates included).
  const int64_t dim = result.embedding_dim;
  const int64_t num_classes = result.num_classes;
  result.classes.resize(result.nodes.size());
  if (o.want_embeddings) result.embeddings.resize(result.nodes.size() * static_cast<size_t>(dim));
  if (o.want_logits) result.logits.resize(result.nodes.size() * static_cast<size_t>(num_classes));
  for (size_t i = 0; i < result.nodes.size(); ++i) {
    const size_t idx = distinct.index_of.at(result.nodes[i]);
    result.classes[i] = classes[idx];
    if (o.want_embeddings) {
      std::copy(embeddings.begin() + static_cast<int64_t>(idx) * dim, embeddings.begin() + static_cast<int64_t>(idx + 1) * dim,
                result.embeddings.begin() + static_cast<int64_t>(i) * dim);
    }
    if (o.want_logits) {
      std::copy(logits.begin() + static_cast<int64_t>(idx) * num_classes,
                logits.begin() + static_cast<int64_t>(idx + 1) * num_classes,
                result.logits.begin() + static_cast<int64_t>(i) * num_classes);
    }
  }
  if (const TypedTarget* target = data->target()) {
    for (int64_t& v : result.nodes) v -= target->offset;  // back to the target type's local ids
  }
  if (!o.pairs.empty()) {
    // Pair i's endpoints are rows 2i and 2i + 1: every second row is a source.
    const int64_t p = static_cast<int64_t>(o.pairs.size());
    std::vector<float> u(static_cast<size_t>(p * dim)), v(static_cast<size_t>(p * dim));
    for (int64_t i = 0; i < p; ++i) {
      std::copy_n(result.embeddings.begin() + 2 * i * dim, dim, u.begin() + i * dim);
      std::copy_n(result.embeddings.begin() + (2 * i + 1) * dim, dim, v.begin() + i * dim);
    }
    result.pair_scores.resize(static_cast<size_t>(p));
    model->ScoreEmbeddings(u.data(), v.data(), p, result.pair_scores.data());
    if (!options.want_embeddings) {
      result.embeddings.clear();
      result.embeddings.shrink_to_fit();
    }
  }
  return result;
}

}  // namespace seer
