// Checkpointer: when and where `seer train` checkpoints, and how it resumes.
//
//   Open     checks the resume request before any work is done: --resume needs
//            --checkpoint-dir and a model (not --no-train), and the checkpoint must exist
//            and have a readable header; creates the checkpoint directory.
//   CheckRun --resume: the checkpoint's run record (TrainPosition::run: the dataset's
//            identity and every flag that shapes batches and plans, TrainRunRecord)
//            must equal this run's; a difference is refused naming each flag and both
//            values (a resume with another --superbatch or --batch-size would skip or
//            repeat batches). --epochs, --eval-every, --lr, the cache and I/O flags may
//            change.
//   Resume   loads weights, Adam state and position into the model (--resume), refusing
//            a checkpoint written with another --seed; without --resume it returns the
//            start position.
//   Save     writes DIR/checkpoint.ckpt atomically (ModelRunner::SaveCheckpoint, format
//            in executor/checkpoint_file.h); a no-op without --checkpoint-dir or a model.
//   DueAfterSuperbatch  --checkpoint-every N: true after every N-th executed superbatch
//            (epoch ends always checkpoint).
//   DueByTime  --checkpoint-every DURATION (default 10m with --checkpoint-dir): true when
//            that much time passed since the last checkpoint; the TrainingExecutor asks
//            after every batch and saves the position inside the superbatch.
//
// Holds no model; Resume and Save block on the file. Executor thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "executor/model_runner.h"
#include "executor/train_options.h"
#include "storage/base/output_lock.h"
#include "storage/base/status.h"

namespace seer {

class Checkpointer {
 public:
  struct Options {
    std::string checkpoint_dir;  // "" = no checkpoints
    int64_t checkpoint_every = 0;  // superbatches; 0 = only at the end of every epoch
    bool resume = false;
    bool no_train = false;
    // Data-parallel runs: only rank 0 writes (and checks the file a resume reads); the
    // other ranks receive the checkpoint from rank 0 (RunTraining) and never write.
    bool writer = true;
    double checkpoint_every_seconds = 0;  // timed checkpoints; 0 = none (resolved: TimedCheckpointSeconds)
  };
  static Result<Checkpointer> Open(const Options& options);

  // The position to start from (`seed` recorded in it).
  Result<TrainPosition> Resume(ModelRunner* model, uint64_t seed) const;
  Status Save(ModelRunner* model, const TrainPosition& position) const;
  bool DueAfterSuperbatch(int64_t executed_superbatches) const;
  bool DueByTime(double seconds_since_last_checkpoint) const;
  Status CheckRun(const std::map<std::string, std::string>& run) const;

  bool enabled() const { return !path_.empty(); }
  bool resuming() const { return options_.resume; }
  const std::string& path() const { return path_; }  // "" when disabled

 private:
  Checkpointer(Options options, std::string path, std::shared_ptr<OutputLock> lock)
      : options_(std::move(options)), path_(std::move(path)), lock_(std::move(lock)) {}
  Options options_;
  std::string path_;
  // The writer's lock on the checkpoint directory (storage/base/output_lock.h): a second
  // run writing checkpoints there is refused at Open, naming this one.
  std::shared_ptr<OutputLock> lock_;
};

// The interval of timed checkpoints: TrainOptions::checkpoint_every_seconds, its auto
// value (-1) resolved (10 minutes with a checkpoint directory and no
// --checkpoint-every N superbatches); 0 = none.
double TimedCheckpointSeconds(const TrainOptions& o);

// `seer train`'s run record: the dataset's identity and the flags that shape the
// batches and plans (the resolved batches per superbatch: --superbatch auto may resolve
// differently under another --memory-budget) and the number of ranks (--batch-size is
// per rank).
std::map<std::string, std::string> TrainRunRecord(const TrainOptions& o, int64_t batches_per_superbatch,
                                                  const std::string& dataset_identity, int world_size = 1);

}  // namespace seer
