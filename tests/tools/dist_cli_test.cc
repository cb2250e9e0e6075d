// Data-parallel `seer train` through the real binaries (env SEER_BINARY): --nproc 2 gives
// one process's accuracy with the same global batch; rank 0 alone prints the results; a
// two-"node" rehearsal (each rank its own dataset copy, rank 1 bound to 127.0.0.2); ranks
// on different data refuse to train; a rank killed with SIGKILL ends the run with an
// error naming it instead of a hang.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "executor/process_group.h"
#include "support/test_support.h"

namespace {

using seer::testing::CliRun;

CliRun Seer(const std::string& args) {
  EXPECT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  return seer::testing::RunSeer(args);
}

// "key value" lines printed on stdout by seer train ("test accuracy 0.93").
double ValueAfter(const std::string& output, const std::string& key) {
  const size_t pos = output.find(key + " ");
  if (pos == std::string::npos) return -1;
  return std::stod(output.substr(pos + key.size() + 1));
}

// A port for the rendezvous: spread by pid so parallel ctest runs do not collide.
int TestPort(int offset) { return 20000 + (getpid() * 7 + offset) % 20000; }

// `$SEER_BINARY args` in the background with `env` prepended, output to `log`.
pid_t Start(const std::string& env, const std::string& args, const std::string& log) {
  return seer::testing::StartShell(env + " exec \"" + std::getenv("SEER_BINARY") + "\" " + args + " > " + log +
                                   " 2>&1");
}

std::string RankEnv(int rank, int world, int port) {
  return "RANK=" + std::to_string(rank) + " WORLD_SIZE=" + std::to_string(world) +
         " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port);
}

class DistCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!seer::testing::HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
    // A libtorch without the gloo headers builds without data-parallel runs
    // (executor/process_group.h): those refuse, which ProcessGroupTest checks.
    if (!seer::ProcessGroup::Available()) GTEST_SKIP() << "built without Gloo: data-parallel runs are refused";
    tmp_ = seer::testing::MakeTempDir("dist_cli");
    ds_ = tmp_ + "/ds";
    CliRun gen = Seer("gen --nodes 6000 --avg-degree 8 --out " + ds_ + " --seed 3 --quiet");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  std::string Common(const std::string& ds, int epochs = 2) const {
    return "train " + ds + " --hidden 32 --fanouts 5,5 --superbatch 4 --epochs " + std::to_string(epochs) +
           " --dropout 0 --cpu --buffered --threads 1 --memory-budget 128M --budget-scope data";
  }
  std::string tmp_, ds_;
};

// The README's one command: 2 ranks of b/2 give one process's accuracy with b.
TEST_F(DistCliTest, NprocTwoMatchesOneProcessAndOnlyRankZeroPrints) {
  CliRun one = Seer(Common(ds_) + " --batch-size 100 --save-model " + tmp_ + "/one.pt");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  CliRun two = Seer(Common(ds_) + " --batch-size 50 --nproc 2 --master-port " + std::to_string(TestPort(0)) +
                    " --save-model " + tmp_ + "/two.pt --metrics " + tmp_ + "/m{rank}.jsonl");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("data-parallel: 2 ranks"), std::string::npos) << two.output;
  // The ranks were started by the launcher, not by torchrun.
  EXPECT_NE(two.output.find("2 ranks (started by --nproc)"), std::string::npos) << two.output;
  EXPECT_EQ(two.output.find("torchrun"), std::string::npos) << two.output;
  EXPECT_NEAR(ValueAfter(two.output, "test accuracy"), ValueAfter(one.output, "test accuracy"), 0.01) << two.output;
  EXPECT_NEAR(ValueAfter(two.output, "best valid accuracy"), ValueAfter(one.output, "best valid accuracy"), 0.01);
  // One set of result lines (rank 0's), each rank's metrics file, one model file.
  EXPECT_EQ(two.output.find("test accuracy"), two.output.rfind("test accuracy")) << two.output;
  EXPECT_TRUE(std::filesystem::exists(tmp_ + "/m0.jsonl"));
  EXPECT_TRUE(std::filesystem::exists(tmp_ + "/m1.jsonl"));
  EXPECT_TRUE(std::filesystem::exists(tmp_ + "/two.pt"));
}

