// `seer train` refuses impossible model and budget values before any work, each with one
// line naming the flag (before: a GAT with --heads 0 died of SIGFPE, --dropout 1.5 failed
// at the first step, --lr nan trained on NaNs, --epochs 0 printed "test accuracy -1",
// a --memory-budget of 2^63 bytes or more wrapped negative, --nproc 0 ran one process);
// CLI11's own errors are one line too: an unknown flag names the nearest known one, a
// --config value names its file, line and key, a long token is cut. Nodes without edges
// (--node-ids ids in no edge) are trained and predicted.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/prep/npy.h"
#include "support/test_support.h"

namespace {

using seer::testing::ExpectOneLineError;
using seer::testing::RunSeer;

TEST(ValidationCliTest, ImpossibleValuesAreRefusedNamingTheFlag) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string ds = seer::testing::MakeTempDir("validation_cli") + "/ds";
  ASSERT_EQ(RunSeer("gen --nodes 500 --seed 1 --quiet --out " + ds).exit_code, 0);
  const struct {
    const char* flags;
    const char* says;
  } cases[] = {
      {"--model gat --heads 0", "--heads 0: expected 1 or more"},
      {"--hidden 0", "--hidden 0: expected 1 or more"},
      {"--dropout 1.5", "--dropout 1.5: expected a probability in [0, 1)"},
      {"--lr nan", "--lr nan: expected a finite number > 0"},
      {"--lr 0", "--lr 0: expected a finite number > 0"},
      {"--epochs 0", "--epochs 0 trains nothing"},
      {"--memory-budget 9000000T", "is too large"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flags);
    ExpectOneLineError(RunSeer("train " + ds + " --cpu --quiet " + c.flags), "train", c.says);
  }
}

TEST(ValidationCliTest, RankCountBelowOneIsRefusedAtParseTime) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string ds = seer::testing::MakeTempDir("validation_cli") + "/ds";
  ASSERT_EQ(RunSeer("gen --nodes 300 --seed 1 --quiet --out " + ds).exit_code, 0);
  ExpectOneLineError(RunSeer("train " + ds + " --cpu --quiet --epochs 1 --nproc 0"), "train",
                     "--nproc: '0': expected a number of ranks >= 1");
  ExpectOneLineError(RunSeer("train " + ds + " --cpu --quiet --epochs 1 --nproc -3"), "train", "--nproc");
  ExpectOneLineError(RunSeer("predict " + ds + " --model m.pt --out p.npy --nproc 0"), "predict",
                     "expected a number of ranks >= 1");
}

TEST(ValidationCliTest, UnknownFlagsNameTheNearestOne) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string ds = seer::testing::MakeTempDir("validation_cli") + "/ds";
  ExpectOneLineError(RunSeer("train " + ds + " --hiden 3"), "train", "unknown flag --hiden; did you mean --hidden?");
  ExpectOneLineError(RunSeer("train " + ds + " --fanout=5,5"), "train", "unknown flag --fanout; did you mean --fanouts?");
  ExpectOneLineError(RunSeer("check " + ds + " --deeep"), "check", "unknown flag --deeep; did you mean --deep?");
  ExpectOneLineError(RunSeer("train " + ds + " --zqxwv"), "train", "unknown flag --zqxwv (--help lists the flags)");
}

TEST(ValidationCliTest, LongTokensAreCutInMessages) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string ds = seer::testing::MakeTempDir("validation_cli") + "/ds";
  const std::string token(100000, 'x');
  for (const std::string& args : {"train " + ds + " --superbatch " + token, "train " + ds + " --" + token,
                                  "train " + ds + " --cache-split " + token}) {
    const seer::testing::CliRun run = RunSeer(args);
    ExpectOneLineError(run, "train", "(1000");
    EXPECT_LT(run.output.size(), 400u) << run.output.substr(0, 400);
  }
}

