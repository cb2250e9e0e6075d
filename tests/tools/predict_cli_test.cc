// `seer predict` and evaluation through the real binary (issues 27 and 29): --nodes means
// original ids in every form (text or .npy; node_ids.txt's ids, else row numbers), an
// empty or unknown --nodes is refused naming the file and line, the CSV is quoted per RFC
// 4180 (read back with an independent parser) and carries probabilities or logits on
// request, the accuracy line says how many predicted nodes were labelled (counted here
// from labels.bin), a damaged model file is refused naming it, the training fan-outs are
// predict's default, and `seer train` tests once, at the end, unless --test-every-epoch.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/prep/npy.h"
#include "support/test_support.h"
#include "cli_suite.h"

namespace seer::testing {
namespace {

class PredictCliTest : public CliSuite<PredictCliTest> {
 public:
  static constexpr const char* kPrefix = "seer_predict_cli";
  static constexpr int kNodes = 240;
  static constexpr int kDim = 8;
  // Node k's original id in the remapped dataset: awkward ones for CSV included.
  static std::string IdOf(int k) {
    switch (k) {
      case 0: return "a,b";
      case 1: return "say \"hi\"";
      case 2: return "42";
      case 3: return "7";
      default: return "user_" + std::to_string(k);
    }
  }
  // TSV field: quoted when it holds a comma (the prep reader strips surrounding quotes).
  static std::string TsvField(const std::string& id) { return id.find(',') != std::string::npos ? "\"" + id + "\"" : id; }

  static void Prepare(const std::string& root) {
    // A plain dataset (ids are row numbers) with a model trained on it.
    CliRun gen = RunSeer("gen --nodes 2000 --seed 3 --quiet --out " + root + "/g");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    CliRun train = RunSeer("train " + root + "/g --hidden 16 --fanouts 5,5 --batch-size 100 --epochs 2 --threads 2 "
                           "--memory-budget 64M --budget-scope data --cpu --quiet --save-model " + root + "/g.pt");
    ASSERT_EQ(train.exit_code, 0) << train.output;
    // A --remap-ids dataset from a TSV whose ids need CSV quoting; classes follow k % 3
    // in both the features and the neighbourhood.
    std::string edges = "src\tdst\n", ids;
    for (int k = 0; k < kNodes; ++k) {
      ids += IdOf(k) + "\n";
      for (int j : {3, 6, 9}) edges += TsvField(IdOf(k)) + "\t" + TsvField(IdOf((k + j) % kNodes)) + "\n";
    }
    WriteFileBytes(root + "/e.tsv", edges);
    WriteFileBytes(root + "/ids.txt", ids);
    std::vector<float> features(kNodes * kDim);
    std::vector<int64_t> labels(kNodes);
    for (int k = 0; k < kNodes; ++k) {
      for (int d = 0; d < kDim; ++d) features[k * kDim + d] = (d % 3 == k % 3 ? 1.0f : 0.0f) + 0.01f * ((k * 7 + d) % 5);
      labels[k] = k % 5 == 4 ? -1 : k % 3;
    }
    ASSERT_TRUE(WriteNpy(root + "/f.npy", "<f4", {kNodes, kDim}, features.data()).ok());
    ASSERT_TRUE(WriteNpy(root + "/l.npy", "<i8", {kNodes}, labels.data()).ok());
    CliRun prep = RunSeer("prep --edges " + root + "/e.tsv --src-col src --dst-col dst --remap-ids --node-ids " + root +
                          "/ids.txt --features " + root + "/f.npy --labels " + root + "/l.npy --train-fraction 0.6 "
                          "--valid-fraction 0.2 --test-fraction 0.2 --quiet --out " + root + "/r");
    ASSERT_EQ(prep.exit_code, 0) << prep.output;
    CliRun train_r = RunSeer("train " + root + "/r --hidden 16 --fanouts 3,3 --batch-size 32 --epochs 3 --threads 2 "
                             "--memory-budget 64M --budget-scope data --cpu --quiet --save-model " + root + "/r.pt");
    ASSERT_EQ(train_r.exit_code, 0) << train_r.output;
  }

