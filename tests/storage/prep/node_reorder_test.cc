// seer reorder (storage/prep/node_reorder.h) and the node-order mapping
// (storage/dataset/node_order.h). Oracles: the graph as adjacency sets read back with plain
// file reads, an independent breadth-first search and a degree sort written here.
#include "storage/prep/node_reorder.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/dataset/dataset_check.h"
#include "storage/dataset/node_order.h"
#include "storage/prep/dataset_prep.h"
#include "storage/prep/synthetic_graph.h"
#include "support/small_dataset.h"
#include "support/test_support.h"
#include "text_fixtures.h"

namespace seer {
namespace {

using testing::ReadArray;
using testing::ReadFileBytes;

struct Graph {  // a dataset read back with plain reads
  std::vector<int64_t> indptr;
  std::vector<uint32_t> indices;
  std::string features;
  int64_t row_bytes = 0;
  std::vector<int32_t> labels;
  std::vector<int64_t> splits[3];
  std::vector<std::set<int64_t>> in_lists;
};

Graph ReadGraph(const std::string& dir) {
  Graph g;
  auto ds = Dataset::Open(dir);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  g.indptr = ReadArray<int64_t>(dir + "/indptr.bin");
  g.indices = ReadArray<uint32_t>(dir + "/indices.bin");
  g.features = ReadFileBytes(dir + "/features.bin");
  g.row_bytes = ds->manifest().feature_row_bytes();
  g.labels = ReadArray<int32_t>(dir + "/labels.bin");
  const char* names[3] = {"train", "valid", "test"};
  for (int s = 0; s < 3; ++s) g.splits[s] = *ds->LoadSplit(names[s]);
  g.in_lists.resize(g.indptr.size() - 1);
  for (size_t v = 0; v + 1 < g.indptr.size(); ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) g.in_lists[v].insert(g.indices[static_cast<size_t>(e)]);
  }
  return g;
}

// Every file of `after` is `before` renumbered by order (new k = old order[k]).
void ExpectRenumbered(const Graph& before, const Graph& after, const std::vector<int64_t>& order) {
  const size_t n = order.size();
  std::vector<int64_t> new_of_old(n);
  for (size_t k = 0; k < n; ++k) new_of_old[static_cast<size_t>(order[k])] = static_cast<int64_t>(k);
  ASSERT_EQ(after.in_lists.size(), n);
  for (size_t k = 0; k < n; ++k) {
    const size_t v = static_cast<size_t>(order[k]);
    std::set<int64_t> want;
    for (int64_t u : before.in_lists[v]) want.insert(new_of_old[static_cast<size_t>(u)]);
    ASSERT_EQ(after.in_lists[k], want) << "node " << k << " (old " << v << ")";
    ASSERT_EQ(after.indptr[k + 1] - after.indptr[k], before.indptr[v + 1] - before.indptr[v]);
    ASSERT_EQ(after.labels[k], before.labels[v]);
    ASSERT_EQ(0, std::memcmp(after.features.data() + k * after.row_bytes, before.features.data() + v * before.row_bytes,
                             static_cast<size_t>(before.row_bytes)))
        << "feature row " << k;
  }
  for (int s = 0; s < 3; ++s) {
    ASSERT_EQ(after.splits[s].size(), before.splits[s].size());
    for (size_t i = 0; i < before.splits[s].size(); ++i) {
      EXPECT_EQ(after.splits[s][i], new_of_old[static_cast<size_t>(before.splits[s][i])]);
    }
  }
}

std::vector<int64_t> BfsOracle(const Graph& g) {
  const size_t n = g.in_lists.size();
  std::vector<bool> seen(n, false);
  std::vector<int64_t> order;
  for (size_t root = 0; root < n; ++root) {
    if (seen[root]) continue;
    std::deque<size_t> queue{root};
    seen[root] = true;
    while (!queue.empty()) {
      const size_t v = queue.front();
      queue.pop_front();
      order.push_back(static_cast<int64_t>(v));
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {  // in the list's file order
        const size_t u = g.indices[static_cast<size_t>(e)];
        if (!seen[u]) {
          seen[u] = true;
          queue.push_back(u);
        }
      }
    }
  }
  return order;
}

std::vector<int64_t> DegreeOracle(const Graph& g) {
  std::vector<int64_t> out_degree(g.in_lists.size(), 0);
  for (uint32_t u : g.indices) ++out_degree[u];
  std::vector<int64_t> order(g.in_lists.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return out_degree[a] != out_degree[b] ? out_degree[a] > out_degree[b] : a < b;
  });
  return order;
}

