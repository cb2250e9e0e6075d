// `seer prep` from tables (storage/prep/dataset_prep.h with storage/prep/node_tables.h
// and storage/prep/split_writer.h): a labels CSV and split lists in the users' own ids,
// and splits drawn by fraction among the labeled nodes. Oracles: std::map joins over
// node_ids.txt, split sizes/disjointness/labeled-only counted here, and `seer gen`'s own
// splits for the shared rule.
#include "storage/prep/dataset_prep.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"
#include "storage/dataset/dataset_check.h"
#include "storage/prep/npy.h"
#include "storage/prep/synthetic_graph.h"
#include "support/test_support.h"
#include "text_fixtures.h"

namespace seer {
namespace {

using testing::ReadArray;
using testing::WriteText;

std::vector<std::string> Lines(const std::string& path) {
  std::istringstream in(testing::ReadFileBytes(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A social graph of "user_<hex>" ids: 3000 users, 12000 follows (a CSV with a header and
// an extra column); labels for about 70% of the users plus 50 users without edges.
struct UserGraph {
  std::string dir;
  PrepInputs in;
  std::map<std::string, int> label_of;
  std::vector<std::string> users;
};

UserGraph MakeUserGraph() {
  UserGraph g;
  g.dir = testing::MakeTempDir("prep_tables");
  std::mt19937_64 rng(21);
  char name[32];
  for (int i = 0; i < 3000; ++i) {
    std::snprintf(name, sizeof name, "user_%08llx", static_cast<unsigned long long>(rng() & 0xffffffffu));
    g.users.push_back(name);
  }
  std::string edges = "follower,weight,followee\n";
  for (int e = 0; e < 12000; ++e) {
    edges += g.users[rng() % g.users.size()] + ",1," + g.users[rng() % g.users.size()] + "\n";
  }
  WriteText(g.dir + "/follows.csv", edges);
  std::string labels = "user_id,label\n";
  for (const std::string& user : g.users) {
    if (rng() % 10 < 7) {
      g.label_of[user] = static_cast<int>(rng() % 8);
      labels += user + "," + std::to_string(g.label_of[user]) + "\n";
    }
  }
  for (int i = 0; i < 50; ++i) labels += "loner_" + std::to_string(i) + ",3\n";  // not nodes
  WriteText(g.dir + "/labels.csv", labels);
  g.in.edges = g.dir + "/follows.csv";
  g.in.columns = TextColumns{"follower", "followee"};
  g.in.remap_ids = true;
  g.in.labels = g.dir + "/labels.csv";
  return g;
}

Result<PrepSummary> Prep(const PrepInputs& in, const std::string& out, int64_t budget = 512 << 20) {
  PrepOptions options;
  options.memory_budget_bytes = budget;
  return PrepareDataset(in, options, out);
}

TEST(PrepTablesTest, LabelsCsvOfStringIdsJoinsByOriginalId) {
  UserGraph g = MakeUserGraph();
  auto summary = Prep(g.in, g.dir + "/out", 2 << 20);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const std::vector<std::string> nodes = Lines(g.dir + "/out/node_ids.txt");
  const std::vector<int32_t> labels = ReadArray<int32_t>(g.dir + "/out/labels.bin");
  ASSERT_EQ(labels.size(), nodes.size());
  int64_t labeled = 0, max_label = -1;
  for (size_t k = 0; k < nodes.size(); ++k) {
    auto it = g.label_of.find(nodes[k]);
    ASSERT_EQ(labels[k], it == g.label_of.end() ? -1 : it->second) << nodes[k];
    if (it != g.label_of.end()) {
      ++labeled;
      max_label = std::max<int64_t>(max_label, it->second);
    }
  }
  EXPECT_EQ(summary->num_labeled, labeled);
  EXPECT_EQ(summary->num_classes, max_label + 1);
  int64_t absent = 50;  // the loners, and labeled users that follow nobody and have no follower
  const std::set<std::string> node_set(nodes.begin(), nodes.end());
  for (const auto& [user, label] : g.label_of) absent += node_set.count(user) == 0;
  ASSERT_EQ(summary->ids_not_in_graph.size(), 1u);
  EXPECT_EQ(summary->ids_not_in_graph[0].first, g.in.labels);
  EXPECT_EQ(summary->ids_not_in_graph[0].second, absent);
  EXPECT_EQ(summary->num_train, 0);
  EXPECT_TRUE(CheckDataset(g.dir + "/out", DatasetCheckOptions{true}).ok());
}

// Counts each split, checks they are disjoint and hold labeled nodes only.
struct SplitCheck {
  int64_t sizes[3] = {0, 0, 0};
  std::vector<int64_t> lists[3];
};

void CheckDrawnSplits(const std::string& out, const std::vector<int32_t>& labels, SplitCheck* check) {
  const char* files[] = {"train.bin", "valid.bin", "test.bin"};
  std::vector<int> seen(labels.size(), 0);
  for (int s = 0; s < 3; ++s) {
    check->lists[s] = ReadArray<int64_t>(out + "/" + files[s]);
    check->sizes[s] = static_cast<int64_t>(check->lists[s].size());
    for (int64_t node : check->lists[s]) {
      ASSERT_GE(node, 0);
      ASSERT_LT(node, static_cast<int64_t>(labels.size()));
      ASSERT_GE(labels[node], 0) << "unlabeled node " << node << " in " << files[s];
      ASSERT_EQ(seen[node]++, 0) << "node " << node << " in two splits";
    }
  }
}

TEST(PrepTablesTest, FractionsDrawAmongLabeledNodesOnly) {
  UserGraph g = MakeUserGraph();
  g.in.split_fractions = SplitFractions{0.6, 0.2, 0.1};
  g.in.split_seed = 5;
  auto summary = Prep(g.in, g.dir + "/a");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_TRUE(summary->splits_drawn);
  const std::vector<int32_t> labels = ReadArray<int32_t>(g.dir + "/a/labels.bin");
  SplitCheck a;
  ASSERT_NO_FATAL_FAILURE(CheckDrawnSplits(g.dir + "/a", labels, &a));
  const double labeled = static_cast<double>(summary->num_labeled);
  const double fractions[] = {0.6, 0.2, 0.1};
  const int64_t* reported[] = {&summary->num_train, &summary->num_valid, &summary->num_test};
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(*reported[s], a.sizes[s]);
    // Binomial(labeled, f): within 5 standard deviations.
    const double mean = labeled * fractions[s], sd = std::sqrt(labeled * fractions[s] * (1 - fractions[s]));
    EXPECT_NEAR(static_cast<double>(a.sizes[s]), mean, 5 * sd) << s;
    EXPECT_TRUE(std::is_sorted(a.lists[s].begin(), a.lists[s].end()));
  }
  EXPECT_LE(a.sizes[0] + a.sizes[1] + a.sizes[2], summary->num_labeled);
  // The same seed draws the same splits; another seed others.
  ASSERT_TRUE(Prep(g.in, g.dir + "/b").ok());
  EXPECT_EQ(ReadArray<int64_t>(g.dir + "/b/train.bin"), a.lists[0]);
  EXPECT_EQ(ReadArray<int64_t>(g.dir + "/b/test.bin"), a.lists[2]);
  g.in.split_seed = 6;
  ASSERT_TRUE(Prep(g.in, g.dir + "/c").ok());
  EXPECT_NE(ReadArray<int64_t>(g.dir + "/c/train.bin"), a.lists[0]);
}

// .npy labels (-1 = unlabeled) with integer node ids draw the same way.
TEST(PrepTablesTest, FractionsWithNpyLabels) {
  const std::string dir = testing::MakeTempDir("prep_tables");
  std::string edges;
  for (int v = 0; v < 4000; ++v) edges += std::to_string(v) + " " + std::to_string((v * 7 + 1) % 4000) + "\n";
  WriteText(dir + "/e.txt", edges);
  std::vector<int64_t> labels(4000);
  for (int v = 0; v < 4000; ++v) labels[v] = v % 3 == 0 ? -1 : v % 5;
  ASSERT_TRUE(WriteNpy(dir + "/l.npy", "<i8", {4000}, labels.data()).ok());
  PrepInputs in;
  in.edges = dir + "/e.txt";
  in.labels = dir + "/l.npy";
  in.split_fractions = SplitFractions{0.5, 0.5, 0};
  auto summary = Prep(in, dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  SplitCheck check;
  ASSERT_NO_FATAL_FAILURE(CheckDrawnSplits(dir + "/out", ReadArray<int32_t>(dir + "/out/labels.bin"), &check));
  // Fractions summing to 1: every labeled node is in train or valid, test is empty.
  EXPECT_EQ(check.sizes[0] + check.sizes[1], summary->num_labeled);
  EXPECT_EQ(summary->num_labeled, 4000 - 1334);
  EXPECT_EQ(check.sizes[2], 0);
}

// `seer gen` and `seer prep --train-fraction` share the rule: prep of gen's own edge
// list with every node labeled, same seed and fractions, gives gen's split files.
TEST(PrepTablesTest, FractionsFollowSeerGenRule) {
  const std::string dir = testing::MakeTempDir("prep_tables");
  SyntheticGraphConfig config;
  config.num_nodes = 5000;
  config.avg_degree = 4;
  config.feature_dim = 0;
  config.seed = 77;
  config.train_fraction = 0.5;
  config.valid_fraction = 0.25;
  config.test_fraction = 0.125;
  ASSERT_TRUE(GenerateSyntheticDataset(config, dir + "/gen", false).ok());
  ASSERT_TRUE(WriteSyntheticEdgeList(config, dir + "/edges.txt").ok());
  std::string table = "node,label\n";
  for (int64_t v = config.num_nodes - 1; v >= 0; --v) table += std::to_string(v) + "," + std::to_string(v % 3) + "\n";
  WriteText(dir + "/labels.csv", table);
  PrepInputs in;
  in.edges = dir + "/edges.txt";
  in.num_nodes = config.num_nodes;
  in.labels = dir + "/labels.csv";
  in.split_fractions = SplitFractions{config.train_fraction, config.valid_fraction, config.test_fraction};
  in.split_seed = config.seed;
  auto summary = Prep(in, dir + "/prep");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->num_labeled, config.num_nodes);
  for (const char* file : {"train.bin", "valid.bin", "test.bin"}) {
    EXPECT_EQ(ReadArray<int64_t>(dir + "/prep/" + file), ReadArray<int64_t>(dir + "/gen/" + file)) << file;
  }
  EXPECT_EQ(testing::ReadFileBytes(dir + "/prep/indices.bin"), testing::ReadFileBytes(dir + "/gen/indices.bin"));
}

// Split lists in original ids (a column by name, or one id per line): joined like the
// labels; ids that are not nodes counted; a node in two lists named with file:line.
TEST(PrepTablesTest, SplitListsOfOriginalIds) {
  UserGraph g = MakeUserGraph();
  ASSERT_TRUE(Prep(g.in, g.dir + "/plain").ok());
  const std::vector<std::string> nodes = Lines(g.dir + "/plain/node_ids.txt");
  std::map<std::string, int64_t> node_of;
  for (size_t k = 0; k < nodes.size(); ++k) node_of[nodes[k]] = static_cast<int64_t>(k);
  std::string train = "user_id,note\n", valid;
  std::vector<int64_t> expected_train, expected_valid;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (k % 5 == 1) {
      train += nodes[k] + ",x\n";
      expected_train.push_back(static_cast<int64_t>(k));
    } else if (k % 5 == 2) {
      valid += nodes[k] + "\n";
      expected_valid.push_back(static_cast<int64_t>(k));
    }
  }
  train += "nobody,x\n";
  WriteText(g.dir + "/train.csv", train);
  WriteText(g.dir + "/valid.txt", valid);
  g.in.train = g.dir + "/train.csv";
  g.in.valid = g.dir + "/valid.txt";
  g.in.split_id_col = "user_id";
  // A column named for the CSV is looked up in valid.txt too: give valid.txt a header.
  WriteText(g.dir + "/valid.txt", "user_id\n" + valid);
  auto summary = Prep(g.in, g.dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(ReadArray<int64_t>(g.dir + "/out/train.bin"), expected_train);
  EXPECT_EQ(ReadArray<int64_t>(g.dir + "/out/valid.bin"), expected_valid);
  EXPECT_EQ(summary->num_train, static_cast<int64_t>(expected_train.size()));
  bool counted = false;
  for (const auto& [path, count] : summary->ids_not_in_graph) {
    if (path == g.in.train) counted = count == 1;
  }
  EXPECT_TRUE(counted);
  // A node in both lists: named by the second list's file and line.
  WriteText(g.dir + "/valid.txt", "user_id\n" + valid + nodes[1] + "\n");
  auto twice = Prep(g.in, g.dir + "/twice");
  ASSERT_FALSE(twice.ok());
  const size_t line = expected_valid.size() + 2;
  EXPECT_NE(twice.status().message().find("valid.txt:" + std::to_string(line) + ": node 1 is already in the train split"),
            std::string::npos)
      << twice.status().message();
}

TEST(PrepTablesTest, RefusesSplitFlagsThatCannotWork) {
  UserGraph g = MakeUserGraph();
  auto refused = [&](PrepInputs in, const std::string& expected) {
    auto result = Prep(in, g.dir + "/refused");
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.status().message().find(expected), std::string::npos) << result.status().message();
    EXPECT_FALSE(FileSizeBytes(g.dir + "/refused/dataset.json").ok());
  };
  PrepInputs in = g.in;
  in.split_fractions.train = 0.8;
  in.train = g.dir + "/labels.csv";
  refused(in, "--train-fraction/--valid-fraction/--test-fraction draw the splits, and " + in.train + " gives one");
  in.train.clear();
  in.labels.clear();
  refused(in, "draw the splits among labeled nodes, but no labels are given (--labels FILE)");
  in.labels = g.in.labels;
  in.split_fractions.valid = 0.5;
  refused(in, "train + valid + test fractions = 1.300000 exceed 1");
  in = g.in;
  in.label_col = "label";
  in.labels = g.dir + "/labels.npy";
  const std::vector<int64_t> some_labels = {0, 1};
  ASSERT_TRUE(WriteNpy(in.labels, "<i8", {2}, some_labels.data()).ok());
  refused(in, "--label-id-col/--label-col choose the columns of a labels table");
}

}  // namespace
}  // namespace seer
