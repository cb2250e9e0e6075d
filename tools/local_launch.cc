#include "local_launch.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli_main.h"

extern char** environ;

namespace seer::cli {
namespace {

using Clock = std::chrono::steady_clock;

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

// This process's arguments (/proc/self/cmdline); an argv[0] of "seer" (tools/main.cc
// sets it before it execs seer-train) becomes the `seer` beside this executable.
std::vector<std::string> ThisCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, (end == std::string::npos ? all.size() : end) - start));
    start = end == std::string::npos ? all.size() : end + 1;
  }
  if (!args.empty() && args[0] == "seer") {
    const std::string beside = ExecutableDir() + "seer";
    if (!ExecutableDir().empty() && ::access(beside.c_str(), X_OK) == 0) args[0] = beside;
  }
  return args;
}

// `args` less --nproc N / --nproc=N.
std::vector<std::string> WithoutNproc(const std::vector<std::string>& args) {
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

// One word for sh: as is when it holds only safe characters, else in single quotes.
std::string ShellQuote(const std::string& word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::strchr("_@%+=:,./-", c) != nullptr;
  });
  if (safe) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string JoinQuoted(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + ShellQuote(w);
  return out;
}

// The launcher's signals: the first one's number and how many came (async-signal-safe:
// lock-free atomics only).
std::atomic<int> g_first_signal{0};
std::atomic<int> g_signal_count{0};

void OnLauncherSignal(int sig) {
  int none = 0;
  g_first_signal.compare_exchange_strong(none, sig);
  g_signal_count.fetch_add(1);
}

void InstallLauncherHandlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnLauncherSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &action, nullptr);
}

std::string SignalName(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGSTOP: return "SIGSTOP";
    default: return fmt::format("signal {}", sig);
  }
}

// Rank r's environment: this process's, with torchrun's variables and
// SEER_LAUNCH_COMMAND set (OMP_NUM_THREADS only when unset).
std::vector<std::string> RankEnvironment(int r, int nproc, const std::string& addr, int port, int omp_threads,
                                         const std::string& launch_command) {
  std::vector<std::pair<std::string, std::string>> set = {
      {"RANK", std::to_string(r)},          {"WORLD_SIZE", std::to_string(nproc)},
      {"LOCAL_RANK", std::to_string(r)},    {"LOCAL_WORLD_SIZE", std::to_string(nproc)},
      {"MASTER_ADDR", addr},                {"MASTER_PORT", std::to_string(port)},
      {"SEER_LAUNCH_COMMAND", launch_command}};
  // As torchrun does: ranks sharing a machine do not each start a full-width OpenMP pool
  // (intra-op threads) unless the user chose a width.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) set.emplace_back("OMP_NUM_THREADS", std::to_string(omp_threads));
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (std::none_of(set.begin(), set.end(), [&](const auto& kv) { return kv.first == name; })) env.push_back(entry);
  }
  for (const auto& [name, value] : set) env.push_back(name + "=" + value);
  return env;
}

struct RankProcess {
  pid_t pid = -1;
  int rank = 0;
  bool alive = true;
  bool stopped = false;
  Clock::time_point stopped_since;
};

// Forks rank r: parent-death signal, own process group, then exec. Returns the pid, or
// -1 (errno) when fork failed.
pid_t StartRank(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  // Everything the child touches is built before fork (only async-signal-safe calls after).
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t launcher = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The rank never outlives the launcher: SIGTERM when it dies (checked once more in
  // case it died before the call).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != launcher) ::_exit(128 + SIGTERM);
  // Not in the terminal's foreground group: a Ctrl-C reaches the launcher, which forwards it once.
  ::setpgid(0, 0);
  ::execve("/proc/self/exe", argv.data(), envp.data());
  static const char kExecFailed[] = "seer: error: exec of a rank failed\n";
  ssize_t ignored = ::write(STDERR_FILENO, kExecFailed, sizeof kExecFailed - 1);
  (void)ignored;
  ::_exit(127);
}

}  // namespace

std::string ResumeCommandLine() {
  std::string command;
  std::vector<std::string> words;
  if (const char* launched = std::getenv("SEER_LAUNCH_COMMAND"); launched != nullptr && *launched != '\0') {
    command = launched;
  } else {
    words = ThisCommandLine();
    command = JoinQuoted(words);
  }
  // "--resume" as its own word in the command (quoted words never equal it).
  const std::string padded = " " + command + " ";
  if (padded.find(" --resume ") == std::string::npos && padded.find(" --resume=") == std::string::npos) {
    command += " --resume";
  }
  return command;
}

