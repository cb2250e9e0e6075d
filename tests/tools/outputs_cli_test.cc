// What `seer` does with the places it writes to (issue "Never destroy, never lose"):
// an output into a missing folder fails before any work, naming the user's path; an
// output that is a symlink is written through the link (the link stays); an output
// another Seer run holds is refused, naming that run.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "storage/base/output_lock.h"
#include "support/test_support.h"

namespace {

namespace fs = std::filesystem;
using seer::testing::ExpectOneLineError;
using seer::testing::RunSeer;

class OutputsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!seer::testing::HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set (run through ctest)";
    dir_ = seer::testing::MakeTempDir("outputs_cli");
    const auto gen = RunSeer("gen --nodes 1500 --avg-degree 6 --seed 2 --quiet --out " + dir_ + "/ds");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  std::string dir_;
};

TEST_F(OutputsCliTest, MissingOutputFolderFailsBeforeAnyWork) {
  // 200 epochs would take minutes: the refusal must come first.
  const auto train = RunSeer("train " + dir_ + "/ds --epochs 200 --cpu --quiet --save-model " + dir_ + "/nope/m.pt");
  ExpectOneLineError(train, "train", "cannot write " + dir_ + "/nope/m.pt: the folder " + dir_ + "/nope does not exist");
  const auto metrics = RunSeer("train " + dir_ + "/ds --epochs 200 --cpu --quiet --metrics " + dir_ + "/nope/m.jsonl");
  ExpectOneLineError(metrics, "train", "cannot write " + dir_ + "/nope/m.jsonl");
  const auto stats = RunSeer("stats " + dir_ + "/ds --json " + dir_ + "/nope/stats.json");
  ExpectOneLineError(stats, "stats", "cannot write " + dir_ + "/nope/stats.json");
  EXPECT_FALSE(fs::exists(dir_ + "/nope"));
}

TEST_F(OutputsCliTest, PredictionsGoThroughASymlinkAndTheLinkStays) {
  const auto train = RunSeer("train " + dir_ + "/ds --epochs 1 --cpu --quiet --hidden 16 --fanouts 3,3 --save-model " +
                             dir_ + "/m.pt");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  fs::create_directory(dir_ + "/results");
  fs::create_symlink(dir_ + "/results/preds.npy", dir_ + "/preds.npy");
  const auto predict = RunSeer("predict " + dir_ + "/ds --model " + dir_ + "/m.pt --cpu --quiet --out " + dir_ +
                               "/preds.npy");
  ASSERT_EQ(predict.exit_code, 0) << predict.output;
  EXPECT_TRUE(fs::is_symlink(dir_ + "/preds.npy"));
  ASSERT_TRUE(fs::is_regular_file(dir_ + "/results/preds.npy"));
  std::string magic(6, '\0');
  std::ifstream(dir_ + "/results/preds.npy").read(magic.data(), 6);
  EXPECT_EQ(magic, "\x93NUMPY");
  EXPECT_GT(fs::file_size(dir_ + "/results/preds.npy"), 128u);  // the header and some int64 classes
  // A folder where a file should go is refused, and stays a folder.
  fs::create_directory(dir_ + "/adir");
  const auto into_dir = RunSeer("predict " + dir_ + "/ds --model " + dir_ + "/m.pt --cpu --quiet --out " + dir_ + "/adir");
  ExpectOneLineError(into_dir, "predict", dir_ + "/adir is a directory");
  EXPECT_TRUE(fs::is_directory(dir_ + "/adir"));
}

TEST_F(OutputsCliTest, DatasetBeingWrittenByAnotherRunIsRefused) {
  std::ofstream(dir_ + "/edges.txt") << "0 1\n1 2\n2 0\n";
  auto held = seer::OutputLock::Acquire(dir_ + "/out", "the test's own prep");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  const auto prep = RunSeer("prep --quiet --edges " + dir_ + "/edges.txt --out " + dir_ + "/out");
  ExpectOneLineError(prep, "prep", "in use by another Seer run (pid " + std::to_string(::getpid()));
  EXPECT_FALSE(fs::exists(dir_ + "/out/dataset.json"));
  held->Release();
  const auto again = RunSeer("prep --quiet --edges " + dir_ + "/edges.txt --out " + dir_ + "/out");
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

// A checkpoint directory or metrics file another run writes is refused before any work,
// naming that run (before: both runs exited 0, one checkpoint lost, the metrics lines
// interleaved).
TEST_F(OutputsCliTest, CheckpointDirAndMetricsOfAnotherRunAreRefused) {
  const std::string train = "train " + dir_ + "/ds --epochs 200 --cpu --quiet --hidden 8 --fanouts 3,3";
  {
    auto held = seer::OutputLock::Acquire(dir_ + "/ckpt", "the test's run");
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    ExpectOneLineError(RunSeer(train + " --checkpoint-dir " + dir_ + "/ckpt"), "train",
                       "in use by another Seer run (pid " + std::to_string(::getpid()));
  }
  {
    auto held = seer::OutputLock::Acquire(dir_ + "/m.jsonl", "the test's run");
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    ExpectOneLineError(RunSeer(train + " --metrics " + dir_ + "/m.jsonl"), "train", "in use by another Seer run");
  }
  EXPECT_FALSE(fs::exists(dir_ + "/m.jsonl"));  // not truncated into existence either
}

}  // namespace
