// NeighborCache against a brute-force selection oracle on random graphs; its files
// (save, load, version 1, corrupt or mismatched manifests and tables).
#include "cache/neighbor_cache.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"
#include "storage/base/json_file.h"
#include "support/files.h"
#include "support/graph_writer.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;
using seer::testing::RandomGraph;
using seer::testing::WriteRandomGraph;

// Oracle: rank by out/in as long double (ties: lower id), take the prefix that fits.
std::vector<int64_t> OracleSelection(const RandomGraph& g, int64_t budget, int64_t index_bytes) {
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

void ExpectListsMatch(const NeighborCache& cache, const RandomGraph& g) {
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
    RandomGraph g = WriteRandomGraph(seed, 1201, dtype);
    const int64_t ib = IndexDtypeBytes(dtype);
    const int64_t table = 16 * ((1201 + 63) / 64);
    EXPECT_EQ(table, NeighborCache::TableBytes(1201));
    int64_t with_lists = 0;
    for (const auto& l : g.lists) with_lists += l.empty() ? 0 : 8;
    const int64_t all = table + with_lists + g.dataset.manifest().num_edges * ib;
    for (int64_t budget : {table, table + 1, table + 8 + ib - 1, table + 8 + ib, table + 1001,
                           table + 4096, (table + all) / 2, all - 1, all, all + 12345}) {
      NeighborCacheBuildOptions out_in;
      out_in.score = NeighborCacheScore::kOutInDegree;
      auto cache = NeighborCache::Build(g.dataset, g.indptr, budget, out_in);
      ASSERT_TRUE(cache.ok()) << cache.status().ToString();
      EXPECT_EQ(cache->score_rule(), "out_degree/in_degree");
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

// The streaming out/in build (no per-node array; out-degrees counted range by range) keeps
// the same prefix as the oracle, with ranges and read chunks far smaller than the graph.
TEST(NeighborCacheTest, StreamingOutInBuildMatchesOracleWithManyPassesAndSmallChunks) {
  for (IndexDtype dtype : {IndexDtype::kUint32, IndexDtype::kInt64}) {
    RandomGraph g = WriteRandomGraph(11, 1201, dtype);
    const int64_t ib = IndexDtypeBytes(dtype);
    const int64_t table = NeighborCache::TableBytes(1201);
    int64_t with_lists = 0;
    for (const auto& l : g.lists) with_lists += l.empty() ? 0 : 8;
    const int64_t all = table + with_lists + g.dataset.manifest().num_edges * ib;
    for (int64_t scan_memory : {int64_t{4} * 100, int64_t{4} * 1201, int64_t{1} << 20}) {
      for (int64_t budget : {table, table + 8 + ib, table + 1001, table + 4096, (table + all) / 2, all - 1, all}) {
        NeighborCacheBuildOptions options;
        options.score = NeighborCacheScore::kOutInDegree;
        options.scan_memory_bytes = scan_memory;
        options.chunk_bytes = 64;  // lists longer than a chunk are read in place
        auto cache = NeighborCache::BuildOutInStreaming(g.dataset, budget, options);
        ASSERT_TRUE(cache.ok()) << cache.status().ToString();
        const NeighborCacheStats& s = cache->stats();
        EXPECT_LE(s.bytes, budget);
        EXPECT_EQ(s.bytes, table + 8 * s.nodes_cached + s.edges_cached * ib);
        std::vector<int64_t> got;
        for (int64_t v = 0; v < 1201; ++v) if (cache->Contains(v)) got.push_back(v);
        EXPECT_EQ(got, OracleSelection(g, budget, ib)) << "budget " << budget << ", scan memory " << scan_memory;
        ExpectListsMatch(*cache, g);
        ASSERT_TRUE(cache->Validate(g.indptr).ok());
      }
    }
  }
}

// A node whose list alone exceeds what is left ends the prefix (nothing ranked after it).
TEST(NeighborCacheTest, StreamingOutInBuildStopsAtANodeTooBigForTheBudget) {
  RandomGraph g = WriteRandomGraph(3, 300, IndexDtype::kUint32);
  const int64_t table = NeighborCache::TableBytes(300);
  NeighborCacheBuildOptions options;
  options.score = NeighborCacheScore::kOutInDegree;
  options.scan_memory_bytes = 4 * 64;
  for (int64_t extra = 0; extra < 200; extra += 7) {
    auto cache = NeighborCache::BuildOutInStreaming(g.dataset, table + extra, options);
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    std::vector<int64_t> got;
    for (int64_t v = 0; v < 300; ++v) if (cache->Contains(v)) got.push_back(v);
    EXPECT_EQ(got, OracleSelection(g, table + extra, 4)) << "budget table + " << extra;
  }
}

// Oracle for ExpectedNeighborLookups: the same recurrence evaluated per node from the
// in-lists in RAM (long double, products instead of log sums).
std::vector<long double> OracleLookups(const std::vector<std::vector<int64_t>>& lists, const std::vector<int64_t>& seeds,
                                       const std::vector<int>& fanouts, int64_t batch_size) {
  const size_t n = lists.size();
  const long double num_seeds = seeds.empty() ? n : seeds.size();
  const long double p0 = std::min<long double>(1, batch_size / num_seeds);
  std::vector<long double> p(n, seeds.empty() ? p0 : 0);
  for (int64_t v : seeds) p[static_cast<size_t>(v)] = p0;
  std::vector<long double> total = p;
  for (size_t hop = 0; hop + 1 < fanouts.size(); ++hop) {
    std::vector<long double> miss(n, 1);
    for (size_t w = 0; w < n; ++w) {
      const long double deg = lists[w].size();
      const long double take = (fanouts[hop] < 0 || deg <= fanouts[hop]) ? 1 : fanouts[hop] / deg;
      for (int64_t u : lists[w]) miss[static_cast<size_t>(u)] *= 1 - p[w] * take;
    }
    for (size_t v = 0; v < n; ++v) {
      p[v] = 1 - (1 - p[v]) * miss[v];
      total[v] += p[v];
    }
  }
  for (size_t v = 0; v < n; ++v) {
    if (lists[v].empty()) total[v] = 0;
  }
  return total;
}

TEST(NeighborCacheTest, ExpectedLookupsMatchOracle) {
  const uint64_t seed = 21;
  std::printf("graph seed %llu\n", static_cast<unsigned long long>(seed));
  RandomGraph g = WriteRandomGraph(seed, 733, IndexDtype::kUint32);
  const std::vector<int64_t> seeds = {0, 5, 17, 99, 100, 101, 400, 732};
  NeighborCacheBuildOptions small_chunks;
  small_chunks.chunk_bytes = 64;  // many chunks: node boundaries inside and across them
  for (const std::vector<int>& fanouts : {std::vector<int>{3}, std::vector<int>{5, 2}, std::vector<int>{4, -1, 7}}) {
    for (const auto& s : {seeds, std::vector<int64_t>{}}) {
      auto got = ExpectedNeighborLookups(g.dataset, g.indptr, s, fanouts, 3, small_chunks);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      const std::vector<long double> want = OracleLookups(g.lists, s, fanouts, 3);
      for (size_t v = 0; v < want.size(); ++v) {
        ASSERT_NEAR((*got)[v], static_cast<double>(want[v]), 1e-9 * (1 + static_cast<double>(want[v])))
            << "node " << v << " layers " << fanouts.size() << " seeds " << s.size();
      }
    }
  }
  // A seed outside the graph is reported, not read out of bounds.
  EXPECT_EQ(ExpectedNeighborLookups(g.dataset, g.indptr, {733}, {2, 2}, 3).status().code(), StatusCode::kCorrupt);
}

TEST(NeighborCacheTest, LookupScoreSelectsTheOracleRankingPrefix) {
  RandomGraph g = WriteRandomGraph(5, 801, IndexDtype::kUint32);
  NeighborCacheBuildOptions options;  // the default score: expected lookups
  ASSERT_EQ(options.score, NeighborCacheScore::kExpectedLookups);
  options.batch_size = 50;  // < num_nodes, so the visit probabilities do not all saturate at 1
  const std::vector<long double> lookups = OracleLookups(g.lists, {}, options.fanouts, options.batch_size);
  std::vector<int64_t> ranked;
  for (int64_t v = 0; v < 801; ++v) if (!g.lists[v].empty()) ranked.push_back(v);
  auto score = [&](int64_t v) { return lookups[v] / (8 + 4 * static_cast<long double>(g.lists[v].size())); };
  std::stable_sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) { return score(a) > score(b); });
  const int64_t table = NeighborCache::TableBytes(801);
  for (int64_t lists_budget : {int64_t{0}, int64_t{100}, int64_t{2000}, int64_t{20000}}) {
    auto cache = NeighborCache::Build(g.dataset, g.indptr, table + lists_budget, options);
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    EXPECT_EQ(cache->score_rule(), "expected_lookups/bytes");
    std::vector<int64_t> want;
    int64_t left = lists_budget;
    for (int64_t v : ranked) {
      const int64_t cost = 8 + 4 * static_cast<int64_t>(g.lists[v].size());
      if (cost > left) break;
      left -= cost;
      want.push_back(v);
    }
    std::sort(want.begin(), want.end());
    std::vector<int64_t> got;
    for (int64_t v = 0; v < 801; ++v) if (cache->Contains(v)) got.push_back(v);
    EXPECT_EQ(got, want) << "lists budget " << lists_budget;
    ExpectListsMatch(*cache, g);
  }
  // The rule is saved and loaded with the cache.
  auto cache = NeighborCache::Build(g.dataset, g.indptr, table + 5000, options);
  ASSERT_TRUE(cache.ok());
  const std::string dir = NeighborCache::DefaultDir(g.dataset);
  ASSERT_TRUE(cache->Save(dir, true).ok());
  auto loaded = NeighborCache::Load(dir, g.dataset);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->score_rule(), "expected_lookups/bytes");
}

