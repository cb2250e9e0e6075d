// Typed (heterogeneous) sampling: NeighborSampler and SuperbatchSampler over a
// TypedTopology (inspector/typed_topology.h), checked against an independent oracle —
// plain per-relation CSC arrays — for every sampled edge: its relation joins the right
// types, its source is in that relation's list of the destination, the fan-out of each
// relation is honoured (all of the list, in order, with -1); plus determinism across seeds,
// threads and neighbor caches, the .sbt round trip of LayerBlock::edge_rel and its damaged
// forms, the per-relation fan-out parser, and a generated typed dataset read from disk.
#include "inspector/typed_topology.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "inspector/link_batch.h"
#include "inspector/superbatch_driver.h"
#include "inspector/trace_format.h"
#include "inspector/trace_stream.h"
#include "storage/base/aligned_buffer.h"
#include "storage/prep/hetero_graph.h"
#include "opened_graph.h"
#include "support/test_support.h"

namespace seer {
namespace {

// A whole file's bytes in RAM behind the BlockReader seam.
class MemoryReader : public BlockReader {
 public:
  MemoryReader(std::string path, std::string bytes) : path_(std::move(path)), bytes_(std::move(bytes)) {}
  Status ReadBatch(const ReadRequest* requests, size_t count, ReadStats* stats) override {
    for (size_t i = 0; i < count; ++i) {
      if (requests[i].offset_bytes < 0 ||
          requests[i].offset_bytes + requests[i].length_bytes > static_cast<int64_t>(bytes_.size())) {
        return Corrupt(path_ + ": read past the end");
      }
      std::memcpy(requests[i].dest, bytes_.data() + requests[i].offset_bytes,
                  static_cast<size_t>(requests[i].length_bytes));
    }
    if (stats != nullptr) {
      stats->requests += static_cast<int64_t>(count);
      stats->device_reads += static_cast<int64_t>(count);
    }
    return Status::Ok();
  }
  const std::string& path() const override { return path_; }
  int64_t file_size_bytes() const override { return static_cast<int64_t>(bytes_.size()); }
  int64_t alignment_bytes() const override { return 1; }
  IoMode mode() const override { return IoMode::kPread; }
  bool direct() const override { return false; }

