// The SIGINT/SIGTERM stop flag; see interrupt.h for the contract.
#include "executor/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace seer {
namespace {

std::atomic<int> g_stop{0};
std::atomic<const char*> g_notice{nullptr};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag must be async-signal-safe");
static_assert(std::atomic<const char*>::is_always_lock_free, "the notice must be async-signal-safe");

// Only async-signal-safe calls: atomics, write, signal, raise.
void OnStopSignal(int sig) {
  const int saved_errno = errno;
  int expected = 0;
  if (!g_stop.compare_exchange_strong(expected, sig)) {
    // The second one: the default action, now (killed by `sig`).
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    errno = saved_errno;
    return;
  }
  if (const char* notice = g_notice.load()) {
    ssize_t ignored = ::write(STDERR_FILENO, notice, std::strlen(notice));
    (void)ignored;
  }
  errno = saved_errno;
}

}  // namespace

std::atomic<int>& StopSignalFlag() { return g_stop; }

void InstallStopSignalHandlers(const char* notice) {
  g_notice.store(notice);
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  // While one runs, the other waits: the first signal is recorded before the second
  // sees the flag.
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

void ClearStopSignal() { g_stop.store(0); }

std::string StopSignalName(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signal);
}

}  // namespace seer
