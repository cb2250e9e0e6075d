// NeighborCache and ComputeOutDegrees against brute-force oracles on hand-made graphs.
#include "cache/neighbor_cache.h"

#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "cache/degrees.h"
#include "tests/inspector/test_graph.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;
using seer::testing::RandomLists;
using seer::testing::WriteGraph;

struct Graph {
  std::vector<std::vector<int64_t>> lists;
  Dataset dataset;
  std::vector<int64_t> indptr;
};

Graph MakeGraph(uint64_t seed, int64_t n, IndexDtype dtype) {
  auto lists = RandomLists(n, seed);
  const std::string dir = MakeTempDir("ncache");
  WriteGraph(dir, lists, {}, dtype);
  auto dataset = Dataset::Open(dir);
  EXPECT_TRUE(dataset.ok()) << dataset.status().ToString();
  auto indptr = dataset->LoadIndptr();
  EXPECT_TRUE(indptr.ok());
  return Graph{std::move(lists), std::move(*dataset), std::move(*indptr)};
}

TEST(DegreesTest, OutDegreesMatchBruteForce) {
  for (IndexDtype dtype : {IndexDtype::kUint32, IndexDtype::kInt64}) {
    Graph g = MakeGraph(31, 1777, dtype);
    std::vector<int64_t> want(1777, 0);
    for (const auto& l : g.lists) for (int64_t u : l) ++want[u];
    DegreeScanOptions small_chunks;
    small_chunks.chunk_bytes = 4104;  // not a power of two: entries still never straddle
    for (const DegreeScanOptions& o : {DegreeScanOptions{}, small_chunks}) {
      auto got = ComputeOutDegrees(g.dataset, o);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(*got, want);
    }
  }
}