 private:
  std::string path_;
  std::string bytes_;
};

// The oracle's view of a typed graph: plain arrays, nothing of the code under test.
struct OracleRelation {
  std::string key;
  int32_t src = 0, dst = 0;
  std::vector<int64_t> indptr;   // count_dst + 1
  std::vector<int64_t> indices;  // source local ids
  IndexDtype dtype = IndexDtype::kUint32;
  int64_t degree(int64_t l) const { return indptr[static_cast<size_t>(l) + 1] - indptr[static_cast<size_t>(l)]; }
  std::vector<int64_t> list(int64_t l) const {
    return {indices.begin() + indptr[static_cast<size_t>(l)], indices.begin() + indptr[static_cast<size_t>(l) + 1]};
  }
};
struct OracleGraph {
  std::vector<int64_t> counts;  // per type
  std::vector<OracleRelation> relations;
  int64_t offset(int32_t t) const {
    int64_t o = 0;
    for (int32_t i = 0; i < t; ++i) o += counts[static_cast<size_t>(i)];
    return o;
  }
  int64_t num_nodes() const { return offset(static_cast<int32_t>(counts.size())); }
  // The type of global id v, by a linear scan (not TypeOf).
  int32_t type_of(int64_t v) const {
    for (int32_t t = 0; t < static_cast<int32_t>(counts.size()); ++t) {
      if (v < offset(t + 1)) return t;
    }
    return -1;
  }
};

// Distinct random in-lists: `count_dst` lists of sources in [0, count_src), degrees in
// [0, max_degree] (capped by count_src), node 0's list all of [0, count_src) when `full0`.
OracleRelation RandomRelation(std::mt19937_64& rng, std::string key, int32_t src, int32_t dst, int64_t count_src,
                              int64_t count_dst, int64_t max_degree, bool full0, IndexDtype dtype) {
  OracleRelation r;
  r.key = std::move(key);
  r.src = src;
  r.dst = dst;
  r.dtype = dtype;
  r.indptr.push_back(0);
  for (int64_t v = 0; v < count_dst; ++v) {
    std::vector<int64_t> all(static_cast<size_t>(count_src));
    for (int64_t u = 0; u < count_src; ++u) all[static_cast<size_t>(u)] = u;
    std::shuffle(all.begin(), all.end(), rng);
    const int64_t degree = (full0 && v == 0) ? count_src
                                             : std::min<int64_t>(count_src, static_cast<int64_t>(rng() % (max_degree + 1)));
    r.indices.insert(r.indices.end(), all.begin(), all.begin() + degree);
    r.indptr.push_back(static_cast<int64_t>(r.indices.size()));
  }
  return r;
}

// Types A (9 nodes), E (empty), B (13), C (4); relations into A and B only (C has none,
// so C destinations get no edges), one of them int64.
OracleGraph TinyGraph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  OracleGraph g;
  g.counts = {9, 0, 13, 4};
  g.relations.push_back(RandomRelation(rng, "A__cites__A", 0, 0, 9, 9, 8, true, IndexDtype::kUint32));
  g.relations.push_back(RandomRelation(rng, "B__writes__A", 2, 0, 13, 9, 6, true, IndexDtype::kUint32));
  g.relations.push_back(RandomRelation(rng, "A__written_by__B", 0, 2, 9, 13, 4, false, IndexDtype::kInt64));
  g.relations.push_back(RandomRelation(rng, "C__member__B", 3, 2, 4, 13, 3, true, IndexDtype::kUint32));
  return g;
}

std::string IndexBytes(const OracleRelation& r) {
  std::string bytes;
  for (int64_t u : r.indices) {
    if (r.dtype == IndexDtype::kUint32) {
      const uint32_t x = static_cast<uint32_t>(u);
      bytes.append(reinterpret_cast<const char*>(&x), 4);
    } else {
      bytes.append(reinterpret_cast<const char*>(&u), 8);
    }
  }
  return bytes;
}

// A neighbor cache of every list of `r` (a homogeneous dataset of max(count_src,
// count_dst) nodes whose first count_dst lists are r's, cached whole).
NeighborCache FullCache(const OracleGraph& g, const OracleRelation& r) {
  const int64_t count_dst = g.counts[static_cast<size_t>(r.dst)];
  const int64_t n = std::max(count_dst, g.counts[static_cast<size_t>(r.src)]);
  std::vector<std::vector<int64_t>> lists(static_cast<size_t>(n));
  for (int64_t l = 0; l < count_dst; ++l) lists[static_cast<size_t>(l)] = r.list(l);
  const std::string dir = testing::MakeTempDir("typed_ncache");
  testing::WriteGraph(dir, lists, {}, r.dtype);
  Dataset ds = testing::OpenWrittenDataset(dir);
  auto indptr = CompactIndptr::Load(ds);
  EXPECT_TRUE(indptr.ok());
  NeighborCacheBuildOptions options;
  options.score = NeighborCacheScore::kOutInDegree;
  auto cache = NeighborCache::Build(ds, *indptr, int64_t{1} << 20, options);
  EXPECT_TRUE(cache.ok()) << cache.status().ToString();
  EXPECT_TRUE(cache->enabled());
  return std::move(cache).value();
}

// The graph as a TypedTopology over in-RAM readers; `cached` relations get a full cache.
std::unique_ptr<TypedTopology> OpenTiny(const OracleGraph& g, const std::set<int>& cached = {}) {
  std::vector<int64_t> offsets;
  for (int32_t t = 0; t <= static_cast<int32_t>(g.counts.size()); ++t) offsets.push_back(g.offset(t));
  std::vector<TypedRelationParts> parts;
  for (size_t r = 0; r < g.relations.size(); ++r) {
    const OracleRelation& rel = g.relations[r];
    TypedRelationParts p;
    p.indptr = CompactIndptr(rel.indptr);
    p.indices = std::make_unique<MemoryReader>("mem/" + rel.key + ".indices.bin", IndexBytes(rel));
    p.index_dtype = rel.dtype;
    p.src_type = rel.src;
    p.dst_type = rel.dst;
    if (cached.count(static_cast<int>(r)) != 0) p.ncache = FullCache(g, rel);
    parts.push_back(std::move(p));
  }
  return std::make_unique<TypedTopology>(std::move(offsets), std::move(parts));
}

int64_t Take(int fanout, int64_t degree) { return (fanout < 0 || degree <= fanout) ? degree : fanout; }

// Checks one sampled batch against the oracle; `fanouts[r][hop]` per relation.
void CheckBatch(const OracleGraph& g, const std::vector<std::vector<int>>& fanouts, const int64_t* seeds,
                int64_t num_seeds, const BatchTrace& t) {
  ASSERT_EQ(t.num_seeds, num_seeds);
  ASSERT_GE(static_cast<int64_t>(t.node_ids.size()), num_seeds);
  for (int64_t i = 0; i < num_seeds; ++i) ASSERT_EQ(t.node_ids[static_cast<size_t>(i)], seeds[i]);
  ASSERT_EQ(std::set<int64_t>(t.node_ids.begin(), t.node_ids.end()).size(), t.node_ids.size()) << "ids twice";
  for (int64_t v : t.node_ids) ASSERT_TRUE(v >= 0 && v < g.num_nodes()) << v;
  const size_t num_layers = fanouts.empty() ? 0 : fanouts[0].size();
  ASSERT_EQ(t.blocks.size(), num_layers);
  int64_t num_dst = num_seeds;
  for (size_t hop = 0; hop < num_layers; ++hop) {
    const LayerBlock& b = t.blocks[num_layers - 1 - hop];
    ASSERT_EQ(b.num_dst, num_dst);
    ASSERT_EQ(b.row_ptr.size(), static_cast<size_t>(num_dst) + 1);
    ASSERT_EQ(b.edge_rel.size(), b.col_idx.size());
    ASSERT_EQ(b.row_ptr.back(), static_cast<int64_t>(b.col_idx.size()));
    // New sources are appended in first-seen order.
    int64_t known = num_dst;
    for (int32_t c : b.col_idx) {
      ASSERT_LE(c, known) << "hop " << hop;
      if (c == known) ++known;
    }
    ASSERT_EQ(b.num_src, known);
    for (int64_t d = 0; d < num_dst; ++d) {
      const int64_t v = t.node_ids[static_cast<size_t>(d)];
      const int32_t type = g.type_of(v);
      const int64_t l = v - g.offset(type);
      std::map<int, std::vector<int64_t>> picks;  // relation -> source local ids, in order
      int last = -1;
      for (int64_t j = b.row_ptr[static_cast<size_t>(d)]; j < b.row_ptr[static_cast<size_t>(d) + 1]; ++j) {
        const int r = b.edge_rel[static_cast<size_t>(j)];
        ASSERT_LT(r, static_cast<int>(g.relations.size()));
        ASSERT_GE(r, last) << "edges not grouped by relation";
        last = r;
        const OracleRelation& rel = g.relations[static_cast<size_t>(r)];
        ASSERT_EQ(rel.dst, type) << "relation " << rel.key << " into a node of type " << type;
        const int64_t u = t.node_ids[static_cast<size_t>(b.col_idx[static_cast<size_t>(j)])];
        ASSERT_EQ(g.type_of(u), rel.src) << "source " << u << " of " << rel.key;
        picks[r].push_back(u - g.offset(rel.src));
      }
      for (size_t r = 0; r < g.relations.size(); ++r) {
        const OracleRelation& rel = g.relations[r];
        if (rel.dst != type) continue;
        const std::vector<int64_t> list = rel.list(l);
        const int64_t take = Take(fanouts[r][hop], static_cast<int64_t>(list.size()));
        const std::vector<int64_t>& got = picks[static_cast<int>(r)];
        ASSERT_EQ(static_cast<int64_t>(got.size()), take) << rel.key << " node " << l << " hop " << hop;
        if (take == static_cast<int64_t>(list.size())) {
          EXPECT_EQ(got, list) << rel.key << " node " << l << ": all of the list, in order";
        } else {
          const std::set<int64_t> in_list(list.begin(), list.end());
          for (int64_t u : got) ASSERT_EQ(in_list.count(u), 1u) << u << " not in " << rel.key << "'s list of " << l;
          ASSERT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size()) << "a position twice";
        }
      }
    }
    num_dst = b.num_src;
  }
  if (num_layers > 0) {
    ASSERT_EQ(static_cast<size_t>(num_dst), t.node_ids.size());
  }
}

