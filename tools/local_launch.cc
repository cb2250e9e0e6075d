#include "local_launch.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include <fmt/format.h>

namespace seer::cli {
namespace {

// The kernel's pick of a free loopback port (a rank 0 may in rare cases lose it to
// another program between here and its bind; its error then names the port).
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 29500;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 29500;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// This process's arguments less --nproc N / --nproc=N.
std::vector<std::string> ArgumentsWithoutNproc() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, (end == std::string::npos ? all.size() : end) - start));
    start = end == std::string::npos ? all.size() : end + 1;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  return out;
}

}  // namespace

int LaunchLocalRanks(int nproc, const std::string& master_addr, int master_port) {
  const std::string addr = master_addr.empty() ? "127.0.0.1" : master_addr;
  const int port = master_port > 0 ? master_port : FreeLoopbackPort();
  const std::vector<std::string> args = ArgumentsWithoutNproc();
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int omp_threads = static_cast<int>(std::max<long>(1, cores / nproc));
  fmt::print(stderr, "seer train: starting {} ranks on this machine (rendezvous {}:{})\n", nproc, addr, port);
  std::map<pid_t, int> ranks;  // pid -> rank
  for (int r = 0; r < nproc; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      fmt::print(stderr, "seer train: error: fork for rank {}: {}\n", r, std::strerror(errno));
      for (const auto& [p, rank] : ranks) kill(p, SIGTERM);
      break;
    }
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      setenv("MASTER_ADDR", addr.c_str(), 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      // As torchrun does: ranks sharing a machine do not each start a full-width OpenMP
      // pool (intra-op threads) unless the user chose a width.
      setenv("OMP_NUM_THREADS", std::to_string(omp_threads).c_str(), 0);
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv("/proc/self/exe", argv.data());
      fmt::print(stderr, "seer train: error: exec of rank {}: {}\n", r, std::strerror(errno));
      _exit(127);
    }
    ranks[pid] = r;
  }
  int result = ranks.size() == static_cast<size_t>(nproc) ? 0 : 1;
  while (!ranks.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = ranks.find(pid);
    if (it == ranks.end()) continue;
    const int rank = it->second;
    ranks.erase(it);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && result == 0) {
      result = code;
      fmt::print(stderr, "seer train: rank {} {} {}; stopping the other ranks\n", rank,
                 WIFEXITED(status) ? "exited with code" : "was killed by signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      for (const auto& [p, other] : ranks) kill(p, SIGTERM);
    }
  }
  return result;
}

}  // namespace seer::cli
