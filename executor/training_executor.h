// TrainingExecutor: the executor thread's side of the epoch loop. It takes the batches a
// SuperbatchPipeline delivers, trains the model on each (or only hands the rows to
// --batch-hook with --no-train), accounts them in the epoch's EpochReport and drives the
// progress line; after every superbatch it hands the superbatch back to the pipeline and
// checkpoints when due; after every epoch it evaluates (the last epoch and every
// --eval-every; a better validation accuracy snapshots the weights), reports the epoch,
// checkpoints and lets the pipeline's gather thread into the next epoch.
//
// Stop requests (TrainOptions::stop_signal, set by SIGINT/SIGTERM: executor/interrupt.h)
// are honoured at batch boundaries: before a batch is trained — and when Next() gave up
// waiting for one — the request is checked. One process checks before every batch.
// Data-parallel ranks check at the same batches through one small max-allreduce: before
// each superbatch's first batch and every N batches in between, N agreed at each check
// so that checks are about kStopCheckSeconds apart (a stop waits at most that long, and
// the collective costs little even with millisecond steps); every rank stops before the
// same batch. Run then checkpoints the position after the last trained batch (inside a
// superbatch: TrainPosition::next_batch) and returns with interrupted_by() set. A resume from such a position samples that
// superbatch again and skips its trained batches (gathered, not trained). Timed
// checkpoints (Checkpointer::DueByTime) are written after a batch the same way.
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

// Data-parallel stop checks: about this many seconds of batches apart, at most this many
// batches (and always before a superbatch's first batch).
inline constexpr double kStopCheckSeconds = 0.1;
inline constexpr int64_t kStopCheckMaxBatches = 1024;

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
  // `start`: where the pipeline's schedule starts (RunTraining's MakeSchedule).
  TrainingExecutor(const TrainContext& ctx, TrainPosition start);

  // Trains until the pipeline runs dry, --stop-after superbatches have run or a stop
  // request; the first error of a training step, checkpoint, evaluation or report.
  Status Run(SuperbatchPipeline& pipeline);
  // Where the run stands: after Run, the position a resume starts from.
  const TrainPosition& position() const { return position_; }
  // The epochs Run completed, in order (evaluated ones carry valid/test accuracy).
  const std::vector<EpochReport>& epochs() const { return epochs_; }
  // Run stopped because of --stop-after (the position is checkpointed).
  bool stopped_early() const { return stopped_early_; }
  // Run stopped on a stop request: the signal's number (every rank's largest), else 0.
  // The position is checkpointed (with a checkpoint directory).
  int interrupted_by() const { return interrupted_by_; }

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
  // The stop request at a check point: 0 or a signal number, the same on every rank
  // (every rank's largest). Only with TrainOptions::stop_signal (every rank sets one, or
  // none: the check is a collective).
  Result<int> AgreedStop();
  // A batch a resume inside its superbatch already trained.
  bool AlreadyTrained(const GatheredBatch& g) const;
  // position_ after batch g (inside its superbatch) with the epoch's sums so far.
  void MarkTrained(const GatheredBatch& g, const EpochReport& r);
  Status SaveCheckpoint();

  TrainContext ctx_;
  const TrainPosition start_;
  TrainPosition position_;
  std::vector<EpochReport> epochs_;
  bool stopped_early_ = false;
  int interrupted_by_ = 0;
  // Batches the schedule has yet to deliver: a Next() without a batch while some are due
  // gave up waiting (a stop request) rather than ended.
  int64_t due_batches_ = 0;
  std::chrono::steady_clock::time_point last_checkpoint_;
  // Stop checks (AgreedStop): before the next batch?, batches since the last one, the
  // agreed number of batches between two, when the last one was.
  bool check_next_ = true;
  int64_t since_check_ = 0, check_interval_ = 1;
  std::chrono::steady_clock::time_point last_check_;
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
