// The flags `seer train` and `seer predict` share, bound to the fields TrainOptions and
// PredictOptions have in common (executor/train_options.h): the dataset, the sampling
// seed and threads, and where reads and compute happen.
#pragma once

#include <CLI/CLI.hpp>

#include "flag_binding.h"

namespace seer::cli {

template <typename Options>
void AddSharedDataPathFlags(CLI::App* cmd, Options* o) {
  cmd->add_option("dataset", o->dataset_dir, "Dataset directory")->required();
  cmd->add_option("--batch-size", o->batch_size, "Seeds (nodes) per mini-batch")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed (same seed, same batches and losses on the CPU)")
      ->capture_default_str();
  cmd->add_option("--threads", o->num_threads, "Sampling threads (0 = all cores)")->capture_default_str();
  AddSetFlag(cmd, "--buffered", &o->direct_io, false, "Buffered reads instead of O_DIRECT (tmpfs, tests)");
  AddSetFlag(cmd, "--cpu", &o->use_cuda, false, "Run on the CPU even when a GPU is present");
  AddBytesOption(cmd, "--memory-budget", &o->memory_budget_bytes,
                 "Host memory for tables, caches, traces and staging");
}

}  // namespace seer::cli
