// The data-parallel glue of the run loops (RunTraining, RunPrediction), around the
// ProcessGroup (executor/process_group.h): connecting when the world has more than one
// rank, the start-up checks every rank must pass before any work, the resume that rank 0
// (the only checkpoint writer) shares with the others, and which rank writes --metrics.
// World size 1 needs none of it: the run loops then make no group.
//
// Every function that takes a group is collective: each rank calls it in the same order
// (one caller thread per rank, as ProcessGroup requires); a failed collective is the
// group's kIoError Status, a rank that differs is kInvalidArgument naming the odd ranks.
#pragma once

#include <memory>
#include <string>

#include "executor/checkpointer.h"
#include "executor/data_path.h"
#include "executor/model_runner.h"
#include "executor/process_group.h"
#include "executor/rank_env.h"
#include "executor/train_options.h"
#include "storage/base/status.h"

namespace seer {

// The group of a data-parallel run (blocks for the rendezvous), or null for world size 1.
Result<std::unique_ptr<ProcessGroup>> ConnectIfDistributed(const RankEnv& env);

// The start-up line of a data-parallel run (`batch_size` seeds per rank per step).
std::string DescribeDataParallel(const RankEnv& env, int64_t batch_size);

// --metrics for rank r of a data-parallel run: rank 0 writes the file; every rank writes
// its own when the path contains "{rank}" (replaced by the rank). "" = none for this rank.
std::string RankMetricsPath(const std::string& path, const RankEnv& env);

// Start-up checks, before any training: every rank has the same dataset (manifest
// identity), superbatch size and parameter count (model null = -1).
Status CheckRanksMatch(ProcessGroup& group, const DataPath& data, const ModelRunner* model);

// --resume: rank 0 sends its checkpoint's bytes, the other ranks load them through a
// copy in `runtime_dir` (a seed other than o.seed is refused); then rank 0's weights go
// to every rank (also without a resume, so every rank starts from the same weights).
// Returns this rank's position (`position` unchanged on rank 0 or without a model).
Result<TrainPosition> ResumeRanks(ProcessGroup& group, const TrainOptions& o, const Checkpointer& checkpointer,
                                  ModelRunner* model, const std::string& runtime_dir, TrainPosition position);

}  // namespace seer