  static std::string Predict(const std::string& ds, const std::string& model, const std::string& extra) {
    return "predict " + root_ + "/" + ds + " --model " + root_ + "/" + model + " --cpu --threads 2 --memory-budget 64M "
           "--budget-scope data " + extra;
  }
};

// An RFC 4180 reader, independent of Seer's writer: fields split on commas outside
// quotes, "" inside quotes is one quote, records end at a newline outside quotes.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
    } else if (c == '\n') {
      record.push_back(field);
      field.clear();
      records.push_back(record);
      record.clear();
    } else {
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote";
  EXPECT_TRUE(field.empty() && record.empty()) << "last record without newline";
  return records;
}

std::vector<int64_t> ReadPreds(const std::string& path) {
  auto file = NpyFile::Open(path);
  EXPECT_TRUE(file.ok()) << path;
  if (!file.ok()) return {};
  std::vector<int64_t> values(static_cast<size_t>(file->header().num_elements()));
  EXPECT_TRUE(file->ReadAsInt64(0, file->header().num_elements(), values.data()).ok());
  return values;
}

TEST_F(PredictCliTest, NodesAreRowNumbersInEveryFormWithoutNodeIds) {
  WriteFileBytes(root_ + "/rows.txt", "5\n17\r\n5\n\n1999\n");
  const std::vector<int64_t> rows = {5, 17, 5, 1999};
  ASSERT_TRUE(WriteNpy(root_ + "/rows.npy", "<i8", {4}, rows.data()).ok());
  CliRun text = RunSeer(Predict("g", "g.pt", "--nodes " + root_ + "/rows.txt --out " + root_ + "/pt.npy"));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  CliRun npy = RunSeer(Predict("g", "g.pt", "--nodes " + root_ + "/rows.npy --out " + root_ + "/pn.npy"));
  ASSERT_EQ(npy.exit_code, 0) << npy.output;
  const std::vector<int64_t> a = ReadPreds(root_ + "/pt.npy"), b = ReadPreds(root_ + "/pn.npy");
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a[0], a[2]);
  // The labelled count is labels.bin's, over the 3 distinct nodes.
  const std::vector<int32_t> labels = ReadArray<int32_t>(root_ + "/g/labels.bin");
  int labelled = 0;
  for (int64_t v : {5, 17, 1999}) labelled += labels[static_cast<size_t>(v)] >= 0;
  if (labelled > 0) {
    EXPECT_NE(text.output.find("over " + std::to_string(labelled) + " labelled of 3 predicted"), std::string::npos)
        << text.output;
  }
  // The whole test split: N labelled of N predicted (every test node has a label).
  CliRun split = RunSeer(Predict("g", "g.pt", "--out " + root_ + "/ps.npy"));
  ASSERT_EQ(split.exit_code, 0) << split.output;
  const size_t test_nodes = ReadArray<int64_t>(root_ + "/g/test.bin").size();
  EXPECT_NE(split.output.find("over " + std::to_string(test_nodes) + " labelled of " + std::to_string(test_nodes) +
                              " predicted"),
            std::string::npos)
      << split.output;
  // No original ids and --output class: no CSV unless asked.
  EXPECT_FALSE(FileExists(root_ + "/ps.csv"));
}