TEST(ValidationCliTest, ConfigArraysTypesAndDuplicateKeys) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string tmp = seer::testing::MakeTempDir("validation_cli");
  const std::string ds = tmp + "/ds";
  ASSERT_EQ(RunSeer("gen --nodes 300 --seed 1 --quiet --out " + ds).exit_code, 0);
  auto config = [&](const std::string& name, const std::string& text) {
    std::ofstream(tmp + "/" + name) << text;
    return "--config " + tmp + "/" + name + " ";
  };
  // An array is a list flag's value: the run trains 2 layers with fan-outs 4,3.
  const seer::testing::CliRun arrays =
      RunSeer(config("a.toml", "[train]\nfanouts = [4, 3]\nepochs = 1\n") + "train " + ds + " --cpu --threads 2");
  ASSERT_EQ(arrays.exit_code, 0) << arrays.output;
  EXPECT_NE(arrays.output.find("2 layers (fan-outs 4,3)"), std::string::npos) << arrays.output;
  const struct {
    const char* file;
    const char* text;
    std::string says;
  } cases[] = {
      {"b.toml", "[train]\nhidden = \"abc\"\n", "b.toml:2: key 'hidden' in [train]: "},
      {"c.toml", "[train]\nhidden = 3\nepochs = 1\nhidden = 4\n",
       "c.toml:4: key 'hidden' in [train] is given twice (first at line 2)"},
      {"d.toml", "# runs\n[train]\nepochs = [1, 2]\n", "d.toml:3: key 'epochs' in [train]: "},
      {"e.toml", "[train]\nfanouts = [5, \"x\"]\n", "e.toml:2: key 'fanouts' in [train]: "},
      {"f.toml", "train.epochs = 1\ntrain.epochs = 2\n", "f.toml:2: key 'epochs' in [train] is given twice"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    ExpectOneLineError(RunSeer(config(c.file, c.text) + "train " + ds + " --cpu --quiet"), "train", c.says);
  }
}

// Issue 27: ids of --node-ids (with features and labels) that appear in no edge were
// dropped from the graph and could never be predicted. Now they are nodes of degree 0:
// prep keeps them (features, labels, drawn splits, node_ids.txt), the sampler gives them
// no neighbors, and train and predict run with them among the seeds (GraphSAGE, GCN, GAT).
TEST(ValidationCliTest, NodesWithoutEdgesAreTrainedAndPredicted) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string dir = seer::testing::MakeTempDir("validation_cli");
  std::string edges = "src,dst\n", ids;
  const int kUsers = 120, kLonely = 30;
  for (int i = 0; i < 600; ++i) {
    edges += "u" + std::to_string((i * 37) % kUsers) + ",u" + std::to_string((i * 11 + 5) % kUsers) + "\n";
  }
  // The ids file lists users and the lonely ones interleaved (its own order).
  std::vector<float> features;
  std::vector<int64_t> labels;
  for (int r = 0; r < kUsers + kLonely; ++r) {
    const bool lonely = r % 5 == 0 && r / 5 < kLonely;
    const int k = lonely ? r / 5 : r - std::min(r / 5 + 1, kLonely);
    ids += (lonely ? "lonely" : "u") + std::to_string(k) + "\n";
    const int64_t label = k % 3;
    labels.push_back(label);
    for (int j = 0; j < 4; ++j) features.push_back(static_cast<float>(label == j) + 0.01f * static_cast<float>(j));
  }
  seer::testing::WriteFileBytes(dir + "/e.csv", edges);
  seer::testing::WriteFileBytes(dir + "/ids.txt", ids);
  const int64_t rows = kUsers + kLonely;
  ASSERT_TRUE(seer::WriteNpy(dir + "/f.npy", "<f4", {rows, 4}, features.data()).ok());
  ASSERT_TRUE(seer::WriteNpy(dir + "/l.npy", "<i8", {rows}, labels.data()).ok());
  const std::string ds = dir + "/ds";
  const auto prep = RunSeer("prep --edges " + dir + "/e.csv --src-col src --dst-col dst --remap-ids --node-ids " + dir +
                            "/ids.txt --features " + dir + "/f.npy --labels " + dir + "/l.npy --train-fraction 0.7 "
                            "--valid-fraction 0.15 --test-fraction 0.15 --quiet --out " + ds);
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_NE(prep.output.find(std::to_string(rows) + " nodes, 600 edges"), std::string::npos) << prep.output;
  EXPECT_NE(prep.output.find(std::to_string(kLonely) + " ids of " + dir + "/ids.txt are in no edge"),
            std::string::npos)
      << prep.output;
  // Lonely nodes among the training seeds, with degree 0.
  const auto indptr = seer::testing::ReadArray<int64_t>(ds + "/indptr.bin");
  const auto train = seer::testing::ReadArray<int64_t>(ds + "/train.bin");
  int lonely_seeds = 0;
  for (int64_t v : train) lonely_seeds += indptr[v + 1] == indptr[v] ? 1 : 0;
  EXPECT_GE(lonely_seeds, 10);
  EXPECT_EQ(RunSeer("check " + ds + " --deep --quiet").exit_code, 0);
  const auto sample = RunSeer("sample " + ds + " --out " + dir + "/trace --batch-size 32 --quiet");
  EXPECT_EQ(sample.exit_code, 0) << sample.output;
  for (const char* model : {"sage", "gcn", "gat"}) {
    SCOPED_TRACE(model);
    const std::string saved = dir + "/" + model + ".pt";
    const auto train_run = RunSeer("train " + ds + " --cpu --quiet --epochs 2 --batch-size 32 --model " +
                                   std::string(model) + " --save-model " + saved);
    ASSERT_EQ(train_run.exit_code, 0) << train_run.output;
    EXPECT_EQ(train_run.output.find("nan"), std::string::npos) << train_run.output;
    seer::testing::WriteFileBytes(dir + "/nodes.txt", "lonely0\nlonely7\nu3\n");
    const auto predict = RunSeer("predict " + ds + " --cpu --quiet --model " + saved + " --nodes " + dir +
                                 "/nodes.txt --out " + dir + "/p.npy --out-ids " + dir + "/p.csv");
    ASSERT_EQ(predict.exit_code, 0) << predict.output;
    const std::string csv = seer::testing::ReadFileBytes(dir + "/p.csv");
    EXPECT_EQ(csv.rfind("id,class\nlonely0,", 0), 0u) << csv;
    EXPECT_NE(csv.find("\nlonely7,"), std::string::npos) << csv;
  }
}

