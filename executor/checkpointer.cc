#include "executor/checkpointer.h"

#include <filesystem>
#include <utility>

#include "executor/checkpoint_file.h"
#include "storage/base/file_io.h"

namespace seer {

Result<Checkpointer> Checkpointer::Open(const Options& options) {
  const std::string path = options.checkpoint_dir.empty() ? "" : options.checkpoint_dir + "/checkpoint.ckpt";
  if (options.resume) {
    if (path.empty()) return InvalidArgument("--resume needs --checkpoint-dir");
    if (options.no_train) return InvalidArgument("--resume cannot be combined with --no-train");
    if (!options.writer) return Checkpointer(options, path, nullptr);  // rank 0 checks and sends it
    if (!std::filesystem::exists(path)) return Status(StatusCode::kNotFound, path + ": no checkpoint to resume from");
    // Refuse a damaged checkpoint before any work is done.
    SEER_RETURN_IF_ERROR(ReadCheckpointPosition(path).status());
  }
  std::shared_ptr<OutputLock> lock;
  if (!path.empty() && options.writer) {
    SEER_RETURN_IF_ERROR(MakeDirectories(options.checkpoint_dir));
    SEER_ASSIGN_OR_RETURN(OutputLock held,
                          OutputLock::Acquire(options.checkpoint_dir, "seer train --checkpoint-dir " + options.checkpoint_dir));
    lock = std::make_shared<OutputLock>(std::move(held));
  }
  return Checkpointer(options, path, std::move(lock));
}

Result<TrainPosition> Checkpointer::Resume(ModelRunner* model, uint64_t seed) const {
  if (!path_.empty() && options_.writer) SEER_RETURN_IF_ERROR(MakeDirectories(options_.checkpoint_dir));
  TrainPosition position;
  position.seed = seed;
  if (!options_.resume || !options_.writer) return position;
  SEER_ASSIGN_OR_RETURN(position, model->LoadCheckpoint(path_));
  if (position.seed != seed) {
    return InvalidArgument(path_ + ": checkpoint was written with --seed " + std::to_string(position.seed) +
                           ", this run uses " + std::to_string(seed));
  }
  return position;
}

Status Checkpointer::Save(ModelRunner* model, const TrainPosition& position) const {
  if (path_.empty() || model == nullptr || !options_.writer) return Status::Ok();
  return model->SaveCheckpoint(path_, position);
}

Status Checkpointer::CheckRun(const std::map<std::string, std::string>& run) const {
  // Open refused a missing checkpoint where this process reads it.
  if (!options_.resume || path_.empty() || !std::filesystem::exists(path_)) return Status::Ok();
  SEER_ASSIGN_OR_RETURN(CheckpointHeader header, ReadCheckpointHeader(path_));
  const std::string differences = DescribeRunDifferences(header.position.run, run);
  if (differences.empty()) return Status::Ok();
  return InvalidArgument(path_ + ": cannot resume with other data or batching flags (rerun with the checkpoint's "
                         "values, or start a new run in another --checkpoint-dir):\n  " + differences);
}

std::map<std::string, std::string> TrainRunRecord(const TrainOptions& o, int64_t batches_per_superbatch,
                                                  const std::string& dataset_identity, int world_size) {
  std::string fanouts;
  if (o.model != ModelKind::kMlp) {
    for (int f : o.fanouts) fanouts += (fanouts.empty() ? "" : ",") + std::to_string(f);
  }
  std::map<std::string, std::string> record{{"dataset", dataset_identity},
          {"--batch-size", std::to_string(o.batch_size)},
          // The conventional pipeline groups --prefetch batches where the superbatch
          // pipeline groups --superbatch (resolved when auto).
          {o.pipeline == PipelineKind::kConventional ? "--prefetch" : "--superbatch",
           std::to_string(batches_per_superbatch)},
          {"--pipeline", PipelineKindName(o.pipeline)},
          {"--fanouts", o.model == ModelKind::kMlp ? "none" : fanouts},
          {"--seed", std::to_string(o.seed)},
          {"--model", ModelKindName(o.model)},
          // --batch-size is per rank: another rank count is another global batch.
          {"world size (ranks)", std::to_string(world_size)}};
  // Typed datasets: the target and per-relation fan-outs (other runs keep their record).
  if (!o.target_type.empty()) record["--target-type"] = o.target_type;
  if (!o.relation_fanouts.empty()) record["--relation-fanouts"] = o.relation_fanouts;
  // Link prediction's batches also depend on their negatives (node runs keep their record).
  if (o.task == ModelTask::kLink) {
    record["--task"] = ModelTaskName(o.task);
    record["--negatives"] = std::to_string(o.link.negatives);
    record["--negative-dist"] = NegativeDistributionName(o.link.distribution);
    record["--shared-negatives"] = o.link.shared ? "on" : "off";
  }
  return record;
}

bool Checkpointer::DueAfterSuperbatch(int64_t executed_superbatches) const {
  return options_.checkpoint_every > 0 && executed_superbatches % options_.checkpoint_every == 0;
}

bool Checkpointer::DueByTime(double seconds_since_last_checkpoint) const {
  return enabled() && options_.checkpoint_every_seconds > 0 &&
         seconds_since_last_checkpoint >= options_.checkpoint_every_seconds;
}

double TimedCheckpointSeconds(const TrainOptions& o) {
  if (o.checkpoint_dir.empty()) return 0;
  if (o.checkpoint_every_seconds >= 0) return o.checkpoint_every_seconds;
  return o.checkpoint_every > 0 ? 0 : kDefaultCheckpointEverySeconds;
}

}  // namespace seer