TEST_F(PredictCliTest, EmptyOrUnknownNodesAreRefusedNamingFileAndLine) {
  WriteFileBytes(root_ + "/empty.txt", "\n\n");
  ExpectOneLineError(RunSeer(Predict("g", "g.pt", "--nodes " + root_ + "/empty.txt --out " + root_ + "/x.npy")),
                     "predict", root_ + "/empty.txt: no node ids in --nodes");
  const std::vector<int64_t> none;
  ASSERT_TRUE(WriteNpy(root_ + "/empty.npy", "<i8", {0}, none.data()).ok());
  ExpectOneLineError(RunSeer(Predict("g", "g.pt", "--nodes " + root_ + "/empty.npy --out " + root_ + "/x.npy")),
                     "predict", root_ + "/empty.npy: no node ids");
  WriteFileBytes(root_ + "/bad.txt", "5\n2000\n");
  ExpectOneLineError(RunSeer(Predict("g", "g.pt", "--nodes " + root_ + "/bad.txt --out " + root_ + "/x.npy")),
                     "predict", root_ + "/bad.txt:2: node id '2000' is not in the dataset");
  const std::vector<int64_t> bad = {3, -1};
  ASSERT_TRUE(WriteNpy(root_ + "/bad.npy", "<i8", {2}, bad.data()).ok());
  ExpectOneLineError(RunSeer(Predict("g", "g.pt", "--nodes " + root_ + "/bad.npy --out " + root_ + "/x.npy")),
                     "predict", root_ + "/bad.npy: element 1: node id -1 is negative");
  WriteFileBytes(root_ + "/unknown.txt", "a,b\nnobody\n");
  ExpectOneLineError(RunSeer(Predict("r", "r.pt", "--nodes " + root_ + "/unknown.txt --out " + root_ + "/x.npy")),
                     "predict", root_ + "/unknown.txt:2: node id 'nobody' is not in the dataset");
  EXPECT_FALSE(FileExists(root_ + "/x.npy"));
  EXPECT_FALSE(FileExists(root_ + "/x.csv"));
}

TEST_F(PredictCliTest, CsvIsQuotedAndCarriesProbabilitiesOrLogits) {
  // Original ids in a text file and as integers in a .npy: both mean node_ids.txt's ids.
  WriteFileBytes(root_ + "/ids_in.txt", "say \"hi\"\na,b\n42\nuser_100\n");
  CliRun text = RunSeer(Predict("r", "r.pt", "--nodes " + root_ + "/ids_in.txt --output probabilities --out " + root_ +
                                                 "/p.npy"));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  const auto probs = ParseCsv(ReadFileBytes(root_ + "/p.csv"));
  ASSERT_EQ(probs.size(), 5u);
  EXPECT_EQ(probs[0], (std::vector<std::string>{"id", "class", "prob_0", "prob_1", "prob_2"}));
  const std::vector<std::string> expected_ids = {"say \"hi\"", "a,b", "42", "user_100"};
  const std::vector<int64_t> classes = ReadPreds(root_ + "/p.npy");
  ASSERT_EQ(classes.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const auto& row = probs[i + 1];
    ASSERT_EQ(row.size(), 5u);
    EXPECT_EQ(row[0], expected_ids[i]);
    EXPECT_EQ(std::stoll(row[1]), classes[i]);
    double sum = 0, best = -1;
    int64_t argmax = -1;
    for (int c = 0; c < 3; ++c) {
      const double p = std::stod(row[2 + c]);
      sum += p;
      if (p > best) best = p, argmax = c;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
    EXPECT_EQ(argmax, classes[i]);
  }
  // The model learned k % 3 (user_100: class 1).
  EXPECT_EQ(classes[3], 1);

  const std::vector<int64_t> integer_ids = {42, 7};
  ASSERT_TRUE(WriteNpy(root_ + "/ids_in.npy", "<i8", {2}, integer_ids.data()).ok());
  CliRun npy = RunSeer(Predict("r", "r.pt", "--nodes " + root_ + "/ids_in.npy --output logits --out " + root_ +
                                                "/l.npy --quiet"));
  ASSERT_EQ(npy.exit_code, 0) << npy.output;
  const auto logits = ParseCsv(ReadFileBytes(root_ + "/l.csv"));
  ASSERT_EQ(logits.size(), 3u);
  EXPECT_EQ(logits[0][2], "logit_0");
  EXPECT_EQ(logits[1][0], "42");
  EXPECT_EQ(logits[2][0], "7");
  // softmax(logits of "42") = the probabilities printed for "42" above.
  double max = -1e300, denom = 0;
  for (int c = 0; c < 3; ++c) max = std::max(max, std::stod(logits[1][2 + c]));
  for (int c = 0; c < 3; ++c) denom += std::exp(std::stod(logits[1][2 + c]) - max);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(std::exp(std::stod(logits[1][2 + c]) - max) / denom, std::stod(probs[3][2 + c]), 1e-6);
  }
}