std::vector<std::vector<int>> Uniform(const OracleGraph& g, const std::vector<int>& fanouts) {
  return std::vector<std::vector<int>>(g.relations.size(), fanouts);
}

// Every node of the graph, as seeds, in a shuffled order (seed 5).
std::vector<int64_t> AllNodesShuffled(const OracleGraph& g) {
  std::vector<int64_t> ids(static_cast<size_t>(g.num_nodes()));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
  std::mt19937_64 rng(5);
  std::shuffle(ids.begin(), ids.end(), rng);
  return ids;
}

TEST(TypedSamplerTest, EveryEdgeIsInItsRelationWithFanoutsHonoured) {
  for (uint64_t graph_seed : {1, 2, 3}) {
    const OracleGraph g = TinyGraph(graph_seed);
    auto topo = OpenTiny(g);
    for (const std::vector<int>& fanouts : {std::vector<int>{3, 2}, std::vector<int>{1, 1, 1}, std::vector<int>{5}}) {
      NeighborSampler sampler(topo->view(), SamplerOptions{fanouts, 17});
      const std::vector<int64_t> ids = AllNodesShuffled(g);
      for (int64_t epoch = 0; epoch < 20; ++epoch) {
        for (size_t begin = 0; begin < ids.size(); begin += 4) {
          const int64_t n = std::min<int64_t>(4, static_cast<int64_t>(ids.size() - begin));
          BatchTrace t;
          SampleStats stats;
          ASSERT_TRUE(sampler.SampleBatch(ids.data() + begin, n, epoch, 0, &t, &stats).ok());
          CheckBatch(g, Uniform(g, fanouts), ids.data() + begin, n, t);
          if (HasFatalFailure()) {
            ADD_FAILURE() << "graph seed " << graph_seed << " epoch " << epoch;
            return;
          }
          int64_t edges = 0;
          for (const LayerBlock& b : t.blocks) edges += static_cast<int64_t>(b.col_idx.size());
          EXPECT_EQ(stats.edges, edges);
          EXPECT_EQ(stats.topology_requests, edges);  // no cache: every edge read
        }
      }
    }
  }
}

TEST(TypedSamplerTest, AllNeighborsGiveExactlyTheRelationLists) {
  const OracleGraph g = TinyGraph(4);
  auto topo = OpenTiny(g);
  NeighborSampler sampler(topo->view(), SamplerOptions{{-1, -1}, 1});
  const std::vector<int64_t> ids = AllNodesShuffled(g);
  BatchTrace t;
  ASSERT_TRUE(sampler.SampleBatch(ids.data(), static_cast<int64_t>(ids.size()), 0, 0, &t, nullptr).ok());
  CheckBatch(g, Uniform(g, {-1, -1}), ids.data(), static_cast<int64_t>(ids.size()), t);
  // Every relation's every edge appears once per hop: the edge count is the whole graph's
  // edges into the batch's nodes (all of them).
  int64_t all = 0;
  for (const OracleRelation& r : g.relations) all += static_cast<int64_t>(r.indices.size());
  EXPECT_EQ(static_cast<int64_t>(t.blocks[1].col_idx.size()), all);
  EXPECT_EQ(static_cast<int64_t>(t.blocks[0].col_idx.size()), all);
}

TEST(TypedSamplerTest, PerRelationFanoutsDifferingPerRelationAreHonoured) {
  const OracleGraph g = TinyGraph(6);
  auto topo = OpenTiny(g);
  const std::vector<std::vector<int>> per_relation = {{1, 2}, {-1, 1}, {2, -1}, {3, 1}};
  SamplerOptions options{{2, 2}, 9};
  options.relation_fanouts = per_relation;
  NeighborSampler sampler(topo->view(), options);
  const std::vector<int64_t> ids = AllNodesShuffled(g);
  int64_t edges_rel1_hop1 = 0;
  for (int64_t epoch = 0; epoch < 10; ++epoch) {
    for (size_t begin = 0; begin < ids.size(); begin += 5) {
      const int64_t n = std::min<int64_t>(5, static_cast<int64_t>(ids.size() - begin));
      BatchTrace t;
      ASSERT_TRUE(sampler.SampleBatch(ids.data() + begin, n, epoch, 0, &t, nullptr).ok());
      CheckBatch(g, per_relation, ids.data() + begin, n, t);
      if (HasFatalFailure()) return;
      for (uint8_t r : t.blocks[1].edge_rel) edges_rel1_hop1 += r == 1;
    }
  }
  // Relation 1 (B__writes__A, node 0 of degree 13) takes everything at hop 1: 13 > 2.
  EXPECT_GT(edges_rel1_hop1, 10 * 13);
}

