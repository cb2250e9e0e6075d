// Scratch directories after a kill -9 (storage/base/scratch_dir.h, stale_temp.h): each
// writer of `seer prep` (--node-ids's join: rows, --remap-ids's sorts: remap, the CSC
// builder's staged edges: csc-spill) is killed while its scratch directory exists, and
// the next command that writes beside it removes it, saying so. Directories with the
// same kind of name that Seer did not make (no owner mark) are left alone.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace {

namespace fs = std::filesystem;

// The first entry of `dir` named .seer-PURPOSE-* that holds the owner mark, or "".
std::string FindScratch(const std::string& dir, const std::string& purpose) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(".seer-" + purpose + "-", 0) == 0 && fs::exists(it->path() / ".seer-owner")) {
      return it->path().string();
    }
  }
  return "";
}

// Starts `seer ARGS...` (output discarded), waits until DIR holds a scratch directory of
// PURPOSE, kills the process with SIGKILL and returns that directory ("" when the
// process ended first or 120 s passed).
std::string KillWhileScratchExists(const std::vector<std::string>& args, const std::string& dir,
                                   const std::string& purpose) {
  const char* binary = std::getenv("SEER_BINARY");
  if (binary == nullptr) return "";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> argv{const_cast<char*>("seer")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary, argv.data());
    ::_exit(127);
  }
  std::string found;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    found = FindScratch(dir, purpose);
    if (!found.empty()) break;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return "";  // finished before we saw it
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return found;
}

class ScratchSweepCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    inputs_ = seer::testing::MakeSuiteTempDir("scratch_sweep_inputs");
    // 400K edges between string ids (--remap-ids parses them: seconds of work), the ids
    // file of --node-ids, and 3M integer edges (the CSC builder stages text edges).
    std::ofstream csv(inputs_ + "/edges.csv");
    csv << "src,dst\n";
    for (int64_t e = 0; e < 400000; ++e) {
      csv << fmt::format("user_{:x},user_{:x}\n", (e * 7919) % 100003, (e * 104729 + 17) % 100003);
    }
    std::ofstream ids(inputs_ + "/ids.txt");
    for (int64_t v = 0; v < 100003; ++v) ids << fmt::format("user_{:x}\n", (v * 31) % 100003);
    std::ofstream txt(inputs_ + "/edges.txt");
    for (int64_t e = 0; e < 3000000; ++e) txt << (e * 7919) % 1000003 << ' ' << (e * 104729 + 17) % 1000003 << '\n';
    std::ofstream small(inputs_ + "/small.txt");
    small << "0 1\n1 2\n2 0\n";
  }
  static void TearDownTestSuite() { seer::testing::RemoveTempDir(inputs_); }

  // Kills `seer prep ARGS --out DIR/killed` while its PURPOSE directory exists, then runs
  // a small prep into DIR/after (it sweeps DIR, the parent of its output) and checks the
  // scratch directory went and the user's look-alikes stayed.
  void KillAndSweep(std::vector<std::string> args, const std::string& purpose) {
    ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
    const std::string dir = seer::testing::MakeTempDir("scratch_sweep");
    const std::string lookalike = dir + "/.seer-" + purpose + "-1-abcdef";  // no owner mark
    const std::string user_dir = dir + "/seer-train-2024-results";
    fs::create_directories(lookalike);
    fs::create_directories(user_dir);
    args.insert(args.begin(), "prep");
    args.push_back("--quiet");
    args.push_back("--out");
    args.push_back(dir + "/killed");
    // The writers' scratch directories go beside the output: inside DIR/killed.
    const std::string scratch = KillWhileScratchExists(args, dir + "/killed", purpose);
    ASSERT_FALSE(scratch.empty()) << "seer prep ended (or never made ." << purpose << "-*) before it could be killed";
    ASSERT_TRUE(fs::exists(scratch)) << scratch;
    // The next prep with --out inside DIR/killed sweeps DIR/killed (its parent).
    const auto run = seer::testing::RunSeer(
        fmt::format("prep --quiet --edges {}/small.txt --out {}/killed/after", inputs_, dir));
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_FALSE(fs::exists(scratch)) << scratch << "\n" << run.output;
    EXPECT_NE(run.output.find("seer: removed " + scratch), std::string::npos) << run.output;
    EXPECT_TRUE(fs::exists(lookalike));
    EXPECT_TRUE(fs::exists(user_dir));
  }

  static std::string inputs_;
};

std::string ScratchSweepCliTest::inputs_;

TEST_F(ScratchSweepCliTest, KilledNodeIdsJoinIsSwept) {
  KillAndSweep({"--edges", inputs_ + "/edges.csv", "--src-col", "src", "--dst-col", "dst", "--remap-ids",
                "--node-ids", inputs_ + "/ids.txt"},
               "rows");
}

TEST_F(ScratchSweepCliTest, KilledIdRemapIsSwept) {
  KillAndSweep({"--edges", inputs_ + "/edges.csv", "--src-col", "src", "--dst-col", "dst", "--remap-ids"}, "remap");
}

TEST_F(ScratchSweepCliTest, KilledCscBuildIsSwept) {
  KillAndSweep({"--edges", inputs_ + "/edges.txt"}, "csc-spill");
}

// A live run's scratch directory seen from another PID namespace (a container sharing the
// folder): its pid means nothing there, so only the owner mark's lock can tell that it is
// alive. A `seer prep` is stopped (SIGSTOP keeps its lock) while its scratch directory
// exists; a second seer in a new PID namespace writes beside it and sweeps that folder;
// the directory must stay. Skips where unshare is not permitted (no root, seccomp).
TEST_F(ScratchSweepCliTest, LiveRunInAnotherPidNamespaceIsLeftAlone) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const char* binary = std::getenv("SEER_BINARY");
  if (seer::testing::RunShell("unshare --pid --fork --mount-proc true").exit_code != 0) {
    GTEST_SKIP() << "unshare --pid is not permitted here";
  }
  const std::string dir = seer::testing::MakeTempDir("scratch_pidns");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    const std::string edges = inputs_ + "/edges.csv", out = dir + "/live";
    ::execl(binary, "seer", "prep", "--quiet", "--edges", edges.c_str(), "--src-col", "src", "--dst-col", "dst",
            "--remap-ids", "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string scratch;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (scratch.empty() && std::chrono::steady_clock::now() < deadline) {
    scratch = FindScratch(dir + "/live", "remap");
    int status = 0;
    if (scratch.empty() && ::waitpid(pid, &status, WNOHANG) == pid) break;
    if (scratch.empty()) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  if (scratch.empty()) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    FAIL() << "seer prep ended (or never made .remap-*) before it could be stopped";
  }
  ::kill(pid, SIGSTOP);  // alive, lock held, not progressing
  const auto other = seer::testing::RunShell(fmt::format(
      "unshare --pid --fork --mount-proc {} prep --quiet --edges {}/small.txt --out {}/live/other", binary, inputs_, dir));
  const bool kept = fs::exists(scratch);
  ::kill(pid, SIGKILL);
  ::kill(pid, SIGCONT);
  ::waitpid(pid, nullptr, 0);
  EXPECT_EQ(other.exit_code, 0) << other.output;
  EXPECT_TRUE(kept) << scratch << " was removed from another PID namespace while its run was alive\n"
                    << other.output;
  EXPECT_EQ(other.output.find("removed " + scratch), std::string::npos) << other.output;
}

}  // namespace