// Oracle: rank by out/in as long double (ties: lower id), take the prefix that fits.
std::vector<int64_t> OracleSelection(const Graph& g, int64_t budget, int64_t index_bytes) {
  const int64_t n = static_cast<int64_t>(g.lists.size());
  std::vector<int64_t> out(n, 0);
  for (const auto& l : g.lists) for (int64_t u : l) ++out[u];
  std::vector<int64_t> nodes;
  for (int64_t v = 0; v < n; ++v) if (!g.lists[v].empty()) nodes.push_back(v);
  std::stable_sort(nodes.begin(), nodes.end(), [&](int64_t a, int64_t b) {
    const long double sa = static_cast<long double>(out[a]) / g.lists[a].size();
    const long double sb = static_cast<long double>(out[b]) / g.lists[b].size();
    return sa > sb;
  });
  std::vector<int64_t> chosen;
  int64_t left = budget - 8 * n;
  for (int64_t v : nodes) {
    const int64_t cost = static_cast<int64_t>(g.lists[v].size()) * index_bytes;
    if (cost > left) break;
    left -= cost;
    chosen.push_back(v);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

void ExpectListsMatch(const NeighborCache& cache, const Graph& g) {
  for (size_t v = 0; v < g.lists.size(); ++v) {
    const int64_t off = cache.Find(static_cast<int64_t>(v));
    if (off < 0) continue;
    for (size_t p = 0; p < g.lists[v].size(); ++p) {
      ASSERT_EQ(cache.NeighborAt(off, static_cast<int64_t>(p)), g.lists[v][p]) << "node " << v;
    }
  }
}

TEST(NeighborCacheTest, BudgetRespectedToTheByteAndSelectionMatchesOracle) {
  for (IndexDtype dtype : {IndexDtype::kUint32, IndexDtype::kInt64}) {
    const uint64_t seed = 8;
    std::printf("graph seed %llu\n", static_cast<unsigned long long>(seed));
    Graph g = MakeGraph(seed, 1201, dtype);
    const int64_t ib = IndexDtypeBytes(dtype);
    const int64_t table = 8 * 1201;
    const int64_t all = table + g.dataset.manifest().num_edges * ib;
    for (int64_t budget : {table, table + 1, table + ib - 1, table + ib, table + 1001,
                           table + 4096, (table + all) / 2, all - 1, all, all + 12345}) {
      auto cache = NeighborCache::Build(g.dataset, g.indptr, budget);
      ASSERT_TRUE(cache.ok()) << cache.status().ToString();
      const NeighborCacheStats& s = cache->stats();
      EXPECT_LE(s.bytes, budget);
      EXPECT_EQ(s.bytes, table + s.edges_cached * ib);
      const std::vector<int64_t> want = OracleSelection(g, budget, ib);
      std::vector<int64_t> got;
      for (int64_t v = 0; v < 1201; ++v) if (cache->Contains(v)) got.push_back(v);
      // Division is correctly rounded, so equal ratios compare equal in the oracle and
      // the stable sort keeps ties in id order, as the cache's rule says.
      EXPECT_EQ(static_cast<int64_t>(got.size()), s.nodes_cached);
      EXPECT_EQ(got, want) << "budget " << budget;
      ExpectListsMatch(*cache, g);
      ASSERT_TRUE(cache->Validate(g.indptr).ok());
      if (budget >= all) {
        EXPECT_EQ(s.edges_cached, g.dataset.manifest().num_edges);
      }
    }
  }
}

TEST(NeighborCacheTest, SaveLoadRoundTripEqualsOnDiskLists) {
  Graph g = MakeGraph(12, 999, IndexDtype::kUint32);
  const int64_t budget = 8 * 999 + g.dataset.manifest().num_edges * 4 / 3;
  auto built = NeighborCache::Build(g.dataset, g.indptr, budget);
  ASSERT_TRUE(built.ok());
  ASSERT_GT(built->stats().nodes_cached, 0);
  const std::string dir = NeighborCache::DefaultDir(g.dataset);
  ASSERT_TRUE(built->Save(dir, false).ok());
  EXPECT_EQ(built->Save(dir, false).code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(built->Save(dir, true).ok());
  auto loaded = NeighborCache::Load(dir, g.dataset);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->stats().bytes, built->stats().bytes);
  EXPECT_EQ(loaded->stats().nodes_cached, built->stats().nodes_cached);
  EXPECT_EQ(loaded->stats().edges_cached, built->stats().edges_cached);
  for (int64_t v = 0; v < 999; ++v) EXPECT_EQ(loaded->Find(v), built->Find(v));
  ExpectListsMatch(*loaded, g);
  EXPECT_TRUE(loaded->Validate(g.indptr).ok());
  auto on_disk_bytes = FileSizeBytes(dir + "/table.bin");
  ASSERT_TRUE(on_disk_bytes.ok());
  EXPECT_EQ(*on_disk_bytes, 8 * 999);

  // A cache built for another dataset is refused.
  Graph other = MakeGraph(13, 1000, IndexDtype::kUint32);
  auto wrong = NeighborCache::Load(dir, other.dataset);
  EXPECT_EQ(wrong.status().code(), StatusCode::kCorrupt);
}

TEST(NeighborCacheTest, ZeroDisablesAndTooSmallForTheTableIsAnError) {
  Graph g = MakeGraph(3, 300, IndexDtype::kUint32);
  auto off = NeighborCache::Build(g.dataset, g.indptr, 0);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->enabled());
  EXPECT_EQ(off->Find(5), -1);
  EXPECT_EQ(off->stats().bytes, 0);
  const std::string dir = MakeTempDir("ncache_off");
  ASSERT_TRUE(off->Save(dir, false).ok());
  auto loaded = NeighborCache::Load(dir, g.dataset);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(loaded->enabled());
  auto small = NeighborCache::Build(g.dataset, g.indptr, 8 * 300 - 1);
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
}

TEST(NeighborCacheTest, PercentBudgets) {
  DatasetManifest m;
  m.num_nodes = 100;
  m.num_edges = 1000;
  m.index_dtype = IndexDtype::kUint32;
  EXPECT_EQ(*ParseNeighborCacheBudget("0", m), 0);
  EXPECT_EQ(*ParseNeighborCacheBudget("0%", m), 0);
  EXPECT_EQ(*ParseNeighborCacheBudget("25%", m), 800 + 1000);
  EXPECT_EQ(*ParseNeighborCacheBudget("100%", m), 800 + 4000);
  EXPECT_EQ(*ParseNeighborCacheBudget("2K", m), 2048);
  EXPECT_FALSE(ParseNeighborCacheBudget("101%", m).ok());
  EXPECT_FALSE(ParseNeighborCacheBudget("x%", m).ok());
}

}  // namespace
}  // namespace seer
