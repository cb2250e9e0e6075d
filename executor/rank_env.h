// RankEnv: which rank of how many this process is in a data-parallel run, and where the
// ranks meet. Torch-free, no I/O besides getenv.
//
// Sources, first match wins per field:
//   1. flags (DistOptions: --rank, --world-size, --local-rank, --master-addr, --master-port)
//   2. torchrun / torch.distributed's names: RANK, WORLD_SIZE, LOCAL_RANK,
//      LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   3. Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE), MPICH/Intel MPI
//      (PMI_RANK, PMI_SIZE), Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID); these set
//      no address: MASTER_ADDR/--master-addr is still needed across machines (default
//      127.0.0.1, one box).
// World size 1 (nothing set) is the plain single-process run: no process group is made.
// Gloo's own variables keep their meaning: GLOO_SOCKET_IFNAME picks the interface ranks
// bind (ProcessGroup::Connect); otherwise --dist-bind / SEER_DIST_BIND, else MASTER_ADDR
// when it is a loopback address, else the host name's address.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "storage/base/status.h"

namespace seer {

// What the CLI binds; -1 / "" = from the environment.
struct DistOptions {
  int rank = -1;
  int world_size = -1;
  int local_rank = -1;
  std::string master_addr;
  int master_port = -1;
  std::string bind_addr;       // the address this rank's Gloo device binds ("" = see above)
  double timeout_seconds = 300;  // rendezvous and every collective (--dist-timeout)
};

struct RankEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;     // torch.distributed's default
  std::string bind_addr;       // "" = Connect's default
  std::string bind_interface;  // GLOO_SOCKET_IFNAME
  double timeout_seconds = 300;
  std::string source = "single process";  // "flags", "torchrun environment", "Open MPI", ...
  bool distributed() const { return world_size > 1; }
};

// Reads the environment through `getenv_fn` (tests pass a map); errors name the variable
// or flag and its value (not a number, rank outside [0, world size), port outside 1..65535).
Result<RankEnv> ResolveRankEnv(const DistOptions& flags,
                               const std::function<const char*(const char*)>& getenv_fn);
Result<RankEnv> ResolveRankEnv(const DistOptions& flags);  // the process environment

}  // namespace seer