TEST(NeighborCacheTest, SaveLoadRoundTripEqualsOnDiskLists) {
  RandomGraph g = WriteRandomGraph(12, 999, IndexDtype::kUint32);
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
    auto direct_bytes = [&] {
      return std::string(reinterpret_cast<const char*>(direct.data()), 8 * direct.size());
    };
    ASSERT_TRUE(WriteFileAtomically(dir + "/table.bin", direct_bytes()).ok());
    auto text = testing::ReadFileBytes(dir + "/ncache.json");
    const std::string v2 = "\"version\": 2";
    const size_t at = text.find(v2);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, v2.size(), "\"version\": 1");
    ASSERT_TRUE(WriteFileAtomically(dir + "/ncache.json", text).ok());
    auto v1 = NeighborCache::Load(dir, g.dataset);
    ASSERT_TRUE(v1.ok()) << v1.status().ToString();
    for (int64_t v = 0; v < 999; ++v) ASSERT_EQ(v1->Find(v), built->Find(v)) << v;
    EXPECT_EQ(v1->stats().bytes, built->stats().bytes);
    ExpectListsMatch(*v1, g);
    // A table whose set bits disagree with the manifest is corrupt.
    direct[0] = direct[0] == -1 ? 0 : -1;
    ASSERT_TRUE(WriteFileAtomically(dir + "/table.bin", direct_bytes()).ok());
    EXPECT_EQ(NeighborCache::Load(dir, g.dataset).status().code(), StatusCode::kCorrupt);
    ASSERT_TRUE(built->Save(dir, true).ok());
  }

  // A cache built for another dataset is refused.
  RandomGraph other = WriteRandomGraph(13, 1000, IndexDtype::kUint32);
  auto wrong = NeighborCache::Load(dir, other.dataset);
  EXPECT_EQ(wrong.status().code(), StatusCode::kCorrupt);
}

