// NodeRows (storage/prep/node_rows.h): the --node-ids join against a std::map oracle,
// with a budget that forces several sorted runs, and the by-id rule.
#include "storage/prep/node_rows.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/dataset/node_ids.h"
#include "support/test_support.h"
#include "text_fixtures.h"

namespace seer {
namespace {

namespace fs = std::filesystem;

// The entries of `dir` whose names start with `prefix`, and under them the files ending
// in ".run".
int CountEntries(const std::string& dir, const std::string& prefix, int* runs) {
  int count = 0;
  *runs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(prefix, 0) != 0) continue;
    ++count;
    for (const auto& file : fs::directory_iterator(entry.path())) *runs += file.path().extension() == ".run";
  }
  return count;
}

// 20000 ids in the file, 15000 of them nodes; 512 KiB budget: sort runs of 256 KiB whose
// record quarter holds ~2700 records, so the file's sort spills at least 7 runs.
TEST(NodeRowsTest, JoinThroughSpilledRunsMatchesAMapOracle) {
  const std::string dir = testing::MakeTempDir("node_rows");
  const uint64_t seed = 5;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::string> file_ids;
  for (int i = 0; i < 20000; ++i) file_ids.push_back(i % 3 == 0 ? std::to_string(i) : "n" + std::to_string(i));
  std::shuffle(file_ids.begin(), file_ids.end(), rng);
  std::string text;
  for (const std::string& id : file_ids) text += id + "\n";
  testing::WriteText(dir + "/ids.txt", text);
  std::map<std::string, int64_t> row_of;
  for (size_t r = 0; r < file_ids.size(); ++r) row_of[file_ids[r]] = static_cast<int64_t>(r);
  // The nodes: a random 3/4 of the ids, in id order (what IdRemap would show).
  std::vector<std::string> nodes;
  for (const std::string& id : file_ids) {
    if (rng() % 4 != 0) nodes.push_back(id);
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const std::string& a, const std::string& b) { return IdSortKey(a) < IdSortKey(b); });

  auto join = NodeRowJoin::Start(dir + "/ids.txt", 512 << 10, dir, false);
  ASSERT_TRUE(join.ok()) << join.status().ToString();
  int runs = 0;
  ASSERT_EQ(CountEntries(dir, ".seer-rows-", &runs), 1);
  EXPECT_GE(runs, 7);  // alive while the merge reads them
  for (size_t k = 0; k < nodes.size(); ++k) {
    ASSERT_TRUE((*join)->Match(IdSortKey(nodes[k]), static_cast<int64_t>(k)).ok()) << nodes[k];
  }
  auto rows = (*join)->Finish(static_cast<int64_t>(nodes.size()));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  join->reset();
  const NodeRows& r = **rows;
  EXPECT_EQ(r.unmatched_rows(), static_cast<int64_t>(file_ids.size() - nodes.size()));
  std::vector<int64_t> got(nodes.size());
  ASSERT_TRUE(r.RowsOf(0, static_cast<int64_t>(nodes.size()), got.data()).ok());
  std::map<int64_t, int64_t> node_of_row;
  for (size_t k = 0; k < nodes.size(); ++k) {
    ASSERT_EQ(got[k], row_of.at(nodes[k])) << nodes[k];
    node_of_row[got[k]] = static_cast<int64_t>(k);
  }
  for (int64_t row = -1; row <= static_cast<int64_t>(file_ids.size()); ++row) {
    auto node = r.NodeOf(row);
    ASSERT_TRUE(node.ok());
    ASSERT_EQ(*node, node_of_row.count(row) ? node_of_row.at(row) : -1) << row;
  }
  EXPECT_TRUE(r.CheckArrayRows("f.npy", 20000, "feature rows").ok());
  EXPECT_FALSE(r.CheckArrayRows("f.npy", 19999, "feature rows").ok());
  ASSERT_EQ(CountEntries(dir, ".seer-rows-", &runs), 1);
  EXPECT_EQ(runs, 0);  // merged runs are removed at once
  rows->reset();
  EXPECT_EQ(CountEntries(dir, ".seer-rows-", &runs), 0);  // and the directory with the NodeRows
}

// A join that fails (a node without a line) leaves nothing behind once destroyed.
TEST(NodeRowsTest, FailedJoinRemovesItsFiles) {
  const std::string dir = testing::MakeTempDir("node_rows");
  testing::WriteText(dir + "/ids.txt", "b\nd\n");
  {
    auto join = NodeRowJoin::Start(dir + "/ids.txt", 1 << 20, dir, false);
    ASSERT_TRUE(join.ok()) << join.status().ToString();
    ASSERT_TRUE((*join)->Match(IdSortKey("b"), 0).ok());
    Status missing = (*join)->Match(IdSortKey("c"), 1);
    EXPECT_EQ(missing.message(), dir + "/ids.txt: no line for node id 'c' of the edge list (--node-ids: every node "
                                       "needs the row of its features/labels)");
  }
  int runs = 0;
  EXPECT_EQ(CountEntries(dir, ".seer-rows-", &runs), 0);
}

// By id: original ids 5, 9, 12 are nodes 0..2; entries are original ids; the arrays need
// a row for id 12.
TEST(NodeRowsTest, ByIdSearchesTheOriginalIds) {
  const std::string dir = testing::MakeTempDir("node_rows");
  const std::vector<int64_t> ids = {5, 9, 12};
  testing::WriteText(dir + "/ids.bin", std::string(reinterpret_cast<const char*>(ids.data()), ids.size() * 8));
  auto rows = NodeRows::ById(dir + "/ids.bin", 3);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  for (int64_t id = 0; id < 14; ++id) {
    auto node = (*rows)->NodeOf(id);
    ASSERT_TRUE(node.ok());
    const auto at = std::find(ids.begin(), ids.end(), id);
    EXPECT_EQ(*node, at == ids.end() ? -1 : at - ids.begin()) << id;
  }
  EXPECT_EQ((*rows)->NotANode(7), "node id 7 does not occur in the edge list");
  EXPECT_TRUE((*rows)->CheckArrayRows("l.npy", 13, "labels").ok());
  Status short_array = (*rows)->CheckArrayRows("l.npy", 12, "labels");
  EXPECT_NE(short_array.message().find("l.npy: 12 labels, but the edge list has node id 12"), std::string::npos)
      << short_array.message();
}

}  // namespace
}  // namespace seer
