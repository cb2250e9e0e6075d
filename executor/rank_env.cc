#include "executor/rank_env.h"

#include <string_view>

#include <cstdlib>
#include <optional>

#include <fmt/format.h>

namespace seer {
namespace {

// One integer variable: absent -> nullopt; present but not an integer -> error naming it.
Result<std::optional<int>> IntVariable(const std::function<const char*(const char*)>& getenv_fn, const char* name) {
  const char* text = getenv_fn(name);
  if (text == nullptr || *text == '\0') return std::optional<int>();
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > (1L << 30)) {
    return InvalidArgument(fmt::format("environment variable {}='{}' is not a non-negative integer", name, text));
  }
  return std::optional<int>(static_cast<int>(value));
}

// A launcher's four names (rank, size, local rank, local size; nullptr = not set by it).
struct LauncherNames {
  const char* source;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
};
constexpr LauncherNames kLaunchers[] = {
    {"torchrun environment", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"Open MPI environment", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"PMI environment", "PMI_RANK", "PMI_SIZE", nullptr, nullptr},
    {"Slurm environment", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr},
};

}  // namespace

Result<RankEnv> ResolveRankEnv(const DistOptions& flags, const std::function<const char*(const char*)>& getenv_fn) {
  RankEnv env;
  env.timeout_seconds = flags.timeout_seconds;
  if (!(flags.timeout_seconds > 0)) return InvalidArgument("--dist-timeout must be > 0 seconds");
  // The first launcher whose rank and size are both set.
  for (const LauncherNames& l : kLaunchers) {
    SEER_ASSIGN_OR_RETURN(std::optional<int> rank, IntVariable(getenv_fn, l.rank));
    SEER_ASSIGN_OR_RETURN(std::optional<int> size, IntVariable(getenv_fn, l.size));
    if (!rank || !size) continue;
    env.rank = *rank;
    env.world_size = *size;
    env.local_rank = env.rank;
    env.local_world_size = env.world_size;
    if (l.local_rank != nullptr) {
      SEER_ASSIGN_OR_RETURN(std::optional<int> local, IntVariable(getenv_fn, l.local_rank));
      if (local) env.local_rank = *local;
    }
    if (l.local_size != nullptr) {
      SEER_ASSIGN_OR_RETURN(std::optional<int> local_size, IntVariable(getenv_fn, l.local_size));
      if (local_size) env.local_world_size = *local_size;
    }
    env.source = l.source;
    // `seer train/predict --nproc N` sets torchrun's variables for its ranks (tools/local_launch.h).
    if (l.rank == std::string_view("RANK") && getenv_fn("SEER_LAUNCH_COMMAND") != nullptr) env.source = "started by --nproc";
    break;
  }
  if (const char* addr = getenv_fn("MASTER_ADDR"); addr != nullptr && *addr != '\0') env.master_addr = addr;
  SEER_ASSIGN_OR_RETURN(std::optional<int> port, IntVariable(getenv_fn, "MASTER_PORT"));
  if (port) env.master_port = *port;
  if (const char* bind = getenv_fn("SEER_DIST_BIND"); bind != nullptr && *bind != '\0') env.bind_addr = bind;
  if (const char* ifname = getenv_fn("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0') {
    env.bind_interface = ifname;
  }
  // Flags win.
  bool from_flags = false;
  if (flags.world_size >= 0) {
    env.world_size = flags.world_size;
    from_flags = true;
  }
  if (flags.rank >= 0) {
    env.rank = flags.rank;
    from_flags = true;
  }
  if (from_flags) {
    env.source = "flags";
    if (flags.local_rank < 0 && env.local_world_size == 1) {
      env.local_rank = env.rank;
      env.local_world_size = env.world_size;
    }
  }
  if (flags.local_rank >= 0) env.local_rank = flags.local_rank;
  if (!flags.master_addr.empty()) env.master_addr = flags.master_addr;
  if (flags.master_port >= 0) env.master_port = flags.master_port;
  if (!flags.bind_addr.empty()) env.bind_addr = flags.bind_addr;

  if (env.world_size < 1) return InvalidArgument(fmt::format("world size {} ({}) must be >= 1", env.world_size, env.source));
  if (env.rank < 0 || env.rank >= env.world_size) {
    return InvalidArgument(
        fmt::format("rank {} is outside [0, world size {}) ({})", env.rank, env.world_size, env.source));
  }
  if (env.master_port < 1 || env.master_port > 65535) {
    return InvalidArgument(fmt::format("master port {} is outside 1..65535", env.master_port));
  }
  return env;
}

Result<RankEnv> ResolveRankEnv(const DistOptions& flags) {
  return ResolveRankEnv(flags, [](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace seer