// Unlabeled training seeds (-1 in labels.bin) were accepted silently: they are sampled but
// add nothing to the loss. A run now says how many there are, and a split without any
// labelled node is refused before any work.
TEST(ValidationCliTest, UnlabeledTrainingSeedsAreCountedOrRefused) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string dir = seer::testing::MakeTempDir("validation_unlabeled");
  std::string edges;
  for (int v = 0; v < 40; ++v) edges += std::to_string(v) + " " + std::to_string((v * 7 + 3) % 40) + "\n";
  seer::testing::WriteFileBytes(dir + "/e.txt", edges);
  std::vector<float> features;
  std::vector<int64_t> labels;
  for (int v = 0; v < 40; ++v) {
    labels.push_back(v < 3 ? -1 : v % 2);
    for (int j = 0; j < 4; ++j) features.push_back(static_cast<float>(v % 2 == j));
  }
  ASSERT_TRUE(seer::WriteNpy(dir + "/f.npy", "<f4", {40, 4}, features.data()).ok());
  ASSERT_TRUE(seer::WriteNpy(dir + "/l.npy", "<i8", {40}, labels.data()).ok());
  const std::vector<int64_t> some = {0, 1, 2, 3, 4, 5, 6, 7}, none = {0, 1, 2};
  ASSERT_TRUE(seer::WriteNpy(dir + "/some.npy", "<i8", {8}, some.data()).ok());
  ASSERT_TRUE(seer::WriteNpy(dir + "/none.npy", "<i8", {3}, none.data()).ok());
  for (const char* split : {"some", "none"}) {
    const auto prep = RunSeer("prep --edges " + dir + "/e.txt --num-nodes 40 --features " + dir + "/f.npy --labels " +
                              dir + "/l.npy --train " + dir + "/" + split + ".npy --quiet --out " + dir + "/" + split);
    ASSERT_EQ(prep.exit_code, 0) << prep.output;
  }
  const auto some_run = RunSeer("train " + dir + "/some --cpu --epochs 1 --batch-size 4");
  ASSERT_EQ(some_run.exit_code, 0) << some_run.output;
  EXPECT_NE(some_run.output.find("note: 3 of the 8 training nodes in " + dir + "/some/train.bin are unlabeled"),
            std::string::npos)
      << some_run.output;
  const auto none_run = RunSeer("train " + dir + "/none --cpu --epochs 1 --batch-size 4");
  EXPECT_NE(none_run.exit_code, 0);
  const std::string refusal = "seer train: error: " + dir + "/none/train.bin: none of its 3 training nodes is labelled";
  EXPECT_NE(none_run.output.find(refusal), std::string::npos) << none_run.output;
  EXPECT_EQ(none_run.output.find("epoch 1"), std::string::npos) << none_run.output;  // before any training
}

}  // namespace
