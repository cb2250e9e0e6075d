// NodeTable (storage/prep/node_tables.h): labels tables and id lists joined to the nodes
// against std::map oracles (original ids through spilled sort runs, integer ids), and
// every input error naming file:line.
#include "storage/prep/node_tables.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/dataset/node_ids.h"
#include "support/test_support.h"
#include "text_fixtures.h"

namespace seer {
namespace {

using testing::ReadArray;
using testing::WriteText;

NodeTableOptions Options(const std::string& dir, bool original_ids, int64_t budget = 512 << 20) {
  NodeTableOptions options;
  options.original_ids = original_ids;
  options.label_limit = 100000;
  options.memory_budget_bytes = budget;
  options.work_dir = dir;
  return options;
}

// Shows `nodes` (sorted by IdSortKey) to the table in order and finishes it.
void MatchNodes(NodeTable& table, const std::vector<std::string>& nodes) {
  for (size_t k = 0; k < nodes.size(); ++k) {
    ASSERT_TRUE(table.Match(IdSortKey(nodes[k]), static_cast<int64_t>(k)).ok()) << nodes[k];
  }
  ASSERT_TRUE(table.Finish(static_cast<int64_t>(nodes.size())).ok());
}

std::vector<std::string> SortedById(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) { return IdSortKey(a) < IdSortKey(b); });
  return ids;
}

// 30000 lines over 12000 ids (strings and integers, some twice with the same label, some
// with an empty label), named columns with one in between; the nodes are a random part
// of the ids plus ids the table lacks. 1 MiB budget: the sort spills several runs.
TEST(NodeTablesTest, LabelsJoinMatchesAMapOracle) {
  const std::string dir = testing::MakeTempDir("node_tables");
  std::mt19937_64 rng(11);
  std::vector<std::string> pool;
  for (int i = 0; i < 12000; ++i) pool.push_back(i % 4 == 0 ? std::to_string(i * 7) : "user_" + std::to_string(i));
  std::map<std::string, int> label_of;
  std::string text = "user_id,score,label\n";
  for (int line = 0; line < 30000; ++line) {
    const std::string& id = pool[rng() % pool.size()];
    auto known = label_of.find(id);
    if (rng() % 10 == 0) {
      text += id + ",0.5,\n";  // unlabeled line: no effect
      continue;
    }
    const int label = known != label_of.end() ? known->second : static_cast<int>(rng() % 9);
    label_of[id] = label;
    text += "\"" + id + "\", 0.25 ," + std::to_string(label) + "\n";
  }
  WriteText(dir + "/labels.csv", text);
  std::vector<std::string> nodes;
  for (const std::string& id : pool) {
    if (rng() % 3 != 0) nodes.push_back(id);
  }
  for (int i = 0; i < 500; ++i) nodes.push_back("extra_" + std::to_string(i));
  nodes = SortedById(nodes);

  auto table = NodeTable::StartLabels(dir + "/labels.csv", "user_id", "label", Options(dir, true, 1 << 20));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_NO_FATAL_FAILURE(MatchNodes(**table, nodes));
  const std::vector<int32_t> got = ReadArray<int32_t>((*table)->result_path());
  ASSERT_EQ(got.size(), nodes.size());
  int64_t labeled = 0;
  for (size_t k = 0; k < nodes.size(); ++k) {
    auto it = label_of.find(nodes[k]);
    ASSERT_EQ(got[k], it == label_of.end() ? -1 : it->second) << nodes[k];
    labeled += it != label_of.end();
  }
  EXPECT_EQ((*table)->matched(), labeled);
  const std::set<std::string> node_set(nodes.begin(), nodes.end());
  int64_t missing = 0;
  for (const auto& [id, label] : label_of) missing += node_set.count(id) == 0;
  EXPECT_EQ((*table)->not_in_graph(), missing);
}