// The float32 values of an .npy written by predict (its data is the file's tail).
std::vector<float> ReadFloatNpy(const std::string& path) {
  auto file = NpyFile::Open(path);
  EXPECT_TRUE(file.ok()) << path;
  if (!file.ok()) return {};
  const std::string bytes = ReadFileBytes(path);
  std::vector<float> values(static_cast<size_t>(file->header().num_elements()));
  std::memcpy(values.data(), bytes.data() + bytes.size() - 4 * values.size(), 4 * values.size());
  return values;
}

// A link prediction model on the --remap-ids dataset: pairs by original id (tab
// separated, ids holding commas, quotes and blanks), their CSV with the ids as given and
// the scores of the .npy, and the embeddings' "row,id" CSV naming each row's node.
TEST_F(PredictCliTest, LinkModelScoresPairsAndEmbedsNodesByOriginalId) {
  CliRun split = RunSeer("split-edges " + root_ + "/r --out " + root_ + "/r-lp --eval-negatives 5 --quiet");
  ASSERT_EQ(split.exit_code, 0) << split.output;
  CliRun train = RunSeer("train " + root_ + "/r-lp --task link --hidden 8 --fanouts 3,3 --batch-size 64 --epochs 1 "
                         "--threads 2 --memory-budget 64M --budget-scope data --cpu --quiet --save-model " + root_ +
                         "/r-lp.pt");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  WriteFileBytes(root_ + "/pairs.tsv", "a,b\tsay \"hi\"\n42\t7\r\n\nuser_10\tuser_11\n");
  CliRun score = RunSeer(Predict("r-lp", "r-lp.pt", "--pairs " + root_ + "/pairs.tsv --scores " + root_ + "/s.npy"));
  ASSERT_EQ(score.exit_code, 0) << score.output;
  const std::vector<float> scores = ReadFloatNpy(root_ + "/s.npy");
  ASSERT_EQ(scores.size(), 3u);
  const auto csv = ParseCsv(ReadFileBytes(root_ + "/s.csv"));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0], (std::vector<std::string>{"src", "dst", "score"}));
  const std::vector<std::pair<std::string, std::string>> pairs = {{"a,b", "say \"hi\""}, {"42", "7"}, {"user_10", "user_11"}};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(csv[i + 1].size(), 3u);
    EXPECT_EQ(csv[i + 1][0], pairs[i].first);
    EXPECT_EQ(csv[i + 1][1], pairs[i].second);
    EXPECT_NEAR(std::stod(csv[i + 1][2]), scores[i], 1e-6 * (1 + std::fabs(scores[i])));
  }
  // Every node's embedding, rows named in e.csv; the row of "42" is the one predicted for it alone.
  CliRun all = RunSeer(Predict("r-lp", "r-lp.pt", "--embeddings " + root_ + "/e.npy"));
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const std::vector<float> e = ReadFloatNpy(root_ + "/e.npy");
  const auto rows = ParseCsv(ReadFileBytes(root_ + "/e.csv"));
  ASSERT_EQ(rows.size(), static_cast<size_t>(kNodes) + 1);
  ASSERT_EQ(e.size(), static_cast<size_t>(kNodes) * 8);
  std::set<std::string> named;
  int64_t row_of_42 = -1;
  for (size_t i = 1; i < rows.size(); ++i) {
    named.insert(rows[i][1]);
    if (rows[i][1] == "42") row_of_42 = std::stoll(rows[i][0]);
  }
  std::set<std::string> every;
  for (int k = 0; k < kNodes; ++k) every.insert(IdOf(k));
  EXPECT_EQ(named, every);
  ASSERT_GE(row_of_42, 0);
  WriteFileBytes(root_ + "/just42.txt", "42\n");
  CliRun one = RunSeer(Predict("r-lp", "r-lp.pt", "--nodes " + root_ + "/just42.txt --embeddings " + root_ + "/e42.npy"));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const std::vector<float> e42 = ReadFloatNpy(root_ + "/e42.npy");
  ASSERT_EQ(e42.size(), 8u);
  for (int d = 0; d < 8; ++d) EXPECT_NEAR(e42[d], e[static_cast<size_t>(row_of_42 * 8 + d)], 1e-5) << d;
}

