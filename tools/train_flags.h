// The flags `seer train` and `seer predict` share, bound to the fields TrainOptions and
// PredictOptions have in common (executor/train_options.h): the dataset, the sampling
// seed and threads, and where reads and compute happen.
#pragma once

#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "flag_binding.h"
#include "local_launch.h"

namespace seer::cli {

// `dataset_required` false: the command checks it itself (train --resume takes it from
// the checkpoint).
template <typename Options>
void AddSharedDataPathFlags(CLI::App* cmd, Options* o, bool dataset_required = true) {
  cmd->add_option("dataset", o->dataset_dir, "Dataset directory")->required(dataset_required);
  cmd->add_option("--batch-size", o->batch_size, "Seeds (nodes) per mini-batch")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed (same seed, same batches and losses on the CPU)")
      ->capture_default_str();
  cmd->add_option("--threads", o->num_threads, "Sampling threads (0 = all cores)")->capture_default_str();
  AddSetFlag(cmd, "--buffered", &o->direct_io, false, "Buffered reads instead of O_DIRECT (tmpfs, tests)");
  AddSetFlag(cmd, "--cpu", &o->use_cuda, false, "Run on the CPU even when a GPU is present");
  AddBytesOption(cmd, "--memory-budget", &o->memory_budget_bytes,
                 "Host memory for the whole process: the runtime (libtorch, the CUDA context; measured at start, "
                 "see --budget-scope), tables, caches, traces, staging and the model");
  cmd->add_option_function<std::string>(
         "--budget-scope",
         [o](const std::string& scope) { o->runtime_bytes = scope == "data" ? 0 : -1; },
         "What --memory-budget covers: process (everything, the runtime measured at start and paid first) or "
         "data (Seer's data path and model only, on top of the runtime)")
      ->check(CLI::IsMember({"process", "data"}))
      ->default_str("process");
}

// Data-parallel flags (executor/rank_env.h), for `train` and `predict`; unset ones come
// from the launcher's environment (torchrun, MPI, Slurm). --nproc starts the ranks itself
// (tools/local_launch.h).
template <typename Options>
void AddDistributedFlags(CLI::App* cmd, Options* o, int* nproc) {
  cmd->add_option("--nproc", *nproc,
                  "Data-parallel: start N ranks on this machine (each takes --batch-size seeds per step and "
                  "--memory-budget; Gloo over loopback); under torchrun or mpirun leave it at 1")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            int n = 0;
            return CLI::detail::lexical_cast(text, n) && n >= 1 ? "" : "'" + text + "': expected a number of ranks >= 1";
          },
          "N>=1"))
      ->capture_default_str();
  cmd->add_option("--rank", o->dist.rank, "This process's rank (-1 = $RANK, $OMPI_COMM_WORLD_RANK, $SLURM_PROCID, or 0)")
      ->capture_default_str();
  cmd->add_option("--world-size", o->dist.world_size, "Number of ranks (-1 = $WORLD_SIZE ..., or 1)")
      ->capture_default_str();
  cmd->add_option("--local-rank", o->dist.local_rank, "Rank on this machine (-1 = $LOCAL_RANK ...)")
      ->capture_default_str();
  cmd->add_option("--master-addr", o->dist.master_addr, "Rendezvous address, rank 0's host (\"\" = $MASTER_ADDR or 127.0.0.1)")
      ->capture_default_str();
  cmd->add_option("--master-port", o->dist.master_port, "Rendezvous port (-1 = $MASTER_PORT or 29500)")
      ->capture_default_str();
  cmd->add_option("--dist-bind", o->dist.bind_addr,
                  "Address this rank's collectives bind (\"\" = $SEER_DIST_BIND, $GLOO_SOCKET_IFNAME's interface, the "
                  "loopback when the master is local, else the host name's address)")
      ->capture_default_str();
  cmd->add_option("--dist-timeout", o->dist.timeout_seconds,
                  "Seconds a rank waits for the others (rendezvous and every collective) before failing, naming the "
                  "ranks that did not arrive")
      ->capture_default_str();
}

// --nproc N > 1: starts the N local ranks and returns their exit code; -1 when this
// process is to run as it is (nproc 1, or a rank started by a launcher).
template <typename Options>
int LaunchRanksIfAsked(const char* command, int nproc, const Options& o) {
  if (nproc <= 1) return -1;
  if (o.dist.rank >= 0 || o.dist.world_size >= 0 || std::getenv("WORLD_SIZE") != nullptr) {
    return ReportError(command, "--nproc starts the ranks itself: drop --rank/--world-size, or run without "
                                "--nproc under torchrun (WORLD_SIZE is set)");
  }
  return LaunchLocalRanks(nproc, o.dist.master_addr, o.dist.master_port, o.dist.timeout_seconds);
}

}  // namespace seer::cli
