// TrainPosition: where a training run stands — the epoch and superbatch to go on from,
// the step count, the seed, the best validation so far, the run record a resume must
// match and the current epoch's partial sums. Stored in checkpoints (JSON:
// executor/checkpoint_file.h); ModelRunner saves and loads it with the weights, the
// Checkpointer and the TrainingExecutor advance it. Torch-free, plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace seer {

// `next_superbatch` is the first superbatch of `epoch` that has not been finished yet;
// `next_batch` of its batches are already trained (0 at a superbatch boundary; > 0 after
// a stop or a timed checkpoint inside a superbatch: a resume samples that superbatch
// again and trains from batch `next_batch` on).
struct TrainPosition {
  int64_t epoch = 0;
  int64_t next_superbatch = 0;
  int64_t next_batch = 0;
  int64_t global_step = 0;
  uint64_t seed = 0;
  double best_valid_accuracy = -1;
  int64_t best_epoch = -1;
  // The flags and dataset that shape the batches and plans (name -> value, the
  // checkpoint's "run" record): a resume with any other value is refused (Checkpointer).
  std::map<std::string, std::string> run;
  // The settings the run was started with (TrainOptions::settings: flag -> text), so a
  // resume needs no flags but --checkpoint-dir; not compared here (the CLI compares them).
  std::map<std::string, std::string> settings;
  // `epoch`'s training sums over its batches before (next_superbatch, next_batch), so a resumed
  // epoch reports loss and accuracy over all its batches.
  double epoch_loss_sum = 0;
  int64_t epoch_loss_batches = 0, epoch_correct = 0, epoch_labeled = 0, epoch_batches = 0, epoch_seeds = 0;
};

}  // namespace seer
