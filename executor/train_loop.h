// The executor's training run (docs/design.md "Executor and models", Ginex §3.1):
// RunTraining drives `seer train` (`seer predict` is executor/prediction.h). Torch-free
// header: the model is behind executor/model_runner.h.
//
// Two pipelines share every stage below; only the sampling granularity and the policies
// allowed differ:
//   superbatch (Seer, the default): the inspector samples S batches ahead, the planner
//       plans the feature cache for all S (exact Belady needs that lookahead).
//   conventional (PyG's DataLoader; the pyg+ and ali+pg baselines of Ginex §5): batches
//       are sampled `prefetch_batches` at a time (in parallel, like DataLoader workers),
//       one group ahead of the executor; only policies that need no future knowledge
//       (static-degree, presc, lru, none) are allowed.
// With --io mmap (DataIoMode::kMmap) indices.bin and features.bin are read from a memory
// mapping through the page cache (storage/io/mmap_reader.h) instead of O_DIRECT io_uring.
//
// The runtime directory — trace files, spilled changesets, the planner's sort runs — is a
// scratch directory .seer-train-PID-XXXXXX the run creates inside --runtime-dir or $TMPDIR
// and removes when it ends (storage/base/scratch_dir.h; the start-up sweep removes one a
// crashed run left). Its files keep their names (seer-trace-PID-*).
//
// Stages (bounded queues between them):
//   inspector thread  samples superbatch (or group) k+1 (TBB workers), streamed batch by
//                     batch into a trace file on the runtime directory ...
//   planner thread    ... while the feature-cache policy plans k (Belady changesets, CPU
//                     or GPU; static policies: nothing), reading k's ids back from its
//                     file; changesets spill to the runtime directory beyond a small budget
//   gather thread     gathers batch after batch — cache hits, misses through the reader,
//                     changeset apply, float32 rows — one batch ahead of the model, also
//                     across superbatch boundaries (it waits at an epoch boundary until
//                     the executor's evaluation, which reads the cache, is done)
//   executor (caller) trains on batch i while batch i+1 is gathered.
// With `overlap` (the default, measured faster in bench/RESULTS.md) sampling k+1 runs
// while k executes; without it sampling and executing (gathering + training) k exclude
// each other (they share the CPU, the SSD and the memory budget) as in Ginex. Planning
// always overlaps sampling.
//
// Evaluation (valid/test accuracy) samples the split with the same sampler (fixed epoch
// 0, no shuffle) and gathers through the same cache read-only. The best-validation
// weights are kept; the final test accuracy is the best model's.
//
// Errors from any stage come back as the Status (with file and offset) of the first
// failure; every thread is joined before returning.
//
// The pieces, each with its own contract (RunTraining composes them in this order):
//   executor/data_parallel.h            the process group of a data-parallel run, its checks
//   executor/checkpointer.h             resume checks, checkpoint position and files
//   executor/data_path.h                dataset, readers, pilot batches, memory split, caches
//   executor/epoch_reporter.h           progress line, epoch summaries, --metrics JSON lines
//   executor/label_table.h              labels of the train/valid/test nodes
//   executor/superbatch_cache_planner.h the feature-cache policy (incl. PreSC pre-sampling)
//   executor/device_feature_tier.h      --device-cache: the device tier around the stages
//   executor/superbatch_pipeline.h      the inspector, planner and gather threads
//   executor/training_executor.h        the executor thread: train, checkpoint, evaluate, report
//   executor/evaluation.h               valid/test accuracy through the shared cache
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/policies.h"
#include "executor/epoch_reporter.h"
#include "executor/feature_gather.h"
#include "executor/link_metrics.h"
#include "executor/memory_budget.h"
#include "executor/model_runner.h"
#include "executor/train_options.h"
#include "inspector/trace.h"
#include "storage/base/status.h"
#include "storage/io/block_reader.h"

namespace seer {

struct TrainSummary {
  MemoryBudgetSplit split;
  std::vector<EpochReport> epochs;   // epochs run by this invocation
  double best_valid_accuracy = -1;
  int64_t best_epoch = -1;
  double test_accuracy = -1;         // of the best-validation model (or the last one); link: its MRR
  LinkMetrics test_link;             // link prediction: the test ranking metrics
  int64_t peak_rss_bytes = -1;
  double seconds = 0;
  bool stopped_early = false;          // --stop-after, or a stop request
  // A stop request (TrainOptions::stop_signal): its signal number, else 0. Then
  // `checkpoint_path` names the checkpoint written at final_position ("" = none: no
  // --checkpoint-dir, --no-train, not rank 0, or stopped before training started:
  // `training_started` false).
  int interrupted_by = 0;
  std::string checkpoint_path;
  bool training_started = false;
  int64_t batches_per_epoch = 0;       // this rank's
  TrainPosition final_position;
  int rank = 0, world_size = 1;      // data-parallel runs: this process's rank (rank 0 reports)
};

Result<TrainSummary> RunTraining(const TrainOptions& options);

}  // namespace seer
