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
    if (!options.writer) return Checkpointer(options, path);  // rank 0 checks and sends it
    if (!std::filesystem::exists(path)) return Status(StatusCode::kNotFound, path + ": no checkpoint to resume from");
    // Refuse a damaged checkpoint before any work is done.
    SEER_RETURN_IF_ERROR(ReadCheckpointPosition(path).status());
  }
  return Checkpointer(options, path);
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

bool Checkpointer::DueAfterSuperbatch(int64_t executed_superbatches) const {
  return options_.checkpoint_every > 0 && executed_superbatches % options_.checkpoint_every == 0;
}

}  // namespace seer
