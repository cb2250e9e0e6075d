// NeighborCache::BuildForRelation and TypedOutDegrees (cache/neighbor_cache.h) on a
// generated typed graph: each relation's cache holds exactly the relation's lists for the
// nodes it caches (oracle: the relation's indptr and indices files read whole), keeps its
// budget, caches every list when the budget is the whole relation, ranks shortest lists
// first without out-degrees, and counts out-degrees as a brute-force loop over every
// relation's indices does.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/neighbor_cache.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"
#include "storage/prep/hetero_graph.h"
#include "support/files.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

// An IGBH-like graph of 700 papers: 8 relations, four of them with differing node counts.
Dataset MakeTypedGraph(const std::string& name) {
  const std::string dir = testing::MakeTempDir(name) + "/h";
  HeteroGraphConfig c;
  c.num_papers = 700;
  c.num_classes = 3;
  c.feature_dim = 4;
  c.seed = 17;
  auto written = GenerateHeteroDataset(c, dir, /*force=*/false);
  EXPECT_TRUE(written.ok()) << written.status().ToString();
  auto ds = Dataset::OpenAnyKind(dir);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return std::move(ds).value();
}

const DatasetNodeType& TypeNamed(const DatasetManifest& m, const std::string& name) {
  return *std::find_if(m.node_types.begin(), m.node_types.end(), [&](const DatasetNodeType& t) { return t.name == name; });
}

int64_t TypeOffset(const DatasetManifest& m, const std::string& name) {
  int64_t offset = 0;
  for (const DatasetNodeType& t : m.node_types) {
    if (t.name == name) return offset;
    offset += t.count;
  }
  return -1;
}

// A relation's files read whole (uint32 ids: what seer gen --hetero writes at this size).
struct RelationFiles {
  std::vector<int64_t> indptr;
  std::vector<uint32_t> indices;
};

RelationFiles ReadRelation(const Dataset& ds, const DatasetRelation& rel) {
  EXPECT_EQ(rel.index_dtype, IndexDtype::kUint32);
  return RelationFiles{testing::ReadArray<int64_t>(ds.PathOf(rel.indptr)),
                       testing::ReadArray<uint32_t>(ds.PathOf(rel.indices))};
}

CompactIndptr LoadIndptr(const Dataset& ds, const DatasetRelation& rel) {
  const int64_t count_dst = TypeNamed(ds.manifest(), rel.dst).count;
  auto indptr = CompactIndptr::LoadFile(ds.PathOf(rel.indptr), count_dst + 1, rel.num_edges);
  EXPECT_TRUE(indptr.ok()) << indptr.status().ToString();
  return std::move(indptr).value();
}

