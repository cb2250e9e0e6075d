#include "executor/data_parallel.h"

#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"
#include "storage/base/parse_number.h"

namespace seer {

Result<std::unique_ptr<ProcessGroup>> ConnectIfDistributed(const RankEnv& env) {
  if (!env.distributed()) return std::unique_ptr<ProcessGroup>();
  return ProcessGroup::Connect(env);
}

std::string DescribeDataParallel(const RankEnv& env, int64_t batch_size) {
  return fmt::format("data-parallel: {} ranks ({}), rendezvous at {}:{}, {} seeds per rank per step "
                     "({} per step in all); --memory-budget is per rank",
                     env.world_size, env.source, env.master_addr, env.master_port, batch_size,
                     batch_size * env.world_size);
}

std::string RankMetricsPath(const std::string& path, const RankEnv& env) {
  const size_t at = path.find("{rank}");
  if (at != std::string::npos) return fmt::format("{}{}{}", path.substr(0, at), env.rank, path.substr(at + 6));
  return env.rank == 0 ? path : std::string();
}

Status CheckRanksMatch(ProcessGroup& group, const DataPath& data, const ModelRunner* model) {
  const std::string identity = data.manifest().Identity();
  const std::optional<uint64_t> hash = ParseNumber<uint64_t>(identity, 16);
  if (!hash) return Status(StatusCode::kInternal, fmt::format("dataset identity '{}' is not 64-bit hex", identity));
  const auto id = static_cast<int64_t>(*hash);
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> ids, group.AllgatherInt64(id, "dataset identity check"));
  if (std::string odd = RanksDifferingFromRankZero(ids, /*hex=*/true); !odd.empty()) {
    return InvalidArgument(fmt::format("rank {}: the ranks train on different data: rank 0's dataset is {:016x}, "
                                       "{} ({}: each rank needs a copy of the same dataset)",
                                       group.rank(), static_cast<uint64_t>(ids[0]), odd, data.dataset().dir()));
  }
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> s,
                        group.AllgatherInt64(data.split().superbatch, "superbatch size check"));
  if (std::string odd = RanksDifferingFromRankZero(s); !odd.empty()) {
    return InvalidArgument(fmt::format("rank {}: --superbatch auto chose {} batches on rank 0 and differs at {}: "
                                       "give every rank the same --memory-budget or pass --superbatch N",
                                       group.rank(), s[0], odd));
  }
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> params,
                        group.AllgatherInt64(model ? model->num_parameters() : -1, "model size check"));
  if (std::string odd = RanksDifferingFromRankZero(params); !odd.empty()) {
    return InvalidArgument(fmt::format("rank {}: the ranks built different models (rank 0: {} parameters; {})",
                                       group.rank(), params[0], odd));
  }
  return Status::Ok();
}

Result<TrainPosition> ResumeRanks(ProcessGroup& group, const TrainOptions& o, const Checkpointer& checkpointer,
                                  ModelRunner* model, const std::string& runtime_dir, TrainPosition position) {
  if (model == nullptr) return position;
  if (o.resume) {
    std::string bytes;
    if (group.rank() == 0) {
      SEER_ASSIGN_OR_RETURN(bytes, ReadWholeFile(checkpointer.path()));
    }
    SEER_RETURN_IF_ERROR(group.BroadcastBytes(&bytes, 0, "checkpoint broadcast for --resume"));
    if (group.rank() != 0) {
      const std::string copy = runtime_dir + "/resume-from-rank0.ckpt";
      SEER_RETURN_IF_ERROR(WriteFileAtomically(copy, bytes));
      SEER_ASSIGN_OR_RETURN(position, model->LoadCheckpoint(copy));
      std::error_code ec;
      std::filesystem::remove(copy, ec);
      if (position.seed != o.seed) {
        return InvalidArgument(fmt::format("{} (from rank 0): checkpoint was written with --seed {}, this run uses {}",
                                           checkpointer.path(), position.seed, o.seed));
      }
    }
  }
  SEER_RETURN_IF_ERROR(model->BroadcastParameters(group, 0));
  return position;
}

}  // namespace seer