// A wrongly typed or missing ncache.json field is refused with a message naming the file
// and the field, never read as a default (a "10" is not 10, and not 0 either).
TEST(NeighborCacheTest, ManifestFieldOfWrongTypeOrMissingIsRefused) {
  RandomGraph g = WriteRandomGraph(5, 300, IndexDtype::kUint32);
  auto built = NeighborCache::Build(g.dataset, g.indptr, NeighborCache::TableBytes(300) + 4000);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const std::string dir = MakeTempDir("ncache_json");
  ASSERT_TRUE(built->Save(dir, false).ok());
  const std::string path = dir + "/ncache.json";
  auto saved = ReadJsonFile(path);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  const std::vector<std::pair<std::string, Json>> edits = {
      {"edges_cached", "10"}, {"num_nodes", 300.0}, {"version", "2"},
      {"index_dtype", 4},     {"format", nullptr},   {"nodes_cached", Json::array()}};
  for (const auto& [field, value] : edits) {
    for (bool remove : {false, true}) {
      SCOPED_TRACE(field + (remove ? " removed" : " = " + value.dump()));
      Json edited = *saved;
      if (remove) {
        edited.erase(field);
      } else {
        edited[field] = value;
      }
      ASSERT_TRUE(WriteJsonFileAtomically(path, edited).ok());
      auto loaded = NeighborCache::Load(dir, g.dataset);
      ASSERT_FALSE(loaded.ok());
      EXPECT_EQ(loaded.status().code(), StatusCode::kCorrupt);
      const std::string& message = loaded.status().message();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_NE(message.find("'" + field + "'"), std::string::npos) << message;
    }
  }
  ASSERT_TRUE(WriteJsonFileAtomically(path, *saved).ok());
  EXPECT_TRUE(NeighborCache::Load(dir, g.dataset).ok());
}

