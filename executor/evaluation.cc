#include "executor/evaluation.h"

#include <cmath>

#include "executor/process_group.h"

namespace seer {

Result<EvalResult> EvaluateSplit(SuperbatchSampler& sampler, FeatureGatherer& gatherer, ModelRunner& model,
                                 const LabelTable& labels, bool want_embeddings, const PredictionSink& per_batch,
                                 GatherStats* gather_stats, bool want_logits) {
  int64_t correct = 0, labeled = 0;
  std::vector<float> rows;
  std::vector<int64_t> classes;
  std::vector<float> embeddings;
  std::vector<float> logits;
  std::vector<float> positive_scores, negative_scores;
  LinkMetrics link;
  for (int64_t k = 0; k < sampler.num_superbatches(); ++k) {
    SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, sampler.Sample(0, k));
    for (const BatchTrace& batch : trace.batches) {
      SEER_RETURN_IF_ERROR(gatherer.GatherReadOnly(batch, &rows, gather_stats));
      if (!batch.link.empty()) {
        model.ScoreLinks(batch, rows.data(), &positive_scores, &negative_scores);
        AddLinkRanks(positive_scores.data(), negative_scores.data(), batch.link.num_pairs(),
                     batch.link.negatives_per_pair, &link);
        continue;
      }
      classes.resize(static_cast<size_t>(batch.num_seeds));
      model.Predict(batch, rows.data(), classes.data(), want_embeddings ? &embeddings : nullptr,
                    want_logits ? &logits : nullptr);
      for (int64_t s = 0; s < batch.num_seeds; ++s) {
        const int32_t label = labels.Get(batch.node_ids[static_cast<size_t>(s)]);
        if (label < 0) continue;
        ++labeled;
        correct += classes[static_cast<size_t>(s)] == label;
      }
      if (per_batch) per_batch(batch, classes.data(), embeddings, logits);
    }
  }
  EvalResult result;
  result.labeled = labeled;
  result.correct = correct;
  result.accuracy = labeled > 0 ? static_cast<double>(correct) / labeled : -1;
  result.link = link;
  if (link.pairs > 0) result.accuracy = link.mrr();
  return result;
}

Result<EvalResult> ReduceEvalResult(const EvalResult& local, ProcessGroup* group, const std::string& what) {
  if (group == nullptr) return local;
  // The reciprocal ranks' sum travels as a fixed-point int64 (2^-32 steps; a sum is at
  // most the pair count) so the reduction is exact integer arithmetic.
  constexpr double kFixedPoint = 4294967296.0;
  int64_t counts[7] = {local.correct,     local.labeled,     local.link.pairs, local.link.hits1,
                       local.link.hits10, local.link.hits50,
                       static_cast<int64_t>(std::llround(local.link.reciprocal_rank_sum * kFixedPoint))};
  SEER_RETURN_IF_ERROR(group->AllreduceInt64(counts, 7, ProcessGroup::ReduceOp::kSum, what));
  EvalResult result;
  result.correct = counts[0];
  result.labeled = counts[1];
  result.accuracy = result.labeled > 0 ? static_cast<double>(result.correct) / result.labeled : -1;
  result.link.pairs = counts[2];
  result.link.hits1 = counts[3];
  result.link.hits10 = counts[4];
  result.link.hits50 = counts[5];
  result.link.reciprocal_rank_sum = static_cast<double>(counts[6]) / kFixedPoint;
  if (result.link.pairs > 0) result.accuracy = result.link.mrr();
  return result;
}

std::vector<int64_t> EvalShard(const std::vector<int64_t>& ids, int rank, int world_size) {
  if (world_size <= 1) return ids;
  const int64_t n = static_cast<int64_t>(ids.size());
  return std::vector<int64_t>(ids.begin() + rank * n / world_size, ids.begin() + (rank + 1) * n / world_size);
}

}  // namespace seer
