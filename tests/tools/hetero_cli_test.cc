// Typed datasets through the real `seer` binary (env SEER_BINARY): `seer gen --hetero`
// (same seed, same bytes), `seer check` on a typed dataset (its summary; one error line
// naming the file and position), `seer train`/`predict` on a typed dataset, and every
// command that reads homogeneous datasets only refusing a typed one with one line instead
// of misreading it.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "cli_suite.h"
#include "support/small_dataset.h"
#include "support/test_support.h"

namespace seer::testing {
namespace {

constexpr const char* kGenFlags = "gen --hetero --papers 2000 --feature-dim 8 --featureless institute --seed 3 --quiet";

// One typed dataset (ROOT/h), shared by the tests that only read it.
class HeteroCliTest : public CliSuite<HeteroCliTest> {
 public:
  static constexpr const char* kPrefix = "seer_hetero_cli";
  static void Prepare(const std::string& root) {
    const CliRun gen = RunSeer(std::string(kGenFlags) + " --out " + root + "/h");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
};

TEST_F(HeteroCliTest, GenIsDeterministicAndCheckSummarizesEveryTypeAndRelation) {
  const std::string copy = MakeTempDir("hetero_again") + "/h";
  const CliRun gen = RunSeer(std::string(kGenFlags) + " --out " + copy);
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  EXPECT_NE(gen.output.find("typed, 4 node types, 8 relations (2000 paper, 2000 author, 2 institute, 20 fos)"),
            std::string::npos)
      << gen.output;
  const CliRun same = RunShell("cmp " + root_ + "/h/dataset.json " + copy + "/dataset.json && for f in " + root_ +
                               "/h/*.bin; do cmp \"$f\" " + copy + "/$(basename \"$f\") || exit 1; done && echo SAME");
  EXPECT_NE(same.output.find("SAME"), std::string::npos) << same.output;
  const CliRun check = RunSeer("check " + root_ + "/h --deep --quiet");
  ASSERT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("OK: typed, 4 node types, 8 relations, 4022 nodes"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("checksums verified, 23 files"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("node type paper: 2000 nodes, 8 features x float32, 19 classes (2000 labeled), "
                              "train/valid/test "),
            std::string::npos)
      << check.output;
  EXPECT_NE(check.output.find("node type institute: 2 nodes, no features"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("relation institute__has_member__author: "), std::string::npos) << check.output;
}

TEST_F(HeteroCliTest, CheckNamesTheFileAndPositionOfABadIndex) {
  const std::string dir = MakeTempDir("hetero_bad") + "/h";
  ASSERT_EQ(RunShell("cp -r " + root_ + "/h " + dir).exit_code, 0);
  Poke<uint32_t>(dir + "/paper__written_by__author.indices.bin", 5, 2000);  // 2000 papers: ids 0..1999
  ExpectOneLineError(RunSeer("check " + dir + " --quiet"), "check",
                     dir + "/paper__written_by__author.indices.bin at index 5 (byte offset 20): paper id 2000 out of "
                           "range [0, 2000) (the source type of paper__written_by__author)");
}

TEST_F(HeteroCliTest, HomogeneousCommandsRefuseATypedDataset) {
  const std::string typed = root_ + "/h";
  const std::string out = MakeTempDir("hetero_refused");
  const std::string refusal =
      typed + ": typed dataset (4 node types, 8 relations): this command does not support typed datasets yet";
  struct Command {
    const char* name;
    std::string args;
  };
  const Command commands[] = {
      {"reorder", "reorder " + typed + " --out " + out + "/reordered --quiet"},
      {"split-edges", "split-edges " + typed + " --out " + out + "/split --quiet"},
      {"ncache", "ncache build " + typed + " --budget 1M --quiet"},
  };
  for (const Command& c : commands) {
    SCOPED_TRACE(c.args);
    ExpectOneLineError(RunSeer(c.args), c.name, refusal);
  }
  EXPECT_FALSE(FileExists(typed + "/ncache/ncache.json"));
  EXPECT_FALSE(FileExists(out + "/trace/trace.json"));
}

// train and predict (seer-train, built with libtorch) open the dataset the same way.
// seer train on a typed dataset: a relational model end to end (the typed line, test
// accuracy above chance, a model predict reads back), and what a typed run does not do
// refused with one line.
TEST_F(HeteroCliTest, TrainsARelationalModelAndRefusesWhatTypedRunsLack) {
  const std::string typed = root_ + "/h";
  const std::string out = MakeTempDir("hetero_train");
  const std::string binary = std::getenv("SEER_BINARY");
  const std::string trainer = binary.substr(0, binary.find_last_of('/') + 1) + "seer-train";
  if (::access(trainer.c_str(), X_OK) != 0) GTEST_SKIP() << "no seer-train next to " << binary;
  const std::string small = " --epochs 2 --fanouts 4,4 --hidden 16 --batch-size 200 --lr 0.01 --threads 2";
  const CliRun train = RunSeer("train " + typed + " --model rsage --relation-fanouts cites=2,3" + small +
                               " --save-model " + out + "/m.pt");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("typed dataset: 4 node types, 8 relations; classifying paper (2000 nodes, 19 classes)"),
            std::string::npos)
      << train.output;
  const size_t at = train.output.find("test accuracy ");
  ASSERT_NE(at, std::string::npos) << train.output;
  EXPECT_GT(std::stod(train.output.substr(at + 14)), 3.0 / 19) << train.output;  // chance: 1/19
  // predict samples the test split as training's evaluation did (the model file records the
  // per-relation fan-outs): the same accuracy.
  const CliRun predict = RunSeer("predict " + typed + " --model " + out + "/m.pt --out " + out + "/p.npy");
  ASSERT_EQ(predict.exit_code, 0) << predict.output;
  const size_t vs = predict.output.find("accuracy vs labels ");
  ASSERT_NE(vs, std::string::npos) << predict.output;
  EXPECT_NEAR(std::stod(predict.output.substr(vs + 19)), std::stod(train.output.substr(at + 14)), 1e-4)
      << train.output << predict.output;
  ExpectOneLineError(RunSeer("train " + typed + " --task link" + small + " --quiet"), "train",
                     "link prediction on typed datasets is not supported yet");
  ExpectOneLineError(RunSeer("train " + typed + " --read-block 4K" + small + " --quiet"), "train",
                     "--read-block is not supported on typed datasets yet");
  ExpectOneLineError(RunSeer("train " + typed + " --model gcn" + small + " --quiet"), "train",
                     "use --gcn-norm block (relations merged) or --model rgcn");
  ExpectOneLineError(RunSeer("train " + typed + " --target-type author" + small + " --quiet"), "train",
                     "--target-type author: that node type has no labels (labeled: paper)");
}

TEST_F(HeteroCliTest, FlagsOfTheOtherKindAreRefused) {
  const std::string out = MakeTempDir("hetero_flags");
  ExpectOneLineError(RunSeer("gen --hetero --nodes 100 --out " + out + "/a --quiet"), "gen",
                     "--nodes does not apply to --hetero");
  ExpectOneLineError(RunSeer("gen --papers 100 --out " + out + "/b --quiet"), "gen", "--papers needs --hetero");
  ExpectOneLineError(RunSeer("gen --hetero --featureless venue --out " + out + "/c --quiet"), "gen",
                     "featureless names 'venue'");
  EXPECT_FALSE(FileExists(out + "/c/dataset.json"));
}

}  // namespace
}  // namespace seer::testing