// A copy of `g`'s dataset with two neighbor ids swapped (and the manifest's checksum
// updated): a valid dataset of exactly the same size but other content.
Dataset SameSizeOtherDataset(const RandomGraph& g) {
  const std::string dir = MakeTempDir("ncache_other");
  std::vector<std::string> names = {"dataset.json"};
  for (const auto& [name, entry] : g.dataset.manifest().files) names.push_back(name);
  for (const std::string& name : names) {
    const std::string bytes = testing::ReadFileBytes(g.dataset.PathOf(name));
    EXPECT_TRUE(WriteFileAtomically(dir + "/" + name, bytes).ok());
  }
  std::vector<uint32_t> indices = testing::ReadArray<uint32_t>(dir + "/indices.bin");
  size_t i = 1;
  while (i < indices.size() && indices[i] == indices[0]) ++i;
  EXPECT_LT(i, indices.size());
  std::swap(indices[0], indices[i]);
  EXPECT_TRUE(WriteFileAtomically(dir + "/indices.bin",
                                  std::string(reinterpret_cast<const char*>(indices.data()), indices.size() * 4))
                  .ok());
  auto manifest = ReadJsonFile(dir + "/dataset.json");
  EXPECT_TRUE(manifest.ok());
  (*manifest)["files"]["indices.bin"]["xxh64"] = *FileXxh64(dir + "/indices.bin");
  EXPECT_TRUE(WriteJsonFileAtomically(dir + "/dataset.json", *manifest).ok());
  auto ds = Dataset::Open(dir);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return std::move(ds).value();
}