TEST_F(PredictCliTest, DamagedModelFileIsRefusedNamingIt) {
  std::string bytes = ReadFileBytes(root_ + "/g.pt");
  ASSERT_GT(bytes.size(), 1000u);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x04);
  WriteFileBytes(root_ + "/damaged.pt", bytes);
  CliRun run = RunSeer(Predict("g", "damaged.pt", "--out " + root_ + "/d.npy"));
  ExpectOneLineError(run, "predict", root_ + "/damaged.pt: model file");
  EXPECT_FALSE(FileExists(root_ + "/d.npy"));
}

TEST_F(PredictCliTest, DefaultFanoutsAreTheTrainingOnes) {
  CliRun recorded = RunSeer(Predict("g", "g.pt", "--out " + root_ + "/f1.npy --quiet"));
  ASSERT_EQ(recorded.exit_code, 0) << recorded.output;
  CliRun given = RunSeer(Predict("g", "g.pt", "--fanouts 5,5 --out " + root_ + "/f2.npy --quiet"));
  ASSERT_EQ(given.exit_code, 0) << given.output;
  CliRun other = RunSeer(Predict("g", "g.pt", "--fanouts 2,2 --out " + root_ + "/f3.npy --quiet"));
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_EQ(ReadFileBytes(root_ + "/f1.npy"), ReadFileBytes(root_ + "/f2.npy"));
  EXPECT_NE(ReadFileBytes(root_ + "/f1.npy"), ReadFileBytes(root_ + "/f3.npy"));
}