TEST(NodeReorderTest, RenumbersEveryFileConsistently) {
  for (NodeOrderMethod method : {NodeOrderMethod::kBfs, NodeOrderMethod::kDegree}) {
    SCOPED_TRACE(NodeOrderMethodName(method));
    const std::string in = testing::MakeSmallDataset("NodeReorder");
    const std::string out = testing::MakeTempDir("NodeReorderOut") + "/ds";
    const Graph before = ReadGraph(in);
    ReorderOptions options;
    options.method = method;
    options.show_progress = false;
    auto summary = ReorderDataset(in, out, options);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    const Graph after = ReadGraph(out);
    const std::vector<int64_t> order = ReadArray<int64_t>(out + "/node_order.bin");
    EXPECT_EQ(order, method == NodeOrderMethod::kBfs ? BfsOracle(before) : DegreeOracle(before));
    ExpectRenumbered(before, after, order);
    auto checked = CheckDataset(out, DatasetCheckOptions{true});
    ASSERT_TRUE(checked.ok()) << checked.status().ToString();
    EXPECT_EQ(checked->manifest.node_order, "node_order.bin");
    EXPECT_EQ(checked->manifest.node_order_method, NodeOrderMethodName(method));
    // Original ids: node k was node order[k] (no node_ids.txt: the id is that number).
    auto ds = Dataset::Open(out);
    auto ids = OriginalIds::Load(*ds);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    for (int64_t k : {int64_t{0}, int64_t{5}, testing::kSmallDatasetNodes - 1}) {
      EXPECT_EQ(ids->IdOf(k), std::to_string(order[static_cast<size_t>(k)]));
      EXPECT_EQ(ids->NodeOf(std::to_string(order[static_cast<size_t>(k)])), k);
    }
    EXPECT_EQ(ids->NodeOf(std::to_string(testing::kSmallDatasetNodes)), -1);
    EXPECT_EQ(ids->NodeOf("007"), -1);
  }
}

// --memory-budget: the bounded-memory pass (external sorts, streamed passes) writes the
// same dataset as the in-memory pass, byte for byte, for both orders — on a graph whose
// edges need ~150 sorted runs per sort and whose degrees are counted over two node ranges
// at the smallest budget, and again over a reordered dataset (composed node_order.bin,
// in place with force). Oracle: the in-memory pass (itself checked against the oracles
// above).
TEST(NodeReorderTest, BoundedMemoryWritesTheSameDataset) {
  const std::string dir = testing::MakeTempDir("NodeReorderBounded");
  SyntheticGraphConfig c = testing::SmallGraphConfig(40000, /*avg_degree=*/6, /*feature_dim=*/3, /*num_classes=*/4);
  ASSERT_TRUE(GenerateSyntheticDataset(c, dir + "/in", false).ok());
  const char* files[] = {"indptr.bin", "indices.bin", "features.bin", "labels.bin", "train.bin",
                         "valid.bin",  "test.bin",    "node_order.bin", "dataset.json"};
  auto expect_same = [&](const std::string& a, const std::string& b) {
    for (const char* f : files) EXPECT_TRUE(ReadFileBytes(a + "/" + f) == ReadFileBytes(b + "/" + f)) << f;
  };
  for (NodeOrderMethod method : {NodeOrderMethod::kBfs, NodeOrderMethod::kDegree}) {
    SCOPED_TRACE(NodeOrderMethodName(method));
    const std::string name = NodeOrderMethodName(method);
    ReorderOptions options;
    options.method = method;
    options.show_progress = false;
    auto memory = ReorderDataset(dir + "/in", dir + "/mem-" + name, options);
    ASSERT_TRUE(memory.ok()) << memory.status().ToString();
    options.memory_budget_bytes = 1;  // raised to the smallest budget, 128 KiB
    auto bounded = ReorderDataset(dir + "/in", dir + "/ext-" + name, options);
    ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
    expect_same(dir + "/mem-" + name, dir + "/ext-" + name);
    EXPECT_DOUBLE_EQ(bounded->blocks_per_list_before, memory->blocks_per_list_before);
    EXPECT_DOUBLE_EQ(bounded->blocks_per_list_after, memory->blocks_per_list_after);
    // Once more over each result, in place: the orders compose.
    options.force = true;
    options.method = method == NodeOrderMethod::kBfs ? NodeOrderMethod::kDegree : NodeOrderMethod::kBfs;
    ASSERT_TRUE(ReorderDataset(dir + "/ext-" + name, dir + "/ext-" + name, options).ok());
    options.memory_budget_bytes = 0;
    ASSERT_TRUE(ReorderDataset(dir + "/mem-" + name, dir + "/mem-" + name, options).ok());
    expect_same(dir + "/mem-" + name, dir + "/ext-" + name);
    ASSERT_TRUE(CheckDataset(dir + "/ext-" + name, DatasetCheckOptions{true}).ok());
    // No scratch left beside the output.
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      EXPECT_EQ(entry.path().filename().string().rfind(".seer-", 0), std::string::npos) << entry.path();
    }
  }
}