// A cache copied from another dataset of the same size was used silently before (only
// num_nodes / num_edges / index dtype were compared); now its recorded dataset identity
// is compared and both identities are named.
TEST(NeighborCacheTest, CacheOfAnotherDatasetOfTheSameSizeIsRefused) {
  RandomGraph g = WriteRandomGraph(21, 700, IndexDtype::kUint32);
  auto built = NeighborCache::Build(g.dataset, g.indptr, NeighborCache::TableBytes(700) + 6000);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(built->dataset_identity(), g.dataset.manifest().Identity());
  EXPECT_EQ(built->ranked_fanouts(), (std::vector<int>{10, 10, 10}));
  const std::string dir = MakeTempDir("ncache_copy");
  ASSERT_TRUE(built->Save(dir, false).ok());
  Dataset other = SameSizeOtherDataset(g);
  ASSERT_EQ(other.manifest().num_edges, g.dataset.manifest().num_edges);
  ASSERT_NE(other.manifest().Identity(), g.dataset.manifest().Identity());
  auto loaded = NeighborCache::Load(dir, other);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kCorrupt);
  const std::string& message = loaded.status().message();
  EXPECT_NE(message.find(g.dataset.manifest().Identity()), std::string::npos) << message;
  EXPECT_NE(message.find(other.manifest().Identity()), std::string::npos) << message;
  auto same = NeighborCache::Load(dir, g.dataset);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->ranked_fanouts(), (std::vector<int>{10, 10, 10}));
  EXPECT_EQ(same->ranked_batch_size(), 1000);
}

// An in-range change of one neighbor id in lists.bin (or of a table offset) was used
// silently before; the recorded checksums name the changed file.
TEST(NeighborCacheTest, ChangedNeighborIdOrTableIsRefusedByChecksum) {
  RandomGraph g = WriteRandomGraph(22, 500, IndexDtype::kUint32);
  auto built = NeighborCache::Build(g.dataset, g.indptr, NeighborCache::TableBytes(500) + 8000);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_GT(built->stats().edges_cached, 1);
  const std::string dir = MakeTempDir("ncache_flip");
  ASSERT_TRUE(built->Save(dir, false).ok());
  const std::string lists_path = dir + "/lists.bin";
  std::vector<uint32_t> lists = testing::ReadArray<uint32_t>(lists_path);
  const std::vector<uint32_t> original = lists;
  lists[1] = lists[1] == 0 ? 1 : lists[1] - 1;  // still a valid node id
  ASSERT_TRUE(WriteFileAtomically(lists_path, std::string(reinterpret_cast<const char*>(lists.data()), lists.size() * 4))
                  .ok());
  auto loaded = NeighborCache::Load(dir, g.dataset);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(lists_path + ": xxh64 "), std::string::npos) << loaded.status().message();
  ASSERT_TRUE(WriteFileAtomically(lists_path, std::string(reinterpret_cast<const char*>(original.data()),
                                                          original.size() * 4))
                  .ok());
  ASSERT_TRUE(NeighborCache::Load(dir, g.dataset).ok());
  // An old cache (no identity, no checksums) still loads with the size checks only.
  auto json = ReadJsonFile(dir + "/ncache.json");
  ASSERT_TRUE(json.ok());
  for (const char* field : {"dataset_identity", "table_xxh64", "lists_xxh64", "fanouts", "batch_size"}) {
    json->erase(field);
  }
  ASSERT_TRUE(WriteJsonFileAtomically(dir + "/ncache.json", *json).ok());
  auto old = NeighborCache::Load(dir, g.dataset);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->dataset_identity(), "");
}

TEST(NeighborCacheTest, ZeroDisablesAndTooSmallForTheTableIsAnError) {
  RandomGraph g = WriteRandomGraph(3, 300, IndexDtype::kUint32);
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
  EXPECT_EQ(*ParseNeighborCacheBudget("12.5%", m), 32 + (4000 + 800) / 8);
  // The whole text must be the number (strict parsing, storage/base/parse_number.h).
  for (const char* bad : {"%", " 5%", "5 %", "5x%", "-1%", "nan%"}) {
    auto got = ParseNeighborCacheBudget(bad, m);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(got.status().message().find(std::string("'") + bad + "'"), std::string::npos) << got.status().ToString();
  }
}

}  // namespace
}  // namespace seer
