// NeighborCache and ComputeOutDegrees against brute-force oracles on hand-made graphs.
#include "cache/neighbor_cache.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/degrees.h"
#include "storage/base/file_io.h"
#include "support/graph_writer.h"
#include "support/test_support.h"

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
  int64_t left = budget - 16 * ((n + 63) / 64);  // bitmap + per-word ranks
  for (int64_t v : nodes) {
    const int64_t cost = 8 + static_cast<int64_t>(g.lists[v].size()) * index_bytes;  // offset + list
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
    const int64_t table = 16 * ((1201 + 63) / 64);
    EXPECT_EQ(table, NeighborCache::TableBytes(1201));
    int64_t with_lists = 0;
    for (const auto& l : g.lists) with_lists += l.empty() ? 0 : 8;
    const int64_t all = table + with_lists + g.dataset.manifest().num_edges * ib;
    for (int64_t budget : {table, table + 1, table + 8 + ib - 1, table + 8 + ib, table + 1001,
                           table + 4096, (table + all) / 2, all - 1, all, all + 12345}) {
      auto cache = NeighborCache::Build(g.dataset, g.indptr, budget);
      ASSERT_TRUE(cache.ok()) << cache.status().ToString();
      const NeighborCacheStats& s = cache->stats();
      EXPECT_LE(s.bytes, budget);
      EXPECT_EQ(s.bytes, table + 8 * s.nodes_cached + s.edges_cached * ib);
      EXPECT_EQ(s.table_bytes, table + 8 * s.nodes_cached);
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
  const int64_t budget = NeighborCache::TableBytes(999) + (8 * 999 + g.dataset.manifest().num_edges * 4) / 3;
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
  EXPECT_EQ(*on_disk_bytes, 8 * ((999 + 63) / 64) + 8 * built->stats().nodes_cached);  // bits + offsets

  // A version-1 cache (int64 offset per node, -1 = not cached) still loads, converted.
  {
    std::vector<int64_t> direct(999);
    for (int64_t v = 0; v < 999; ++v) direct[static_cast<size_t>(v)] = built->Find(v);
    FILE* f = std::fopen((dir + "/table.bin").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(direct.data(), 8, direct.size(), f), direct.size());
    std::fclose(f);
    auto text = testing::ReadFileBytes(dir + "/ncache.json");
    const std::string v2 = "\"version\": 2";
    const size_t at = text.find(v2);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, v2.size(), "\"version\": 1");
    f = std::fopen((dir + "/ncache.json").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), f), text.size());
    std::fclose(f);
    auto v1 = NeighborCache::Load(dir, g.dataset);
    ASSERT_TRUE(v1.ok()) << v1.status().ToString();
    for (int64_t v = 0; v < 999; ++v) ASSERT_EQ(v1->Find(v), built->Find(v)) << v;
    EXPECT_EQ(v1->stats().bytes, built->stats().bytes);
    ExpectListsMatch(*v1, g);
    // A table whose set bits disagree with the manifest is corrupt.
    direct[0] = direct[0] == -1 ? 0 : -1;
    f = std::fopen((dir + "/table.bin").c_str(), "wb");
    ASSERT_EQ(std::fwrite(direct.data(), 8, direct.size(), f), direct.size());
    std::fclose(f);
    EXPECT_EQ(NeighborCache::Load(dir, g.dataset).status().code(), StatusCode::kCorrupt);
    ASSERT_TRUE(built->Save(dir, true).ok());
  }

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
  auto small = NeighborCache::Build(g.dataset, g.indptr, NeighborCache::TableBytes(300) - 1);
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
}

TEST(NeighborCacheTest, PercentBudgets) {
  DatasetManifest m;
  m.num_nodes = 100;
  m.num_edges = 1000;
  m.index_dtype = IndexDtype::kUint32;
  EXPECT_EQ(*ParseNeighborCacheBudget("0", m), 0);
  EXPECT_EQ(*ParseNeighborCacheBudget("0%", m), 0);
  // The fixed table (32 B for 100 nodes) + a share of the lists and their 8 B offsets.
  EXPECT_EQ(*ParseNeighborCacheBudget("25%", m), 32 + (4000 + 800) / 4);
  EXPECT_EQ(*ParseNeighborCacheBudget("100%", m), 32 + 4000 + 800);
  EXPECT_EQ(*ParseNeighborCacheBudget("2K", m), 2048);
  EXPECT_FALSE(ParseNeighborCacheBudget("101%", m).ok());
  EXPECT_FALSE(ParseNeighborCacheBudget("x%", m).ok());
}

}  // namespace
}  // namespace seer
