// SIGINT/SIGTERM to `seer train` and to its --nproc launcher, through the real binaries
// (env SEER_BINARY): a Ctrl-C'd run checkpoints where it stands, exits 130 and prints
// the command that resumes it, which then finishes with the uninterrupted run's test
// accuracy; without --checkpoint-dir it says nothing was saved (143 for SIGTERM); the
// launcher forwards SIGTERM and every rank ends, a SIGKILLed launcher takes its ranks
// along (parent-death signal), and a rank stopped with SIGSTOP ends the run within the
// distributed timeout, named, instead of a hang.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "executor/process_group.h"
#include "support/test_support.h"

namespace {

using seer::testing::ReadFileBytes;
using Clock = std::chrono::steady_clock;

// "key value" lines printed on stdout by seer train ("test accuracy 0.93"): the value text.
std::string ValueText(const std::string& output, const std::string& key) {
  const size_t pos = output.find(key + " ");
  if (pos == std::string::npos) return "";
  const size_t start = pos + key.size() + 1;
  return output.substr(start, output.find('\n', start) - start);
}

// A process that is gone (reaped, or a zombie nobody reaps).
bool Gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

class InterruptCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!seer::testing::HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
    tmp_ = seer::testing::MakeTempDir("interrupt_cli");
    ds_ = tmp_ + "/ds";
    auto gen = seer::testing::RunSeer("gen --nodes 20000 --avg-degree 8 --out " + ds_ +
                                      " --seed 3 --quiet --train-fraction 0.5 --valid-fraction 0.05 "
                                      "--test-fraction 0.05");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  // Children a test did not reap (a failed assertion): killed and reaped.
  void TearDown() override {
    for (pid_t pid : started_) {
      ::kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }

  // Deterministic on the CPU: --dropout 0, one sampling thread, a fixed seed. Batches of
  // 20 of ~10k training seeds: ~500 steps per epoch, progress on every batch.
  std::string Train(int epochs) const {
    return "train " + ds_ + " --hidden 64 --fanouts 10,10 --batch-size 20 --epochs " + std::to_string(epochs) +
           " --dropout 0 --cpu --buffered --threads 1 --memory-budget 128M --budget-scope data --seed 5 "
           "--progress-interval 0";
  }

  // `$SEER_BINARY args` in the background (its own $TMPDIR), stdout and stderr to files.
  pid_t Start(const std::string& args, const std::string& name) {
    const std::string command = "TMPDIR='" + seer::testing::MakeTempDir("interrupt_tmp") + "' exec \"" +
                                std::getenv("SEER_BINARY") + "\" " + args + " > " + tmp_ + "/" + name + ".out 2> " +
                                tmp_ + "/" + name + ".err";
    const pid_t pid = seer::testing::StartShell(command);
    started_.push_back(pid);
    return pid;
  }
  std::string Err(const std::string& name) const { return ReadFileBytes(tmp_ + "/" + name + ".err"); }

  // Waits until `name`'s stderr contains `text` (false after `seconds`).
  bool WaitForText(const std::string& name, const std::string& text, double seconds) const {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < deadline) {
      if (Err(name).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Waits up to `seconds` for `pid` (started by Start); its exit code, 128 + signal, or
  // -1 (still running: then killed).
  int WaitFor(pid_t pid, double seconds) {
    started_.erase(std::remove(started_.begin(), started_.end(), pid), started_.end());
    return seer::testing::WaitForChild(pid, seconds);
  }

  // The rank pids the launcher names in its start line ("...; pids 12, 13)").
  std::vector<pid_t> RankPids(const std::string& name) const {
    const std::string err = Err(name);
    std::vector<pid_t> pids;
    const size_t at = err.find("; pids ");
    if (at == std::string::npos) return pids;
    std::istringstream in(err.substr(at + 7, err.find(')', at) - at - 7));
    for (std::string word; std::getline(in, word, ',');) pids.push_back(std::stoi(word));
    return pids;
  }

  // True when every pid is gone within `seconds`.
  static bool AllGone(const std::vector<pid_t>& pids, double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < deadline) {
      bool gone = true;
      for (pid_t p : pids) gone = gone && Gone(p);
      if (gone) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  bool HaveGloo() const { return seer::ProcessGroup::Available(); }

  // Train(200) with `--nproc 2` and `flags`, started as "launch" and waited for until its
  // first epoch runs: the launcher's pid and its two ranks' pids.
  void StartLauncher(const std::string& flags, pid_t* launcher, std::vector<pid_t>* ranks) {
    *launcher = Start(Train(200) + " --nproc 2" + flags, "launch");
    ASSERT_TRUE(WaitForText("launch", "epoch 1/200 sb", 120)) << Err("launch");
    *ranks = RankPids("launch");
    ASSERT_EQ(ranks->size(), 2u) << Err("launch");
  }

  std::string tmp_, ds_;
  std::vector<pid_t> started_;
};

// Ctrl-C mid-epoch: exit 130, the checkpoint and the resume command on stderr; that
// command finishes the run with the uninterrupted run's accuracy, to the digit.
TEST_F(InterruptCliTest, SigintCheckpointsAndThePrintedCommandResumesTheRun) {
  const std::string full_ckpt = tmp_ + "/full_ck", ckpt = tmp_ + "/ck";
  auto full = seer::testing::RunSeer(Train(3) + " --checkpoint-dir " + full_ckpt + " --quiet");
  ASSERT_EQ(full.exit_code, 0) << full.output;
  const std::string accuracy = ValueText(full.output, "test accuracy");
  ASSERT_FALSE(accuracy.empty()) << full.output;

  const pid_t pid = Start(Train(3) + " --checkpoint-dir " + ckpt, "run");
  ASSERT_TRUE(WaitForText("run", "epoch 1/3 sb", 120)) << Err("run");
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_EQ(WaitFor(pid, 60), 130) << Err("run");
  const std::string err = Err("run");
  EXPECT_NE(err.find("stopped by SIGINT in epoch "), std::string::npos) << err;
  EXPECT_NE(err.find("checkpoint saved to " + ckpt + "/checkpoint.ckpt"), std::string::npos) << err;
  const size_t at = err.find("resume with: ");
  ASSERT_NE(at, std::string::npos) << err;
  const std::string resume = err.substr(at + 13, err.find('\n', at) - at - 13);
  EXPECT_NE(resume.find(" --resume"), std::string::npos) << resume;
  EXPECT_EQ(ReadFileBytes(tmp_ + "/run.out").find("test accuracy"), std::string::npos) << "no result of a stopped run";

  auto resumed = seer::testing::RunShell(resume);
  ASSERT_EQ(resumed.exit_code, 0) << resume << "\n" << resumed.output;
  EXPECT_NE(resumed.output.find("resuming from " + ckpt + "/checkpoint.ckpt at epoch "), std::string::npos)
      << resumed.output;
  EXPECT_EQ(ValueText(resumed.output, "test accuracy"), accuracy) << resumed.output;
}

TEST_F(InterruptCliTest, SigtermWithoutCheckpointDirSaysNothingWasSaved) {
  const pid_t pid = Start(Train(3), "run");
  ASSERT_TRUE(WaitForText("run", "epoch 1/3 sb", 120)) << Err("run");
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitFor(pid, 60), 143) << Err("run");
  const std::string err = Err("run");
  EXPECT_NE(err.find("stopped by SIGTERM in epoch "), std::string::npos) << err;
  EXPECT_NE(err.find("nothing saved (no --checkpoint-dir)"), std::string::npos) << err;
  EXPECT_EQ(err.find("resume with"), std::string::npos) << err;
}

// --checkpoint-every takes a duration (or N superbatches); anything else is refused.
TEST_F(InterruptCliTest, CheckpointEveryTakesADuration) {
  auto timed = seer::testing::RunSeer(Train(1) + " --quiet --checkpoint-dir " + tmp_ + "/ck --checkpoint-every 1s");
  EXPECT_EQ(timed.exit_code, 0) << timed.output;
  seer::testing::ExpectOneLineError(seer::testing::RunSeer(Train(1) + " --checkpoint-every 10x"), "train",
                                    "--checkpoint-every '10x': expected a number of superbatches or a duration");
  auto help = seer::testing::RunSeer("train --help");
  EXPECT_NE(help.output.find("Default with --checkpoint-dir: 10m"), std::string::npos) << help.output;
}

// SIGTERM to the launcher: forwarded, every rank stops (checkpointing) and is gone within
// seconds; the resume command is the launcher's, --nproc included.
TEST_F(InterruptCliTest, NprocSigtermToTheLauncherEndsEveryRank) {
  if (!HaveGloo()) GTEST_SKIP() << "built without Gloo: data-parallel runs are refused";
  pid_t pid = -1;
  std::vector<pid_t> ranks;
  ASSERT_NO_FATAL_FAILURE(StartLauncher(" --checkpoint-dir " + tmp_ + "/ck", &pid, &ranks));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitFor(pid, 20), 143) << Err("launch");
  EXPECT_TRUE(AllGone(ranks, 5)) << Err("launch");
  const std::string err = Err("launch");
  EXPECT_NE(err.find("stopped by SIGTERM"), std::string::npos) << err;
  EXPECT_NE(err.find("--nproc 2 --checkpoint-dir " + tmp_ + "/ck --resume"), std::string::npos) << err;
}

// A launcher killed with SIGKILL cannot forward anything: the ranks' parent-death signal
// (SIGTERM) stops them.
TEST_F(InterruptCliTest, NprocRanksDoNotOutliveAKilledLauncher) {
  if (!HaveGloo()) GTEST_SKIP() << "built without Gloo: data-parallel runs are refused";
  pid_t pid = -1;
  std::vector<pid_t> ranks;
  ASSERT_NO_FATAL_FAILURE(StartLauncher("", &pid, &ranks));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_EQ(WaitFor(pid, 10), 128 + SIGKILL);
  EXPECT_TRUE(AllGone(ranks, 20)) << "ranks outlived their launcher\n" << Err("launch");
}

// kill -STOP of rank 1: the launcher ends the run within the distributed timeout (plus
// its grace period), naming the stopped rank, and no rank is left.
TEST_F(InterruptCliTest, NprocStoppedRankEndsTheRunNamingIt) {
  if (!HaveGloo()) GTEST_SKIP() << "built without Gloo: data-parallel runs are refused";
  pid_t pid = -1;
  std::vector<pid_t> ranks;
  ASSERT_NO_FATAL_FAILURE(StartLauncher(" --dist-timeout 5", &pid, &ranks));
  ASSERT_EQ(::kill(ranks[1], SIGSTOP), 0);
  const auto stopped = Clock::now();
  const int code = WaitFor(pid, 40);
  const double seconds = std::chrono::duration<double>(Clock::now() - stopped).count();
  EXPECT_NE(code, 0);
  EXPECT_NE(code, -1) << "the launcher did not end within 40 s\n" << Err("launch");
  EXPECT_LT(seconds, 5 + 10 + 10) << "--dist-timeout 5, a 10 s grace and slack";
  EXPECT_TRUE(AllGone(ranks, 5)) << Err("launch");
  EXPECT_NE(Err("launch").find("rank 1 "), std::string::npos) << Err("launch");
  EXPECT_NE(Err("launch").find("stopped (SIGSTOP)"), std::string::npos) << Err("launch");
}

// The train scratch directories (.seer-train-PID-*) inside `dir`.
std::vector<std::string> TrainScratchDirs(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(".seer-train-", 0) == 0) found.push_back(name);
  }
  return found;
}

