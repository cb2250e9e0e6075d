// Per-relation neighbor caches of a typed training data path (executor/data_path.h,
// cache/neighbor_cache.h BuildForRelation): the split's neighbor-cache share is spread over
// the relations and never exceeded, the split records the caches in use, --ncache-budget 0
// gives none, and sampling over the cached topology gives byte-identical traces to the
// same sampler over the uncached topology (TypedTopology::Open), with neighbor-cache hits.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "executor/data_path.h"
#include "executor/memory_budget.h"
#include "inspector/superbatch_driver.h"
#include "inspector/trace_format.h"
#include "inspector/typed_topology.h"
#include "storage/prep/hetero_graph.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

// A small IGBH-like graph: 1500 papers, authors, institutes, fields of study, 8 relations.
std::string MakeHeteroGraph(const std::string& name) {
  const std::string dir = testing::MakeTempDir(name) + "/h";
  HeteroGraphConfig c;
  c.num_papers = 1500;
  c.num_classes = 4;
  c.feature_dim = 8;
  c.seed = 23;
  auto written = GenerateHeteroDataset(c, dir, /*force=*/false);
  EXPECT_TRUE(written.ok()) << written.status().ToString();
  return dir;
}

// What caching every relation's lists whole takes, from the manifest.
int64_t WholeTopologyBytes(const DatasetManifest& m) {
  int64_t bytes = 0;
  for (const DatasetRelation& rel : m.relations) {
    const DatasetNodeType* dst = m.FindNodeType(rel.dst);
    bytes += NeighborCache::TableBytes(dst->count) + 8 * dst->count + rel.num_edges * IndexDtypeBytes(rel.index_dtype);
  }
  return bytes;
}

std::unique_ptr<DataPath> OpenTyped(const std::string& dir, int64_t ncache_budget_bytes) {
  MemoryBudgetRequest request;
  request.budget_bytes = int64_t{64} << 20;
  request.batch_size = 64;
  request.fanouts = {4, 3};
  request.ncache_budget_bytes = ncache_budget_bytes;
  DataIoOptions io;
  io.direct = false;
  io.quiet = true;
  auto data = DataPath::Open(dir, request, io, /*pilot=*/nullptr);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return data.ok() ? std::move(data).value() : nullptr;
}

struct SampledEpoch {
  std::string bytes;  // SerializeTrace of each superbatch, concatenated
  SampleStats stats;  // summed
};

SampledEpoch SampleEpoch(const TopologyView& view, const std::vector<int64_t>& seeds) {
  SampledEpoch out;
  auto sampler = SuperbatchSampler::Create(view, seeds, MakeSuperbatchOptions(64, 4, 2, {4, 3}, 7, /*shuffle=*/true));
  EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
  if (!sampler.ok()) return out;
  for (int64_t k = 0; k < 3; ++k) {
    SuperbatchStats stats;
    auto trace = sampler->Sample(0, k, &stats);
    EXPECT_TRUE(trace.ok()) << trace.status().ToString();
    if (!trace.ok()) return out;
    out.bytes += SerializeTrace(*trace);
    out.stats.neighbor_lookups += stats.sample.neighbor_lookups;
    out.stats.ncache_hits += stats.sample.ncache_hits;
    out.stats.topology_requests += stats.sample.topology_requests;
  }
  return out;
}

TEST(TypedNeighborCacheTest, CachesPerRelationWithinTheShareAndNoneAtZero) {
  const std::string dir = MakeHeteroGraph("typed_ncache_share");
  auto ds = Dataset::OpenAnyKind(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  const int64_t whole = WholeTopologyBytes(ds->manifest());
  for (const int64_t share : {whole / 3, whole}) {
    auto data = OpenTyped(dir, share);
    ASSERT_NE(data, nullptr);
    const TypedTopology* topology = data->typed_topology();
    ASSERT_NE(topology, nullptr);
    EXPECT_GT(topology->ncache_bytes(), 0) << share;
    EXPECT_LE(topology->ncache_bytes(), share);
    EXPECT_EQ(data->split().ncache_bytes, topology->ncache_bytes());
    EXPECT_EQ(data->split().ncache_source, "built in memory, per relation");
    int64_t edges = 0, edges_cached = 0, relations_cached = 0;
    for (int32_t r = 0; r < topology->num_relations(); ++r) {
      const NeighborCache& ncache = topology->relation(r).ncache;
      edges += ds->manifest().relations[static_cast<size_t>(r)].num_edges;
      if (!ncache.enabled()) continue;
      ++relations_cached;
      edges_cached += ncache.stats().edges_cached;
    }
    if (share == whole) {
      EXPECT_EQ(edges_cached, edges);
      EXPECT_DOUBLE_EQ(data->split().ncache_edge_fraction, 1.0);
    } else {
      EXPECT_LT(edges_cached, edges);
      EXPECT_GE(relations_cached, 2) << "the share is spread over the relations";
    }
  }
  auto none = OpenTyped(dir, 0);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->typed_topology()->ncache_bytes(), 0);
  EXPECT_EQ(none->split().ncache_bytes, 0);
}

TEST(TypedNeighborCacheTest, CachedSamplingGivesTheUncachedTracesWithHits) {
  const std::string dir = MakeHeteroGraph("typed_ncache_traces");
  auto ds = Dataset::OpenAnyKind(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto data = OpenTyped(dir, WholeTopologyBytes(ds->manifest()) / 3);
  ASSERT_NE(data, nullptr);
  ASSERT_GT(data->typed_topology()->ncache_bytes(), 0);
  auto seeds = data->LoadSplit("train");
  ASSERT_TRUE(seeds.ok()) << seeds.status().ToString();
  DirectReaderOptions reader;
  reader.quiet = true;
  auto uncached = TypedTopology::Open(*ds, reader);
  ASSERT_TRUE(uncached.ok()) << uncached.status().ToString();
  ASSERT_EQ((*uncached)->ncache_bytes(), 0);

  const SampledEpoch with = SampleEpoch(data->topology_view(), *seeds);
  const SampledEpoch without = SampleEpoch((*uncached)->view(), *seeds);
  ASSERT_FALSE(without.bytes.empty());
  EXPECT_TRUE(with.bytes == without.bytes) << "traces differ (" << with.bytes.size() << " vs " << without.bytes.size()
                                           << " bytes)";
  EXPECT_EQ(with.stats.neighbor_lookups, without.stats.neighbor_lookups);
  EXPECT_GT(with.stats.ncache_hits, 0);
  EXPECT_EQ(without.stats.ncache_hits, 0);
  EXPECT_LT(with.stats.topology_requests, without.stats.topology_requests);
}

}  // namespace
}  // namespace seer