// A second reorder composes: node_order.bin maps to the numbering the data was written
// with, and over the input with force the dataset is replaced only at the end.
TEST(NodeReorderTest, SecondReorderComposesInPlace) {
  const std::string in = testing::MakeSmallDataset("NodeReorderTwice");
  const Graph original = ReadGraph(in);
  ReorderOptions options;
  options.show_progress = false;
  options.method = NodeOrderMethod::kDegree;
  const std::string once = testing::MakeTempDir("NodeReorderOnce") + "/ds";
  ASSERT_TRUE(ReorderDataset(in, once, options).ok());
  options.method = NodeOrderMethod::kBfs;
  auto refused = ReorderDataset(once, once, options);  // no force: an existing dataset is kept
  ASSERT_FALSE(refused.ok());
  options.force = true;
  auto twice = ReorderDataset(once, once, options);
  ASSERT_TRUE(twice.ok()) << twice.status().ToString();
  const std::vector<int64_t> total = ReadArray<int64_t>(once + "/node_order.bin");
  ExpectRenumbered(original, ReadGraph(once), total);
  auto ds = Dataset::Open(once);
  EXPECT_EQ(ds->manifest().node_order_method, "degree+bfs");
  ASSERT_TRUE(CheckDataset(once, DatasetCheckOptions{true}).ok());
}

// String ids (prep --remap-ids): node_ids.txt stays sorted for lookups, node_order.bin
// points into it, and OriginalIds answers both ways.
TEST(NodeReorderTest, KeepsOriginalStringIds) {
  const std::string dir = testing::MakeTempDir("NodeReorderIds");
  testing::WriteText(dir + "/e.csv", "from,to\nbob,alice\nzed,bob\ncarol,zed\nalice,carol\nbob,carol\n");
  PrepInputs prep;
  prep.edges = dir + "/e.csv";
  prep.columns = TextColumns{"from", "to"};
  prep.remap_ids = true;
  ASSERT_TRUE(PrepareDataset(prep, PrepOptions{}, dir + "/ds").ok());
  ReorderOptions options;
  options.show_progress = false;
  options.method = NodeOrderMethod::kDegree;
  ASSERT_TRUE(ReorderDataset(dir + "/ds", dir + "/re", options).ok());
  EXPECT_EQ(ReadFileBytes(dir + "/re/node_ids.txt"), "alice\nbob\ncarol\nzed\n");
  auto ds = Dataset::Open(dir + "/re");
  auto ids = OriginalIds::Load(*ds);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  // Out-degrees: alice 1, bob 2, carol 1, zed 1 -> bob first, then alice, carol, zed.
  EXPECT_EQ(ids->IdOf(0), "bob");
  EXPECT_EQ(ids->IdOf(1), "alice");
  EXPECT_EQ(ids->IdOf(3), "zed");
  for (const char* id : {"alice", "bob", "carol", "zed"}) EXPECT_EQ(ids->IdOf(ids->NodeOf(id)), id);
  EXPECT_EQ(ids->NodeOf("dave"), -1);
  // bob's in-list was {zed}; zed is now node 3.
  const Graph g = ReadGraph(dir + "/re");
  EXPECT_EQ(g.in_lists[0], (std::set<int64_t>{3}));
}

TEST(NodeReorderTest, CheckRefusesANodeOrderThatIsNotAPermutation) {
  const std::string in = testing::MakeSmallDataset("NodeReorderBad");
  const std::string out = testing::MakeTempDir("NodeReorderBadOut") + "/ds";
  ReorderOptions options;
  options.show_progress = false;
  ASSERT_TRUE(ReorderDataset(in, out, options).ok());
  const std::string path = out + "/node_order.bin";
  const int64_t first = testing::Peek<int64_t>(path, 0);
  testing::Poke<int64_t>(path, 7, first);
  Status st = CheckNodeOrderFile(path, testing::kSmallDatasetNodes);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node_order.bin: entry 7 (byte 56) repeats " + std::to_string(first)), std::string::npos)
      << st.message();
  testing::Poke<int64_t>(path, 7, testing::kSmallDatasetNodes);
  st = CheckNodeOrderFile(path, testing::kSmallDatasetNodes);
  EXPECT_NE(st.message().find("entry 7 (byte 56) is 1237, outside [0, 1237)"), std::string::npos) << st.message();
}

// The locality measure: with 13 float32 features (52 B rows), a list of 3 neighbors
// numbered 0, 1, 2 spans one block; numbered far apart, three.
TEST(NodeReorderTest, BfsPacksNeighborListsIntoFewerBlocks) {
  const std::string in = testing::MakeSmallDataset("NodeReorderBlocks");
  ReorderOptions options;
  options.show_progress = false;
  auto summary = ReorderDataset(in, testing::MakeTempDir("NodeReorderBlocksOut") + "/ds", options);
  ASSERT_TRUE(summary.ok());
  EXPECT_GT(summary->blocks_per_list_before, 1.0);
  EXPECT_LT(summary->blocks_per_list_after, summary->blocks_per_list_before);
}

}  // namespace
}  // namespace seer