// Data-parallel predict: 3 ranks (uneven shares of the test split) write, on rank 0 alone,
// the same classes and embeddings, byte for byte, as one process, and report its accuracy.
TEST_F(DistCliTest, PredictOnThreeRanksEqualsOneProcess) {
  CliRun train = Seer(Common(ds_, 1) + " --batch-size 100 --save-model " + tmp_ + "/m.pt");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::string predict = "predict " + ds_ + " --model " + tmp_ + "/m.pt --fanouts 5,5 --cpu --buffered --threads 1 "
                              "--memory-budget 128M --budget-scope data --batch-size 64";
  CliRun one = Seer(predict + " --out " + tmp_ + "/p1.npy --embeddings " + tmp_ + "/e1.npy");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  CliRun three = Seer(predict + " --nproc 3 --master-port " + std::to_string(TestPort(3)) + " --out " + tmp_ +
                      "/p3.npy --embeddings " + tmp_ + "/e3.npy");
  ASSERT_EQ(three.exit_code, 0) << three.output;
  EXPECT_EQ(seer::testing::ReadFileBytes(tmp_ + "/p3.npy"), seer::testing::ReadFileBytes(tmp_ + "/p1.npy"));
  EXPECT_EQ(seer::testing::ReadFileBytes(tmp_ + "/e3.npy"), seer::testing::ReadFileBytes(tmp_ + "/e1.npy"));
  const size_t at = one.output.find("accuracy vs labels");
  ASSERT_NE(at, std::string::npos) << one.output;
  const std::string accuracy = one.output.substr(at, one.output.find(')', at) - at);
  EXPECT_NE(three.output.find(accuracy), std::string::npos) << three.output;
  EXPECT_EQ(three.output.find("seer predict:"), three.output.rfind("seer predict:")) << three.output;
  // The launcher speaks for predict as "seer launcher", never as "seer train".
  EXPECT_NE(three.output.find("seer launcher: starting 3 ranks"), std::string::npos) << three.output;
  EXPECT_EQ(three.output.find("seer train"), std::string::npos) << three.output;
}

// Two "nodes" on one machine: each rank reads its own copy of the dataset, rank 1's
// collectives bind 127.0.0.2 while the rendezvous is on 127.0.0.1.
TEST_F(DistCliTest, TwoNodeRehearsalWithOwnDatasetCopies) {
  const std::string copy = tmp_ + "/node1-ds";
  std::filesystem::copy(ds_, copy, std::filesystem::copy_options::recursive);
  const int port = TestPort(1);
  const pid_t r0 = Start(RankEnv(0, 2, port), Common(ds_) + " --batch-size 50", tmp_ + "/r0.log");
  const pid_t r1 = Start(RankEnv(1, 2, port), Common(copy) + " --batch-size 50 --dist-bind 127.0.0.2", tmp_ + "/r1.log");
  EXPECT_EQ(seer::testing::WaitForChild(r1, 120), 0) << seer::testing::ReadFileBytes(tmp_ + "/r1.log");
  EXPECT_EQ(seer::testing::WaitForChild(r0, 30), 0) << seer::testing::ReadFileBytes(tmp_ + "/r0.log");
  const std::string out0 = seer::testing::ReadFileBytes(tmp_ + "/r0.log");
  EXPECT_GT(ValueAfter(out0, "test accuracy"), 0.2) << out0;
}

TEST_F(DistCliTest, RanksOnDifferentDataRefuseNamingTheRank) {
  const std::string other = tmp_ + "/other";
  CliRun gen = Seer("gen --nodes 6000 --avg-degree 8 --out " + other + " --seed 4 --quiet");
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const int port = TestPort(2);
  const pid_t r0 = Start(RankEnv(0, 2, port), Common(ds_) + " --batch-size 50", tmp_ + "/r0.log");
  const pid_t r1 = Start(RankEnv(1, 2, port), Common(other) + " --batch-size 50", tmp_ + "/r1.log");
  EXPECT_EQ(seer::testing::WaitForChild(r1, 120), 1);
  EXPECT_EQ(seer::testing::WaitForChild(r0, 30), 1);
  const std::string out0 = seer::testing::ReadFileBytes(tmp_ + "/r0.log");
  EXPECT_NE(out0.find("the ranks train on different data"), std::string::npos) << out0;
  EXPECT_NE(out0.find("rank 1 ("), std::string::npos) << out0;
}

// kill -9 of rank 1 while training: rank 0 exits with an error naming rank 1 well within
// its --dist-timeout, instead of hanging.
TEST_F(DistCliTest, KilledRankEndsTheRunWithAnError) {
  const int port = TestPort(3);
  const std::string args = Common(ds_, 2000) + " --batch-size 20 --dist-timeout 20";
  const pid_t r0 = Start(RankEnv(0, 2, port), args, tmp_ + "/r0.log");
  const pid_t r1 = Start(RankEnv(1, 2, port), args, tmp_ + "/r1.log");
  // Rank 0 prints "epoch 1:" once the ranks train together.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seer::testing::ReadFileBytes(tmp_ + "/r0.log").find("epoch 1:") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(seer::testing::ReadFileBytes(tmp_ + "/r0.log").find("epoch 1:"), std::string::npos)
      << seer::testing::ReadFileBytes(tmp_ + "/r0.log") << seer::testing::ReadFileBytes(tmp_ + "/r1.log");
  kill(r1, SIGKILL);
  EXPECT_EQ(seer::testing::WaitForChild(r1, 10), 128 + SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  const int code = seer::testing::WaitForChild(r0, 40);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  const std::string out0 = seer::testing::ReadFileBytes(tmp_ + "/r0.log");
  EXPECT_EQ(code, 1) << "rank 0 did not end (-1 = still running after 40 s)\n" << out0;
  EXPECT_LT(seconds, 30);
  EXPECT_NE(out0.find("rank(s) 1 did not reach it"), std::string::npos) << out0;
}

}  // namespace