int LaunchLocalRanks(int nproc, const std::string& master_addr, int master_port, double dist_timeout_seconds,
                     double grace_seconds) {
  const std::string addr = master_addr.empty() ? "127.0.0.1" : master_addr;
  const int port = master_port > 0 ? master_port : FreeLoopbackPort();
  const std::vector<std::string> all = ThisCommandLine();
  const std::vector<std::string> args = WithoutNproc(all);
  const std::string launch_command = JoinQuoted(all);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int omp_threads = static_cast<int>(std::max<long>(1, cores / nproc));
  const std::string who = "seer launcher";  // for train and predict alike
  InstallLauncherHandlers();

  std::vector<RankProcess> ranks;
  int result = 0;
  for (int r = 0; r < nproc; ++r) {
    const pid_t pid = StartRank(args, RankEnvironment(r, nproc, addr, port, omp_threads, launch_command));
    if (pid < 0) {
      fmt::print(stderr, "{}: error: fork for rank {}: {}\n", who, r, std::strerror(errno));
      for (const RankProcess& p : ranks) kill(p.pid, SIGKILL);
      result = 1;
      break;
    }
    RankProcess p;
    p.pid = pid;
    p.rank = r;
    ranks.push_back(p);
  }
  if (result == 0) {
    std::string pids;
    for (const RankProcess& p : ranks) pids += fmt::format("{}{}", pids.empty() ? "" : ", ", p.pid);
    fmt::print(stderr, "{}: starting {} ranks on this machine (rendezvous {}:{}; pids {})\n", who, nproc, addr, port,
               pids);
  }

  int forwarded = 0;           // the signal passed on to the ranks; 0 = none
  int signals_seen = 0;
  bool ending = result != 0;   // a rank failed or was stopped too long: the others are told to stop
  std::optional<Clock::time_point> kill_at;
  // Tells every live rank `sig` (a stopped rank is continued, so it can act on it).
  auto signal_ranks = [&](int sig) {
    for (const RankProcess& p : ranks) {
      if (!p.alive) continue;
      kill(p.pid, sig);
      if (p.stopped && sig != SIGKILL) kill(p.pid, SIGCONT);
    }
  };
  auto stopped_ranks = [&] {
    std::string out;
    for (const RankProcess& p : ranks) {
      if (p.alive && p.stopped) {
        out += fmt::format("{}rank {} is stopped (SIGSTOP) since {:.0f} s", out.empty() ? "" : ", ", p.rank,
                           std::chrono::duration<double>(Clock::now() - p.stopped_since).count());
      }
    }
    return out;
  };
  auto begin_ending = [&](const std::string& why) {
    const std::string stopped = stopped_ranks();
    fmt::print(stderr, "{}: {}{}; stopping the other ranks\n", who, why, stopped.empty() ? "" : " (" + stopped + ")");
    ending = true;
    signal_ranks(SIGTERM);
    kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_seconds));
  };

  while (std::any_of(ranks.begin(), ranks.end(), [](const RankProcess& p) { return p.alive; })) {
    const auto now = Clock::now();
    for (RankProcess& p : ranks) {
      if (!p.alive) continue;
      int status = 0;
      const pid_t got = waitpid(p.pid, &status, WNOHANG | WUNTRACED | WCONTINUED);
      if (got < 0 && errno != EINTR) {
        p.alive = false;  // not our child any more (cannot happen); nothing to wait for
        continue;
      }
      if (got != p.pid) continue;
      if (WIFSTOPPED(status)) {
        p.stopped = true;
        p.stopped_since = now;
        continue;
      }
      if (WIFCONTINUED(status)) {
        p.stopped = false;
        continue;
      }
      p.alive = false;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (code == 0 || ending || forwarded != 0) continue;
      result = code;
      begin_ending(WIFEXITED(status) ? fmt::format("rank {} exited with code {}", p.rank, code)
                                     : fmt::format("rank {} was killed by {}", p.rank, SignalName(WTERMSIG(status))));
    }
    // Signals to the launcher: the first is forwarded, a second kills the ranks.
    const int count = g_signal_count.load();
    if (count > signals_seen) {
      if (forwarded == 0) {
        forwarded = g_first_signal.load();
        fmt::print(stderr, "{}: {}: passed on to the ranks (training stops at the next batch boundary; once more to "
                   "kill the ranks at once)\n",
                   who, SignalName(forwarded));
        signal_ranks(forwarded);
        if (!kill_at) {
          kill_at = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_seconds));
        }
        if (count > signals_seen + 1) signal_ranks(SIGKILL);
      } else {
        fmt::print(stderr, "{}: {} again: killing the ranks\n", who, SignalName(g_first_signal.load()));
        signal_ranks(SIGKILL);
      }
      signals_seen = count;
    }
    // A rank stopped longer than the distributed timeout: the others cannot go on.
    if (!ending && forwarded == 0) {
      for (RankProcess& p : ranks) {
        if (!p.alive || !p.stopped) continue;
        const double stopped_for = std::chrono::duration<double>(now - p.stopped_since).count();
        if (stopped_for < dist_timeout_seconds) continue;
        result = 1;
        kill(p.pid, SIGKILL);
        p.stopped = false;  // named here, not again in the note on stopped ranks
        begin_ending(fmt::format("rank {} has been stopped (SIGSTOP) for {:.0f} s, longer than --dist-timeout {:g}: "
                                 "killed it",
                                 p.rank, stopped_for, dist_timeout_seconds));
        break;
      }
    }
    if (kill_at && now >= *kill_at) {
      for (const RankProcess& p : ranks) {
        if (!p.alive) continue;
        fmt::print(stderr, "{}: rank {} (pid {}) still running {:g} s after it was told to stop: killed\n", who,
                   p.rank, p.pid, grace_seconds);
        kill(p.pid, SIGKILL);
      }
      kill_at.reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (forwarded != 0) return 128 + forwarded;
  return result;
}

}  // namespace seer::cli
