// `seer train --nproc N`: a one-box launcher for data-parallel training, for machines
// without torchrun. Re-executes this very command line (from /proc/self/cmdline, less
// --nproc) N times with torchrun's variables set — RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (a free loopback port unless given), and
// OMP_NUM_THREADS = cores / N unless set (torchrun sets it too) — plus
// SEER_LAUNCH_COMMAND (this command line, shell-quoted, for the ranks' resume line), and
// waits. Never a wait without an end:
//   - each rank gets PR_SET_PDEATHSIG = SIGTERM right after fork (and exits at once if
//     the launcher is already gone), so no rank outlives the launcher, even a SIGKILLed
//     one; each rank runs in its own process group, so a terminal's Ctrl-C reaches the
//     launcher alone, which forwards it once;
//   - SIGINT/SIGTERM/SIGHUP to the launcher are forwarded to every rank (a stopped rank
//     is continued), which stop at the next batch boundary and checkpoint; ranks still
//     alive `grace_seconds` later are killed (SIGKILL); a second signal kills them at once.
//     The exit code is then 128 + the first signal;
//   - a rank that exits with an error or is killed ends the run: the launcher names it,
//     sends the others SIGTERM (and SIGCONT), and kills what is left after the grace
//     period; the exit code is that rank's (128 + signal for a killed one);
//   - a rank stopped (SIGSTOP) for longer than the distributed timeout ends the run the
//     same way, named as stopped (the other ranks' collectives time out as well).
// Its lines start "seer launcher: "; the start line names every rank's pid. 0 when
// every rank succeeded.
#pragma once

#include <string>

namespace seer::cli {

int LaunchLocalRanks(int nproc, const std::string& master_addr, int master_port, double dist_timeout_seconds = 300,
                     double grace_seconds = 10);

// The command line that continues this run: the launcher's (SEER_LAUNCH_COMMAND, for a
// rank it started) or this process's (/proc/self/cmdline; an argv[0] of "seer", as
// tools/main.cc sets it, becomes the `seer` beside this executable), each word
// shell-quoted, with --resume appended unless present.
std::string ResumeCommandLine();

}  // namespace seer::cli
