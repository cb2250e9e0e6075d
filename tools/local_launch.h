// `seer train --nproc N`: a one-box launcher for data-parallel training, for machines
// without torchrun. Re-executes this very command line (from /proc/self/cmdline, less
// --nproc) N times with torchrun's variables set — RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (a free loopback port unless given), and
// OMP_NUM_THREADS = cores / N unless set (torchrun sets it too) — and waits. When a rank fails, the others are sent SIGTERM; the exit code is the first
// failing rank's (128 + signal for a killed one), 0 when every rank succeeded.
#pragma once

#include <string>

namespace seer::cli {

int LaunchLocalRanks(int nproc, const std::string& master_addr, int master_port);

}  // namespace seer::cli