// Every cached list equals the file's; returns the cached nodes.
std::vector<int64_t> CheckCachedLists(const NeighborCache& cache, const RelationFiles& files, const std::string& key) {
  std::vector<int64_t> cached;
  int64_t edges = 0;
  for (int64_t v = 0; v + 1 < static_cast<int64_t>(files.indptr.size()); ++v) {
    const int64_t off = cache.Find(v);
    if (off < 0) continue;
    cached.push_back(v);
    for (int64_t e = files.indptr[v]; e < files.indptr[v + 1]; ++e) {
      EXPECT_EQ(cache.NeighborAt(off, e - files.indptr[v]), static_cast<int64_t>(files.indices[e]))
          << key << " node " << v << " position " << e - files.indptr[v];
      ++edges;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(cached.size()), cache.stats().nodes_cached) << key;
  EXPECT_EQ(edges, cache.stats().edges_cached) << key;
  return cached;
}

TEST(RelationNeighborCacheTest, TypedOutDegreesCountEveryRelationsSources) {
  Dataset ds = MakeTypedGraph("rel_ncache_out");
  const DatasetManifest& m = ds.manifest();
  std::vector<int64_t> oracle(static_cast<size_t>(m.num_nodes), 0);
  for (const DatasetRelation& rel : m.relations) {
    const int64_t offset = TypeOffset(m, rel.src);
    for (uint32_t u : ReadRelation(ds, rel).indices) ++oracle[static_cast<size_t>(offset + u)];
  }
  auto degrees = TypedOutDegrees(ds);
  ASSERT_TRUE(degrees.ok()) << degrees.status().ToString();
  EXPECT_EQ(*degrees, oracle);
}

TEST(RelationNeighborCacheTest, HoldsExactlyTheRelationsListsWithinItsBudget) {
  Dataset ds = MakeTypedGraph("rel_ncache_lists");
  const DatasetManifest& m = ds.manifest();
  auto out_degrees = TypedOutDegrees(ds);
  ASSERT_TRUE(out_degrees.ok()) << out_degrees.status().ToString();
  ASSERT_EQ(m.relations.size(), 8u);
  for (size_t r = 0; r < m.relations.size(); ++r) {
    const DatasetRelation& rel = m.relations[r];
    const RelationFiles files = ReadRelation(ds, rel);
    const CompactIndptr indptr = LoadIndptr(ds, rel);
    const int64_t count_dst = static_cast<int64_t>(files.indptr.size()) - 1;
    const int64_t table = NeighborCache::TableBytes(count_dst);
    const int64_t whole = table + 8 * count_dst + 4 * rel.num_edges;
    for (const int64_t budget : {table, table + 301, table + (whole - table) / 3, whole}) {
      for (const bool by_out_in : {true, false}) {
        const std::string key = rel.key() + " budget " + std::to_string(budget) + (by_out_in ? " out/in" : " shortest");
        auto cache = NeighborCache::BuildForRelation(ds, r, indptr, by_out_in ? *out_degrees : std::vector<int64_t>{},
                                                     budget);
        ASSERT_TRUE(cache.ok()) << key << ": " << cache.status().ToString();
        EXPECT_TRUE(cache->enabled()) << key;
        EXPECT_LE(cache->stats().bytes, budget) << key;
        EXPECT_EQ(cache->stats().num_nodes, count_dst) << key;
        EXPECT_EQ(cache->stats().num_edges, rel.num_edges) << key;
        EXPECT_EQ(cache->score_rule(), by_out_in ? "out_degree/in_degree" : "in_degree") << key;
        const std::vector<int64_t> cached = CheckCachedLists(*cache, files, key);
        if (budget == whole) {
          EXPECT_EQ(cache->stats().edges_cached, rel.num_edges) << key;
          EXPECT_EQ(cached.size(), static_cast<size_t>(std::count_if(
                                       files.indptr.begin() + 1, files.indptr.end(),
                                       [&, v = int64_t{0}](int64_t end) mutable { return end > files.indptr[v++]; })))
              << key;
        }
        if (!by_out_in) {
          // Shortest first: no uncached non-empty list is shorter than a cached one.
          int64_t longest_cached = 0, shortest_left = INT64_MAX;
          for (int64_t v = 0; v < count_dst; ++v) {
            const int64_t degree = files.indptr[v + 1] - files.indptr[v];
            if (cache->Contains(v)) longest_cached = std::max(longest_cached, degree);
            if (!cache->Contains(v) && degree > 0) shortest_left = std::min(shortest_left, degree);
          }
          EXPECT_LE(longest_cached, shortest_left) << key;
        }
      }
    }
  }
}

TEST(RelationNeighborCacheTest, ZeroBudgetIsDisabledAndATooSmallOneIsRefused) {
  Dataset ds = MakeTypedGraph("rel_ncache_small");
  const DatasetRelation& rel = ds.manifest().relations[0];
  const CompactIndptr indptr = LoadIndptr(ds, rel);
  auto none = NeighborCache::BuildForRelation(ds, 0, indptr, {}, 0);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->enabled());
  const int64_t table = NeighborCache::TableBytes(static_cast<int64_t>(indptr.size()) - 1);
  auto small = NeighborCache::BuildForRelation(ds, 0, indptr, {}, table - 1);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THROW((void)NeighborCache::BuildForRelation(ds, ds.manifest().relations.size(), indptr, {}, table),
               std::invalid_argument);
}

TEST(RelationNeighborCacheTest, SourceIdBeyondTheSourceTypeIsCorruptNamingTheFile) {
  Dataset ds = MakeTypedGraph("rel_ncache_bad");
  const DatasetManifest& m = ds.manifest();
  // A relation whose source type is smaller than its destination type (institute -> author),
  // so an id valid as a destination id is still out of the source type's range.
  size_t r = 0;
  while (r < m.relations.size() && m.relations[r].src != "institute") ++r;
  ASSERT_LT(r, m.relations.size());
  const DatasetRelation& rel = m.relations[r];
  const CompactIndptr indptr = LoadIndptr(ds, rel);
  ASSERT_GT(rel.num_edges, 0);
  const uint32_t bad = static_cast<uint32_t>(TypeNamed(m, rel.src).count);
  std::FILE* f = std::fopen(ds.PathOf(rel.indices).c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fseek(f, 4 * (rel.num_edges - 1), SEEK_SET), 0);
  ASSERT_EQ(std::fwrite(&bad, 4, 1, f), 1u);
  ASSERT_EQ(std::fclose(f), 0);
  const int64_t count_dst = static_cast<int64_t>(indptr.size()) - 1;
  const int64_t whole = NeighborCache::TableBytes(count_dst) + 8 * count_dst + 4 * rel.num_edges;
  auto cache = NeighborCache::BuildForRelation(ds, r, indptr, {}, whole);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(cache.status().message().find(ds.PathOf(rel.indices)), std::string::npos) << cache.status().ToString();
}

}  // namespace
}  // namespace seer