TEST(TypedSamplerTest, SameSeedSameTraceOtherSeedOtherTrace) {
  const OracleGraph g = TinyGraph(7);
  auto topo = OpenTiny(g);
  const std::vector<int64_t> seeds = {0, 9 + 0, 9 + 5, 22 + 1};  // A0, B0, B5, C1
  auto sample = [&](uint64_t seed, int64_t epoch) {
    NeighborSampler sampler(topo->view(), SamplerOptions{{3, 3}, seed});
    BatchTrace t;
    EXPECT_TRUE(sampler.SampleBatch(seeds.data(), 4, epoch, 0, &t, nullptr).ok());
    return t;
  };
  EXPECT_TRUE(sample(3, 0) == sample(3, 0));
  EXPECT_FALSE(sample(3, 0) == sample(4, 0));
  EXPECT_FALSE(sample(3, 0) == sample(3, 1));
  // A seed's tree does not depend on the batch's other seeds: A0 alone samples what it
  // samples among others (its hop-1 picks, as global ids).
  NeighborSampler sampler(topo->view(), SamplerOptions{{3, 3}, 3});
  BatchTrace alone, among;
  ASSERT_TRUE(sampler.SampleBatch(seeds.data(), 1, 0, 0, &alone, nullptr).ok());
  ASSERT_TRUE(sampler.SampleBatch(seeds.data(), 4, 0, 0, &among, nullptr).ok());
  auto row0 = [](const BatchTrace& t) {
    const LayerBlock& b = t.blocks.back();
    std::vector<std::pair<int, int64_t>> out;
    for (int64_t j = b.row_ptr[0]; j < b.row_ptr[1]; ++j) {
      out.emplace_back(b.edge_rel[static_cast<size_t>(j)], t.node_ids[static_cast<size_t>(b.col_idx[static_cast<size_t>(j)])]);
    }
    return out;
  };
  EXPECT_EQ(row0(alone), row0(among));
}

TEST(TypedSamplerTest, ThreadCountsAndNeighborCachesGiveIdenticalTraces) {
  const OracleGraph g = TinyGraph(8);
  auto plain = OpenTiny(g);
  auto cached = OpenTiny(g, {0, 2});
  const std::vector<int64_t> ids = AllNodesShuffled(g);
  std::vector<std::string> bytes;
  std::vector<SuperbatchStats> stats;
  for (auto [topo, threads] : {std::pair{plain.get(), 1}, std::pair{plain.get(), 3}, std::pair{cached.get(), 1},
                               std::pair{cached.get(), 4}}) {
    SuperbatchOptions options = MakeSuperbatchOptions(3, 4, threads, {2, 2}, 21, true);
    options.sampler.relation_fanouts = {{2, 1}, {1, 3}, {-1, 2}, {2, 2}};
    auto s = SuperbatchSampler::Create(topo->view(), ids, options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->num_relations(), 4);
    std::string all;
    SuperbatchStats sum;
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      for (int64_t k = 0; k < s->num_superbatches(); ++k) {
        SuperbatchStats st;
        auto trace = s->Sample(epoch, k, &st);
        ASSERT_TRUE(trace.ok()) << trace.status().ToString();
        EXPECT_EQ(trace->num_relations, 4);
        all += SerializeTrace(*trace);
        sum.sample.Add(st.sample);
      }
    }
    bytes.push_back(all);
    stats.push_back(sum);
  }
  for (size_t i = 1; i < bytes.size(); ++i) EXPECT_TRUE(bytes[i] == bytes[0]) << "run " << i;
  EXPECT_EQ(stats[0].sample.ncache_hits, 0);
  EXPECT_GT(stats[2].sample.ncache_hits, 0);
  EXPECT_EQ(stats[0].sample.neighbor_lookups, stats[2].sample.neighbor_lookups);
  EXPECT_LT(stats[2].sample.topology_requests, stats[0].sample.topology_requests);
  EXPECT_EQ(stats[0].sample.edges, stats[2].sample.edges);
}

TEST(TypedSamplerTest, TypeOfMapsGlobalIdsToTheirTypesAcrossEmptyTypes) {
  TypedTopologyView view;
  view.type_offsets = {0, 9, 9, 22, 26};  // A, E (empty), B, C
  EXPECT_EQ(view.TypeOf(0), 0);
  EXPECT_EQ(view.TypeOf(8), 0);
  EXPECT_EQ(view.TypeOf(9), 2);
  EXPECT_EQ(view.TypeOf(21), 2);
  EXPECT_EQ(view.TypeOf(22), 3);
  EXPECT_EQ(view.TypeOf(25), 3);
  EXPECT_THROW(view.TypeOf(26), std::out_of_range);
  EXPECT_THROW(view.TypeOf(-1), std::out_of_range);
  view.type_offsets = {0, 0, 5};  // an empty first type
  EXPECT_EQ(view.TypeOf(0), 1);
}

TEST(TypedSamplerTest, RelationStreamsDifferFromNodeStreamsAndEachOther) {
  std::set<uint64_t> first_words;
  int64_t streams = 0;
  for (int64_t epoch : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{1} << 40}) {
    for (int64_t node : {int64_t{0}, int64_t{1}, int64_t{255}, int64_t{1} << 40}) {
      for (int hop = 0; hop < 3; ++hop) {
        first_words.insert(SamplerRng::ForNode(3, epoch, node, hop).Next());
        ++streams;
        for (int r : {0, 1, 7, 255}) {
          first_words.insert(SamplerRng::ForRelation(3, epoch, node, hop, r).Next());
          ++streams;
        }
      }
    }
  }
  EXPECT_EQ(static_cast<int64_t>(first_words.size()), streams);
}

