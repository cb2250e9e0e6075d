// Evaluation: runs a trained model over a split's seeds and measures accuracy. Samples
// with the given sampler at a fixed epoch 0 (the caller creates it without shuffling),
// gathers feature rows read-only through the run's shared feature cache (the cache's
// content is not changed), and predicts batch by batch on the caller's thread.
// Blocks on sampling and reads. Not thread-safe: the gatherer and the model are the
// caller's for the duration (the training pipeline's gather thread waits at the epoch
// gate meanwhile).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "executor/feature_gather.h"
#include "executor/label_table.h"
#include "executor/link_metrics.h"
#include "executor/model_runner.h"
#include "inspector/superbatch_driver.h"
#include "storage/base/status.h"

namespace seer {

struct EvalResult {
  // The selection metric: accuracy over labeled seeds, or for link prediction the MRR;
  // -1 when there is nothing to measure.
  double accuracy = -1;
  int64_t labeled = 0;
  int64_t correct = 0;
  LinkMetrics link;  // link prediction: the ranked pairs (pairs 0 for node classification)
};

class ProcessGroup;  // executor/process_group.h

// Data-parallel evaluation: every rank evaluates its shard (EvalShard) and the (correct,
// labeled) pairs are summed over the ranks, so every rank gets the whole split's
// accuracy — what one process gets, since a seed's prediction does not depend on the
// batch it is in (inspector/sampler.h). `group` null: `local` unchanged.
Result<EvalResult> ReduceEvalResult(const EvalResult& local, ProcessGroup* group, const std::string& what);
// Rank `rank`'s contiguous shard of `ids` ([r*n/W, (r+1)*n/W)); every id in one shard.
std::vector<int64_t> EvalShard(const std::vector<int64_t>& ids, int rank, int world_size);

// Receives every batch's predicted classes (num_seeds) and, when asked, its embeddings
// (num_seeds x embedding_dim) and logits (num_seeds x num_classes); empty when not asked.
using PredictionSink = std::function<void(const BatchTrace& batch, const int64_t* classes,
                                          const std::vector<float>& embeddings, const std::vector<float>& logits)>;

// `per_batch` and `gather_stats` may be null. A link prediction sampler's batches (pairs
// with their fixed negatives) are scored (ModelRunner::ScoreLinks) and ranked as OGB does
// (executor/link_metrics.h); labels are then not read.
Result<EvalResult> EvaluateSplit(SuperbatchSampler& sampler, FeatureGatherer& gatherer, ModelRunner& model,
                                 const LabelTable& labels, bool want_embeddings = false,
                                 const PredictionSink& per_batch = nullptr, GatherStats* gather_stats = nullptr,
                                 bool want_logits = false);

}  // namespace seer
