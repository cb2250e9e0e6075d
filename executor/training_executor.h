// TrainingExecutor: the executor thread's side of the epoch loop. It takes the batches a
// SuperbatchPipeline delivers, trains the model on each (or only hands the rows to
// --batch-hook with --no-train), accounts them in the epoch's EpochReport and drives the
// progress line; after every superbatch it hands the superbatch back to the pipeline and
// checkpoints when due; after every epoch it evaluates (the last epoch and every
// --eval-every; a better validation accuracy snapshots the weights), reports the epoch,
// checkpoints and lets the pipeline's gather thread into the next epoch.
//
// Everything in TrainContext is the caller's and must outlive the executor. Run blocks on
// the pipeline; it and the accessors are the executor thread's only. After an error the
// caller still Stop()s the pipeline (Run does not).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "executor/checkpointer.h"
#include "executor/data_path.h"
#include "executor/device_feature_tier.h"
#include "executor/epoch_reporter.h"
#include "executor/label_table.h"
#include "executor/model_runner.h"
#include "executor/process_group.h"
#include "executor/superbatch_pipeline.h"
#include "executor/train_options.h"
#include "inspector/superbatch_driver.h"
#include "storage/base/status.h"

namespace seer {

// The training sampler and the evaluation samplers (no shuffle; absent for an empty split).
struct TrainingSamplers {
  std::optional<SuperbatchSampler> train, valid, test;
};

// What the executor thread needs to train and evaluate.
struct TrainContext {
  const TrainOptions& options;
  DataPath& data;
  const LabelTable& labels;
  TrainingSamplers& samplers;
  ModelRunner* model;  // null with --no-train
  const Checkpointer& checkpointer;
  EpochReporter& reporter;
  DeviceFeatureTier* device_tier = nullptr;  // --device-cache (executor/device_feature_tier.h); null = off
  // Data-parallel runs (executor/process_group.h); null = one process. With a group every
  // epoch starts with a check that every rank has the same batch and superbatch counts,
  // and evaluation results are summed over the ranks' shards.
  ProcessGroup* group = nullptr;
};

class TrainingExecutor {
 public:
  TrainingExecutor(const TrainContext& ctx, TrainPosition start)
      : ctx_(ctx), position_(start), epoch_start_(std::chrono::steady_clock::now()) {}

  // Trains until the pipeline runs dry or --stop-after superbatches have run; the first
  // error of a training step, checkpoint, evaluation or report.
  Status Run(SuperbatchPipeline& pipeline);
  // Where the run stands: after Run, the position a resume starts from.
  const TrainPosition& position() const { return position_; }
  // The epochs Run completed, in order (evaluated ones carry valid/test accuracy).
  const std::vector<EpochReport>& epochs() const { return epochs_; }
  // Run stopped because of --stop-after (the position is checkpointed).
  bool stopped_early() const { return stopped_early_; }

 private:
  EpochReport& BeginBatch(const GatheredBatch& g, double waited);
  Status TrainBatch(const BatchTrace& batch, const float* rows, const DeviceRows* device_rows, EpochReport& r,
                    double* loss);
  // The batch's rows on the model's device: through the device tier when there is one
  // (*device_rows), else the gathered host rows; counts host->device bytes in r.gather.
  Status AssembleRows(const GatheredBatch& g, EpochReport& r, const float** rows, const DeviceRows** device_rows);
  Status EndSuperbatch(const GatheredBatch& g, SuperbatchPipeline& pipeline, bool* stop);
  Status EndEpoch(int64_t epoch);
  Status EvaluateEpoch(int64_t epoch, EpochReport& r);
  Status CheckRanksAgree(int64_t epoch);

  TrainContext ctx_;
  TrainPosition position_;
  std::vector<EpochReport> epochs_;
  bool stopped_early_ = false;
  std::optional<EpochReport> report_;
  // An epoch's wall time runs from the end of the previous one (or the pipeline start),
  // so time spent waiting for the first superbatch's sampling and plan is included.
  std::chrono::steady_clock::time_point epoch_start_;
  double loss_sum_ = 0;
  int64_t loss_batches_ = 0, correct_ = 0, labeled_ = 0;
  int64_t done_batches_ = 0, done_seeds_ = 0, executed_superbatches_ = 0;
  std::vector<int32_t> seed_labels_;
};

}  // namespace seer