TEST(TypedSamplerTest, CorruptNeighborIdIsNamedWithTheRelationFileAndOffset) {
  OracleGraph g = TinyGraph(9);
  // C__member__B: C has 4 nodes; make the list of B node 0 (full: 4 entries) hold 4.
  OracleRelation& rel = g.relations[3];
  rel.indices[2] = 4;
  auto topo = OpenTiny(g);
  NeighborSampler sampler(topo->view(), SamplerOptions{{-1}, 1});
  const int64_t seed = 9;  // B node 0
  BatchTrace t;
  const Status st = sampler.SampleBatch(&seed, 1, 0, 0, &t, nullptr);
  ASSERT_EQ(st.code(), StatusCode::kCorrupt) << st.ToString();
  EXPECT_NE(st.message().find("mem/C__member__B.indices.bin"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("byte offset 8"), std::string::npos) << st.message();
}

TEST(TypedSamplerTest, BadRelationFanoutsAreRefused) {
  const OracleGraph g = TinyGraph(10);
  auto topo = OpenTiny(g);
  SamplerOptions options{{2, 2}, 1};
  options.relation_fanouts = {{2, 2}, {2, 2}, {2, 2}};  // 3 lists for 4 relations
  EXPECT_THROW(NeighborSampler(topo->view(), options), std::invalid_argument);
  options.relation_fanouts = {{2, 2}, {2, 2}, {2}, {2, 2}};  // a short list
  EXPECT_THROW(NeighborSampler(topo->view(), options), std::invalid_argument);
  options.relation_fanouts = {{2, 2}, {2, 0}, {2, 2}, {2, 2}};  // fan-out 0
  EXPECT_THROW(NeighborSampler(topo->view(), options), std::invalid_argument);
  auto s = SuperbatchSampler::Create(topo->view(), {0, 1}, [&] {
    SuperbatchOptions o;
    o.sampler = options;
    return o;
  }());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  // Per-relation fan-outs for a homogeneous view.
  auto homo = testing::WriteAndOpenGraph("typed_homo", testing::Star(3), {0});
  options.relation_fanouts = {{2, 2}};
  EXPECT_THROW(NeighborSampler(homo.topology->view(), options), std::invalid_argument);
  // Seeds are global ids < num_nodes (26).
  NeighborSampler sampler(topo->view(), SamplerOptions{{2}, 1});
  const int64_t bad = 26;
  BatchTrace t;
  EXPECT_THROW((void)sampler.SampleBatch(&bad, 1, 0, 0, &t, nullptr), std::invalid_argument);
}

TEST(TypedSamplerTest, TypedTopologyRefusesPartsThatDoNotFit) {
  const OracleGraph g = TinyGraph(11);
  auto make = [&](std::vector<int64_t> offsets, int32_t dst, std::vector<int64_t> indptr) {
    std::vector<TypedRelationParts> parts(1);
    parts[0].indptr = CompactIndptr(indptr);
    parts[0].indices = std::make_unique<MemoryReader>("mem/x", std::string(64, '\0'));
    parts[0].dst_type = dst;
    return std::make_unique<TypedTopology>(std::move(offsets), std::move(parts));
  };
  EXPECT_NO_THROW(make({0, 3, 5}, 1, {0, 1, 2}));
  EXPECT_THROW(make({0, 3, 5}, 1, {0, 1, 2, 3}), std::invalid_argument);  // count_dst + 1 = 3
  EXPECT_THROW(make({0, 3, 5}, 2, {0, 1, 2}), std::invalid_argument);     // no type 2
  EXPECT_THROW(make({1, 3, 5}, 1, {0, 1, 2}), std::invalid_argument);     // offsets from 1
  EXPECT_THROW(make({0}, 0, {0}), std::invalid_argument);                 // no type
  {  // a neighbor cache of 9 nodes (A__cites__A's) on a relation into B (13 nodes)
    std::vector<TypedRelationParts> parts(1);
    parts[0].indptr = CompactIndptr(g.relations[3].indptr);
    parts[0].indices = std::make_unique<MemoryReader>("mem/x", IndexBytes(g.relations[3]));
    parts[0].src_type = 3;
    parts[0].dst_type = 2;
    parts[0].ncache = FullCache(g, g.relations[0]);
    EXPECT_THROW(TypedTopology({0, 9, 9, 22, 26}, std::move(parts)), std::invalid_argument);
  }
  auto topo = OpenTiny(g);
  EXPECT_EQ(topo->num_nodes(), 26);
  EXPECT_EQ(topo->num_types(), 4);
  EXPECT_EQ(topo->num_relations(), 4);
  EXPECT_EQ(topo->view().num_nodes(), 26);
  EXPECT_EQ(topo->view().indptr, nullptr);
  int64_t resident = 0;
  for (int32_t r = 0; r < 4; ++r) resident += topo->relation(r).indptr.ResidentBytes();
  EXPECT_EQ(topo->indptr_bytes(), resident);
  EXPECT_GT(resident, 0);
}

TEST(TypedSamplerTest, LinkPredictionRefusesTypedViews) {
  const OracleGraph g = TinyGraph(12);
  auto topo = OpenTiny(g);
  auto batcher = LinkBatcher::ForTopologyEdges(topo->view(), LinkSeedOptions{}, 1);
  ASSERT_EQ(batcher.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(batcher.status().message().find("link prediction on typed datasets is not supported yet"),
            std::string::npos);
  // A pair file's batcher with a typed view.
  const std::string dir = testing::MakeTempDir("typed_link");
  const int64_t pair[2] = {0, 1};
  testing::WriteFileBytes(dir + "/pairs.bin", std::string(reinterpret_cast<const char*>(pair), 16));
  auto pairs = LinkBatcher::ForPairFile(dir + "/pairs.bin", "", 1, 26, 1);
  ASSERT_TRUE(pairs.ok()) << pairs.status().ToString();
  auto s = SuperbatchSampler::CreateLink(topo->view(), std::make_shared<const LinkBatcher>(std::move(pairs).value()),
                                         MakeSuperbatchOptions(4, 2, 1, {2}, 1, false));
  ASSERT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("not supported yet"), std::string::npos);
}

// ---- The trace format ---------------------------------------------------------------

int64_t WordAt(const std::string& bytes, int64_t at) {
  int64_t v;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

// Byte offset of the first edge_rel section with edges in a typed .sbt image, and that
// section's length.
std::pair<int64_t, int64_t> FirstEdgeRelSection(const std::string& bytes) {
  int64_t pos = kTraceFileHeaderBytes;
  for (int64_t b = 0; b < WordAt(bytes, 32); ++b) {
    const int64_t num_nodes = WordAt(bytes, pos + 32), layers = WordAt(bytes, pos + 40);
    int64_t p = pos + kTraceRecordHeaderBytes + 24 * layers + 8 * num_nodes;
    for (int64_t l = 0; l < layers; ++l) {
      const int64_t at = pos + kTraceRecordHeaderBytes + 24 * l;
      const int64_t num_dst = WordAt(bytes, at), edges = WordAt(bytes, at + 16);
      p += 8 * (num_dst + 1) + AlignUp(4 * edges, 8);
      if (edges > 0) return {p, edges};
      p += AlignUp(edges, 8);
    }
    pos += WordAt(bytes, pos);
  }
  return {-1, 0};
}

SuperbatchTrace SampleTypedSuperbatch(const TypedTopology& topo, const OracleGraph& g) {
  auto s = SuperbatchSampler::Create(topo.view(), AllNodesShuffled(g), MakeSuperbatchOptions(5, 3, 2, {3, 2}, 4, true));
  EXPECT_TRUE(s.ok());
  auto t = s->Sample(1, 0);
  EXPECT_TRUE(t.ok());
  return std::move(t).value();
}

TEST(TypedTraceTest, EdgeRelRoundTripsThroughBytesAndFiles) {
  const OracleGraph g = TinyGraph(13);
  auto topo = OpenTiny(g);
  const SuperbatchTrace t = SampleTypedSuperbatch(*topo, g);
  ASSERT_EQ(t.num_relations, 4);
  ASSERT_EQ(t.batches.size(), 3u);
  const std::string bytes = SerializeTrace(t);
  EXPECT_EQ(WordAt(bytes, 48), 4);  // the header's num_relations
  EXPECT_EQ(static_cast<int64_t>(bytes.size()), SerializedTraceBytes(t));
  auto back = ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()), "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->num_relations, 4);
  EXPECT_TRUE(back->batches == t.batches);
  ASSERT_FALSE(back->batches[0].blocks[0].edge_rel.empty());

  // The streaming writer writes the same bytes; the record reader and TraceFile carry it.
  const std::string dir = testing::MakeTempDir("typed_trace");
  for (bool direct : {false, true}) {
    const std::string path = dir + "/t.sbt";
    auto writer = TraceFileWriter::Create(path, t.epoch, t.superbatch_index, direct, 4);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    for (const BatchTrace& b : t.batches) ASSERT_TRUE(writer->Append(b).ok());
    auto file = writer->Finish();
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    file->Release();
    EXPECT_EQ(file->num_relations(), 4);
    EXPECT_TRUE(testing::ReadFileBytes(path) == bytes) << "direct " << direct;
    auto opened = TraceFile::Open(path);
    ASSERT_TRUE(opened.ok());
    EXPECT_EQ(opened->num_relations(), 4);
    auto reader = TraceRecordReader::Open(*opened);
    ASSERT_TRUE(reader.ok());
    for (const BatchTrace& expected : t.batches) {
      BatchTrace got;
      ASSERT_TRUE(reader->Next(&got).ok());
      EXPECT_TRUE(got == expected);
    }
    auto whole = ReadTraceFile(path);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(whole->num_relations, 4);
  }

  // SuperbatchSampler::SampleToFile writes the same file as Sample() serialized.
  auto s = SuperbatchSampler::Create(topo->view(), AllNodesShuffled(g), MakeSuperbatchOptions(5, 3, 2, {3, 2}, 4, true));
  ASSERT_TRUE(s.ok());
  auto file = s->SampleToFile(1, 0, dir + "/sampled.sbt");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->num_relations(), 4);
  EXPECT_TRUE(testing::ReadFileBytes(dir + "/sampled.sbt") == bytes);
}