// A run killed outright (SIGKILL: no clean-up) leaves its traces in an explicit
// --runtime-dir; the resume, started with `--resume --checkpoint-dir K` alone (the
// runtime dir comes from the checkpoint), removes them and finishes; the user's own
// file in that folder stays.
TEST_F(InterruptCliTest, ResumeRemovesAKilledRunsTracesFromAnExplicitRuntimeDir) {
  const std::string rt = tmp_ + "/runtime";
  std::filesystem::create_directories(rt);
  std::ofstream(rt + "/notes.txt") << "mine";
  const pid_t run = Start(Train(2) + " --runtime-dir " + rt + " --checkpoint-dir " + tmp_ + "/ck --checkpoint-every 1",
                          "killed");
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline && !std::filesystem::exists(tmp_ + "/ck/checkpoint.ckpt")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(std::filesystem::exists(tmp_ + "/ck/checkpoint.ckpt")) << Err("killed");
  ::kill(run, SIGKILL);
  EXPECT_EQ(WaitFor(run, 30), 128 + SIGKILL);
  ASSERT_EQ(TrainScratchDirs(rt).size(), 1u) << "the killed run's traces are left behind";

  const seer::testing::CliRun resumed = seer::testing::RunSeer("train --resume --checkpoint-dir " + tmp_ + "/ck --quiet");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(TrainScratchDirs(rt).empty()) << TrainScratchDirs(rt).front();
  EXPECT_EQ(ReadFileBytes(rt + "/notes.txt"), "mine");
}

}  // namespace