// Without --remap-ids: ids are node numbers ("007" is 7), nodes 0..N-1; ids >= N are not
// nodes; a header is recognised by its non-numeric fields.
TEST(NodeTablesTest, IntegerIdsAreNodeNumbers) {
  const std::string dir = testing::MakeTempDir("node_tables");
  WriteText(dir + "/labels.tsv", "node\tclass\n3\t1\n007\t2\n0\t0\n12\t4\n3\t1\n");
  auto table = NodeTable::StartLabels(dir + "/labels.tsv", "", "", Options(dir, false));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_TRUE((*table)->MatchIntegerNodes(10).ok());
  EXPECT_EQ(ReadArray<int32_t>((*table)->result_path()), (std::vector<int32_t>{0, -1, -1, 1, -1, -1, -1, 2, -1, -1}));
  EXPECT_EQ((*table)->matched(), 3);
  EXPECT_EQ((*table)->not_in_graph(), 1);  // 12
  // An id list of node numbers, one per line, no header.
  WriteText(dir + "/train.txt", "# comment\n5\n1\n\n8\n11\n");
  auto ids = NodeTable::StartIds(dir + "/train.txt", "", Options(dir, false));
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_TRUE((*ids)->MatchIntegerNodes(10).ok());
  // (node, line) pairs, ascending by node.
  EXPECT_EQ(ReadArray<int64_t>((*ids)->result_path()), (std::vector<int64_t>{1, 3, 5, 2, 8, 5}));
  EXPECT_EQ((*ids)->not_in_graph(), 1);  // 11
}

// Original ids in a column chosen by name (the first line is then the header).
TEST(NodeTablesTest, IdListOfOriginalIdsByColumnName) {
  const std::string dir = testing::MakeTempDir("node_tables");
  WriteText(dir + "/valid.csv", "score,user_id\n1,bob\n2,zed\n3,007\n4,ann\n");
  auto ids = NodeTable::StartIds(dir + "/valid.csv", "user_id", Options(dir, true));
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_NO_FATAL_FAILURE(MatchNodes(**ids, SortedById({"7", "ann", "bob", "cy"})));
  // "007" is not 7 (original ids compare as text unless canonical integers).
  EXPECT_EQ(ReadArray<int64_t>((*ids)->result_path()), (std::vector<int64_t>{1, 5, 2, 2}));
  EXPECT_EQ((*ids)->not_in_graph(), 2);  // zed, 007
}

// Every refusal is one line naming the file and the line.
TEST(NodeTablesTest, ErrorsNameFileAndLine) {
  const std::string dir = testing::MakeTempDir("node_tables");
  struct Case {
    std::string text;
    bool labels, original_ids;
    std::string expected;
  };
  const Case cases[] = {
      {"id,label\na,1\nb,1\na,2\n", true, true, "t.csv:4: node id 'a' has label 2, but line 2 gave it label 1"},
      {"id,label\na,x\n", true, true, "t.csv:2: non-integer label 'x'"},
      {"id,label\na,1.5\n", true, true, "t.csv:2: non-integer label '1.5'"},
      {"id,label\na,-1\n", true, true, "t.csv:2: label -1 out of range [0, 2^31)"},
      {"id,label\na,2147483648\n", true, true, "t.csv:2: label 2147483648 out of range [0, 2^31)"},
      {"id,label\na,100000\n", true, true, "t.csv:2: label 100000 out of range [0, 100000)"},
      {"id,label\n,3\n", true, true, "t.csv:2: empty node id"},
      {"id,label\nabc,3\n", true, false, "t.csv:2: node id 'abc' is not a node number"},
      {"a\nb\na\n", false, true, "t.csv:3: node id 'a' repeats line 1"},
      {"1\n-4\n", false, false, "t.csv:2: node id '-4' is not a node number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    WriteText(dir + "/t.csv", c.text);
    auto table = c.labels ? NodeTable::StartLabels(dir + "/t.csv", "", "", Options(dir, c.original_ids))
                          : NodeTable::StartIds(dir + "/t.csv", "", Options(dir, c.original_ids));
    ASSERT_FALSE(table.ok());
    EXPECT_EQ(table.status().message().find(dir + "/" + c.expected), 0u) << table.status().message();
    EXPECT_EQ(table.status().message().find('\n'), std::string::npos);
  }
  WriteText(dir + "/t.csv", "id,label\na,1\n");
  auto named = NodeTable::StartLabels(dir + "/t.csv", "user", "label", Options(dir, true));
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("t.csv:1: no column 'user' in the header (id, label)"), std::string::npos);
  WriteText(dir + "/t.csv", "a,b\n");
  auto short_line = NodeTable::StartIds(dir + "/t.csv", "3", Options(dir, true));
  ASSERT_FALSE(short_line.ok());
  EXPECT_NE(short_line.status().message().find("t.csv:1: 2 fields, but the id is column 3"), std::string::npos);
}

}  // namespace
}  // namespace seer