TEST(TypedTraceTest, DamagedEdgeRelIsRefusedNamingFileAndOffset) {
  const OracleGraph g = TinyGraph(14);
  auto topo = OpenTiny(g);
  const SuperbatchTrace t = SampleTypedSuperbatch(*topo, g);
  const std::string bytes = SerializeTrace(t);
  const auto [at, edges] = FirstEdgeRelSection(bytes);
  ASSERT_GT(at, 0);
  ASSERT_GT(edges, 1);
  {  // a relation the trace does not have
    std::string bad = bytes;
    bad[static_cast<size_t>(at + 1)] = 4;
    auto r = ParseTrace(bad.data(), static_cast<int64_t>(bad.size()), "/x/typed.sbt");
    ASSERT_EQ(r.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(r.status().message().find("/x/typed.sbt"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("byte offset " + std::to_string(at + 1)), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("edge_rel"), std::string::npos) << r.status().message();
    // The record reader refuses it the same way.
    const std::string dir = testing::MakeTempDir("typed_bad");
    testing::WriteFileBytes(dir + "/bad.sbt", bad);
    auto file = TraceFile::Open(dir + "/bad.sbt");
    ASSERT_TRUE(file.ok());
    auto reader = TraceRecordReader::Open(*file);
    ASSERT_TRUE(reader.ok());
    BatchTrace b;
    const Status st = reader->Next(&b);
    EXPECT_EQ(st.code(), StatusCode::kCorrupt);
    EXPECT_NE(st.message().find(dir + "/bad.sbt"), std::string::npos) << st.message();
  }
  {  // the header says homogeneous: the records hold bytes their counts do not account for
    std::string bad = bytes;
    const int64_t zero = 0;
    std::memcpy(bad.data() + 48, &zero, 8);
    auto r = ParseTrace(bad.data(), static_cast<int64_t>(bad.size()), "/x/typed.sbt");
    ASSERT_EQ(r.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(r.status().message().find("does not match its counts"), std::string::npos) << r.status().message();
  }
  {  // a relation count out of range
    std::string bad = bytes;
    const int64_t many = 257;
    std::memcpy(bad.data() + 48, &many, 8);
    auto r = ParseTrace(bad.data(), static_cast<int64_t>(bad.size()), "/x/typed.sbt");
    ASSERT_EQ(r.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(r.status().message().find("byte offset 48"), std::string::npos) << r.status().message();
  }
  {  // fewer relations than the edges use
    std::string bad = bytes;
    const int64_t one = 1;
    std::memcpy(bad.data() + 48, &one, 8);
    bool any_above_zero = false;
    for (const BatchTrace& b : t.batches) {
      for (const LayerBlock& l : b.blocks) {
        for (uint8_t r : l.edge_rel) any_above_zero |= r > 0;
      }
    }
    ASSERT_TRUE(any_above_zero);
    EXPECT_EQ(ParseTrace(bad.data(), static_cast<int64_t>(bad.size()), "m").status().code(), StatusCode::kCorrupt);
  }
}

TEST(TypedTraceTest, WritersRefuseBatchesOfTheOtherKind) {
  const OracleGraph g = TinyGraph(15);
  auto topo = OpenTiny(g);
  SuperbatchTrace t = SampleTypedSuperbatch(*topo, g);
  t.num_relations = 0;  // typed batches in a homogeneous trace
  EXPECT_THROW(SerializeTrace(t), std::logic_error);
  t.num_relations = 2;  // edges of relations 2 and 3
  EXPECT_THROW(SerializeTrace(t), std::logic_error);
  t.num_relations = 4;
  t.batches[0].blocks[0].edge_rel.pop_back();  // a short edge_rel
  EXPECT_THROW(SerializeTrace(t), std::logic_error);

  const std::string dir = testing::MakeTempDir("typed_kind");
  auto writer = TraceFileWriter::Create(dir + "/a.sbt", 0, 0, false, 4);
  ASSERT_TRUE(writer.ok());
  BatchTrace homogeneous = t.batches[1];
  for (LayerBlock& l : homogeneous.blocks) l.edge_rel.clear();
  EXPECT_THROW((void)writer->Append(homogeneous), std::logic_error);
  EXPECT_TRUE(writer->Append(t.batches[1]).ok());  // the writer is still usable
  auto file = writer->Finish();
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->num_batches(), 1);
  EXPECT_EQ(TraceFileWriter::Create(dir + "/b.sbt", 0, 0, false, 257).status().code(),
            StatusCode::kInvalidArgument);
}

// ---- ParseRelationFanouts -------------------------------------------------------------

TEST(RelationFanoutsTest, NamesKeysDefaultsAndErrors) {
  const std::vector<std::string> keys = {"paper__cites__paper", "paper__written_by__author",
                                         "author__writes__paper", "paper__topic__fos", "fos__cites__paper"};
  const std::vector<int> defaults = {10, 5};
  auto all_default = ParseRelationFanouts("", keys, defaults);
  ASSERT_TRUE(all_default.ok());
  EXPECT_EQ(*all_default, std::vector<std::vector<int>>(5, defaults));

  auto some = ParseRelationFanouts("paper__cites__paper=15,10;written_by=5,-1", keys, defaults);
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_EQ(*some, (std::vector<std::vector<int>>{{15, 10}, {5, -1}, {10, 5}, {10, 5}, {10, 5}}));
  auto trailing = ParseRelationFanouts("topic=1,1;", keys, defaults);
  ASSERT_TRUE(trailing.ok()) << trailing.status().ToString();
  EXPECT_EQ((*trailing)[3], (std::vector<int>{1, 1}));
  auto full_key_of_shared_name = ParseRelationFanouts("fos__cites__paper=2,2", keys, defaults);
  ASSERT_TRUE(full_key_of_shared_name.ok());
  EXPECT_EQ((*full_key_of_shared_name)[4], (std::vector<int>{2, 2}));

  for (const std::string bad : {"cites=1,1",                  // two relations are called cites
                                 "nope=1,1",                   // no such relation
                                 "written_by=1",               // one hop short
                                 "written_by=1,2,3",           // one hop long
                                 "written_by=0,1",             // fan-out 0
                                 "written_by=a,b",             // not numbers
                                 "written_by",                 // no '='
                                 "written_by=1,1;;topic=1,1",  // an empty item
                                 "written_by=1,1;paper__written_by__author=2,2"}) {  // twice
    auto r = ParseRelationFanouts(bad, keys, defaults);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("'" + bad + "'"), std::string::npos) << r.status().message();
  }
  auto ambiguous = ParseRelationFanouts("cites=1,1", keys, defaults);
  EXPECT_NE(ambiguous.status().message().find("fos__cites__paper"), std::string::npos);
}

// ---- A generated typed dataset, read from disk ------------------------------------------

TEST(TypedSamplerTest, SuperbatchesOverAGeneratedDatasetMatchItsFiles) {
  HeteroGraphConfig c;
  c.num_papers = 600;
  c.num_institutes = 12;
  c.num_fos = 30;
  c.feature_dim = 4;
  c.num_classes = 3;
  c.seed = 3;
  const std::string dir = testing::MakeTempDir("typed_gen") + "/ds";
  auto summary = GenerateHeteroDataset(c, dir, false);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  auto ds = Dataset::OpenAnyKind(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  const DatasetManifest& m = ds->manifest();
  ASSERT_TRUE(m.typed());

  // The oracle: every relation's files read as plain arrays.
  OracleGraph g;
  for (const DatasetNodeType& t : m.node_types) g.counts.push_back(t.count);
  auto type_index = [&](const std::string& name) {
    for (size_t t = 0; t < m.node_types.size(); ++t) {
      if (m.node_types[t].name == name) return static_cast<int32_t>(t);
    }
    return int32_t{-1};
  };
  for (const DatasetRelation& r : m.relations) {
    OracleRelation rel;
    rel.key = r.key();
    rel.src = type_index(r.src);
    rel.dst = type_index(r.dst);
    rel.dtype = r.index_dtype;
    rel.indptr = testing::ReadArray<int64_t>(dir + "/" + r.indptr);
    if (r.index_dtype == IndexDtype::kUint32) {
      for (uint32_t u : testing::ReadArray<uint32_t>(dir + "/" + r.indices)) rel.indices.push_back(u);
    } else {
      rel.indices = testing::ReadArray<int64_t>(dir + "/" + r.indices);
    }
    ASSERT_EQ(rel.indptr.size(), static_cast<size_t>(g.counts[static_cast<size_t>(rel.dst)]) + 1);
    g.relations.push_back(std::move(rel));
  }
  ASSERT_EQ(NodeTypeOffsets(m).back(), g.num_nodes());
  ASSERT_EQ(RelationKeys(m).size(), g.relations.size());

  DirectReaderOptions reader;
  reader.quiet = true;
  auto topo = TypedTopology::Open(*ds, reader);
  ASSERT_TRUE(topo.ok()) << topo.status().ToString();
  EXPECT_EQ((*topo)->num_nodes(), g.num_nodes());
  EXPECT_EQ((*topo)->num_relations(), static_cast<int32_t>(m.relations.size()));
  EXPECT_LE((*topo)->indptr_bytes(), TypedTopology::EstimateIndptrBytes(m));
  EXPECT_GT((*topo)->indptr_bytes(), 0);

  // Seeds: the papers' train split as global ids.
  const DatasetNodeType* paper = m.FindNodeType("paper");
  ASSERT_NE(paper, nullptr);
  const int64_t paper_offset = g.offset(type_index("paper"));
  std::vector<int64_t> seeds;
  for (int64_t l : testing::ReadArray<int64_t>(dir + "/" + paper->train)) seeds.push_back(paper_offset + l);
  ASSERT_GT(seeds.size(), 100u);

  // Three hops: institutes (affiliated_with's destinations) are 3 hops from papers.
  auto fanouts = ParseRelationFanouts("cites=6,2,1;paper__written_by__author=-1,1,2;topic_of=3,3,1", RelationKeys(m),
                                      {4, 3, 2});
  ASSERT_TRUE(fanouts.ok()) << fanouts.status().ToString();
  SuperbatchOptions options = MakeSuperbatchOptions(64, 3, 2, {4, 3, 2}, 11, true);
  options.sampler.relation_fanouts = *fanouts;
  auto s = SuperbatchSampler::Create((*topo)->view(), seeds, options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  int64_t batches = 0;
  std::set<uint8_t> relations_seen;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    const std::vector<int64_t> order = s->EpochOrder(epoch);
    for (int64_t k = 0; k < s->num_superbatches(); ++k) {
      auto trace = s->Sample(epoch, k);
      ASSERT_TRUE(trace.ok()) << trace.status().ToString();
      for (const BatchTrace& b : trace->batches) {
        CheckBatch(g, *fanouts, order.data() + b.batch_index * 64, b.num_seeds, b);
        if (HasFatalFailure()) {
          ADD_FAILURE() << "epoch " << epoch << " batch " << b.batch_index;
          return;
        }
        for (const LayerBlock& l : b.blocks) relations_seen.insert(l.edge_rel.begin(), l.edge_rel.end());
        ++batches;
      }
    }
  }
  EXPECT_EQ(batches, 2 * s->num_batches());
  EXPECT_EQ(relations_seen.size(), m.relations.size()) << "some relation was never sampled";
  // The streamed file equals the superbatch in RAM.
  auto file = s->SampleToFile(1, 0, testing::MakeTempDir("typed_gen_trace") + "/sb.sbt");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto in_ram = s->Sample(1, 0);
  ASSERT_TRUE(in_ram.ok());
  EXPECT_TRUE(testing::ReadFileBytes(file->path()) == SerializeTrace(*in_ram));

  // A homogeneous dataset is refused.
  const std::string homo = testing::MakeTempDir("typed_gen_homo");
  testing::WriteGraph(homo, testing::Star(3), {0});
  auto homo_ds = Dataset::Open(homo);
  ASSERT_TRUE(homo_ds.ok());
  EXPECT_EQ(TypedTopology::Open(*homo_ds, reader).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace seer