// Evaluation that costs what it should: epochs validate, the test split is evaluated
// once at the end (the epoch lines carry no test accuracy), --test-every-epoch restores
// the per-epoch test, and both runs train identically (same losses).
TEST_F(PredictCliTest, TrainTestsOnceAtTheEndUnlessAsked) {
  const std::string common = "train " + root_ + "/g --hidden 16 --fanouts 5,5 --batch-size 100 --epochs 2 --threads 2 "
                             "--memory-budget 64M --budget-scope data --cpu";
  CliRun once = RunSeer(common);
  ASSERT_EQ(once.exit_code, 0) << once.output;
  CliRun every = RunSeer(common + " --test-every-epoch");
  ASSERT_EQ(every.exit_code, 0) << every.output;
  auto epoch_line = [](const std::string& out, int epoch) {
    const size_t at = out.find("epoch " + std::to_string(epoch) + ": ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  for (int e : {1, 2}) {
    const std::string a = epoch_line(once.output, e), b = epoch_line(every.output, e);
    ASSERT_FALSE(a.empty()) << once.output;
    EXPECT_NE(a.find("valid acc"), std::string::npos) << a;
    EXPECT_EQ(a.find("test acc"), std::string::npos) << a;
    EXPECT_NE(b.find("test acc"), std::string::npos) << b;
    const auto loss = [](const std::string& line) { return line.substr(line.find("train loss"), 17); };
    EXPECT_EQ(loss(a), loss(b));
  }
  EXPECT_NE(once.output.find("test acc "), std::string::npos) << once.output;
  EXPECT_NE(once.output.find("(best-validation model)"), std::string::npos) << once.output;
  auto value = [](const std::string& out, const std::string& key) {
    const size_t at = out.find("\n" + key + " ");
    return at == std::string::npos ? std::string() : out.substr(at + key.size() + 2, 6);
  };
  EXPECT_EQ(value(once.output, "test accuracy"), value(every.output, "test accuracy"));
  CliRun never = RunSeer(common + " --eval-every 0");
  ASSERT_EQ(never.exit_code, 0) << never.output;
  EXPECT_EQ(never.output.find("valid acc 0"), std::string::npos) << never.output;
  EXPECT_NE(never.output.find("best valid accuracy none"), std::string::npos) << never.output;
  EXPECT_EQ(never.output.find("-1.0000"), std::string::npos) << never.output;
}

// The forward pass of docs/formats.md, run as written in plain PyTorch (torch.load of the
// model file, the dataset's raw files) by tests/tools/model_file_forward.py, equals
// `seer predict --fanouts -1,-1 --output logits` (every neighbour: no sampling).
TEST_F(PredictCliTest, DocumentedPyTorchForwardPassEqualsPredict) {
  const std::string source = __FILE__;
  const std::string root = source.substr(0, source.rfind("tests/tools/"));
  CliRun predict = RunSeer(Predict("g", "g.pt", "--fanouts -1,-1 --output logits --out " + root_ + "/full.npy --quiet"));
  ASSERT_EQ(predict.exit_code, 0) << predict.output;
  CliRun python = RunShell("/usr/bin/python3 " + root + "tests/tools/model_file_forward.py " + root + "docs/formats.md " +
                           root_ + "/g " + root_ + "/g.pt " + root_ + "/full.csv");
  if (python.exit_code == 77) GTEST_SKIP() << python.output;
  EXPECT_EQ(python.exit_code, 0) << python.output;
  std::printf("%s", python.output.c_str());
}

// After `seer reorder` the internal numbers change but --nodes still means the input's
// row numbers (through node_order.bin) and the CSV reports them: with every neighbour
// taken, the same rows get the same logits as on the original dataset.
TEST_F(PredictCliTest, NodesAreRowNumbersAfterReorder) {
  CliRun reorder = RunSeer("reorder " + root_ + "/g --order degree --out " + root_ + "/g_r");
  ASSERT_EQ(reorder.exit_code, 0) << reorder.output;
  WriteFileBytes(root_ + "/some.txt", "5\n17\n1999\n0\n");
  const std::string flags = "--nodes " + root_ + "/some.txt --fanouts -1,-1 --output logits --quiet --allow-other-dataset ";
  ASSERT_EQ(RunSeer(Predict("g", "g.pt", flags + "--out " + root_ + "/o.npy")).exit_code, 0);
  CliRun reordered = RunSeer(Predict("g_r", "g.pt", flags + "--out " + root_ + "/o_r.npy"));
  ASSERT_EQ(reordered.exit_code, 0) << reordered.output;
  const auto a = ParseCsv(ReadFileBytes(root_ + "/o.csv")), b = ParseCsv(ReadFileBytes(root_ + "/o_r.csv"));
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), 5u);
  for (size_t i = 1; i < 5; ++i) {
    EXPECT_EQ(a[i][0], b[i][0]);
    EXPECT_EQ(a[i][1], b[i][1]) << a[i][0];
    for (size_t c = 2; c < a[i].size(); ++c) EXPECT_NEAR(std::stod(a[i][c]), std::stod(b[i][c]), 1e-5) << a[i][0];
  }
  EXPECT_EQ(b[1][0], "5");
  EXPECT_EQ(b[4][0], "0");
}

}  // namespace
}  // namespace seer::testing
