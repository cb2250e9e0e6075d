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
#include <vector>

#include "executor/feature_gather.h"
#include "executor/label_table.h"
#include "executor/model_runner.h"
#include "inspector/superbatch_driver.h"
#include "storage/base/status.h"

namespace seer {

struct EvalResult {
  double accuracy = -1;  // over labeled seeds; -1 when none is labeled
  int64_t labeled = 0;
};

// Receives every batch's predicted classes (num_seeds) and, when asked, its embeddings.
using PredictionSink = std::function<void(const BatchTrace& batch, const int64_t* classes,
                                          const std::vector<float>& embeddings)>;

// `per_batch` and `gather_stats` may be null.
Result<EvalResult> EvaluateSplit(SuperbatchSampler& sampler, FeatureGatherer& gatherer, ModelRunner& model,
                                 const LabelTable& labels, bool want_embeddings = false,
                                 const PredictionSink& per_batch = nullptr, GatherStats* gather_stats = nullptr);

}  // namespace seer
