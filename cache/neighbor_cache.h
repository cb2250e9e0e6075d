// NeighborCache: Ginex's static neighbor cache (Ginex §3.2, docs/design.md "Inspector").
//
// The in-neighbor lists of the most "important" nodes, kept in RAM so that sampling
// them needs no I/O. Two scores (NeighborCacheScore):
//   expected_lookups/bytes (default): the expected number of times the sampler reads v's
//     list per mini-batch (ExpectedNeighborLookups: the train seeds' visit probabilities
//     propagated hop by hop with the fan-outs' sampling probabilities) divided by the
//     bytes caching v costs (NodeBytes). It stays meaningful on undirected graphs, where
//     out/in is 1 for every node.
//   out_degree/in_degree (Ginex §3.2; benefit: how many nodes can reach v; cost: its list),
//     compared exactly by cross-multiplication.
// Nodes are ranked by the score (descending; ties: lower id first; nodes with in-degree
// 0 are never looked up and are not cached) and taken in rank order while
//     TableBytes(num_nodes) + sum over cached v of (8 + in_degree(v) * index_bytes)
//       <= budget_bytes;
// the first node that does not fit ends the fill (a prefix of the ranking).
// Budget 0 = disabled (no table at all). A non-zero budget smaller than the table is
// kResourceExhausted. A budget >= the whole topology caches every list.
//
// Layout (rank bitmap, 2 bits per node + 8 B per cached node): bit v of bits_ says
// whether v is cached; rank_[w] counts the cached nodes in the words before w, so v's
// rank is rank_[v/64] + popcount(the lower bits of its word), and offsets_[rank] is the
// element index of v's list inside the packed array (index_dtype elements, lists in
// node-id order). The list length is the node's in-degree, known from indptr. (Version
// 1 used a direct int64 offset per node: 8 B x num_nodes, 120 MiB at 15M nodes, which
// left no room for lists under small budgets; version-1 caches still load.)
//
// On disk, DIR/ncache/: table.bin = uint64 bits[ceil(num_nodes/64)] then int64
// offsets[nodes_cached], lists.bin index_dtype[edges_cached], ncache.json (last):
//   {"format":"seer-ncache","version":2,"budget_bytes","bytes","table_bytes",
//    "lists_bytes","num_nodes","num_edges","nodes_cached","edges_cached",
//    "index_dtype","score_rule":"expected_lookups/bytes" | "out_degree/in_degree",
//    "dataset_identity" (DatasetManifest::Identity() of the dataset it was built from),
//    "fanouts","batch_size" (expected_lookups only: the sampling it was ranked for),
//    "table_xxh64","lists_xxh64" (checksums of the two files)}
// Load refuses a cache whose dataset_identity differs from the dataset's (naming both:
// a cache copied from another dataset of the same size) and one whose files do not hash
// to the recorded checksums (naming the file: a changed neighbor id). Caches saved
// before these fields existed load with only the size checks.
// Loading is one sequential read of each file (rank_ is rebuilt, one pass over bits).
//
// Build is cache/neighbor_cache.cc (its out-degree and indices.bin scans are
// cache/degrees.h's), Save and Load cache/neighbor_cache_file.cc.
// Build and Load block on sequential reads; a bad or mismatched ncache.json (a field
// missing or of the wrong type, another dataset) is kCorrupt naming the file and field.
// The cache is a value that owns its arrays; once built or loaded it is immutable, so
// lookups are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/name_table.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"
#include "storage/base/status.h"

namespace seer {

struct NeighborCacheStats {
  int64_t budget_bytes = 0;
  int64_t bytes = 0;         // table_bytes + lists_bytes (<= budget_bytes)
  int64_t table_bytes = 0;   // TableBytes(num_nodes) + 8 * nodes_cached, or 0 when disabled
  int64_t lists_bytes = 0;   // edges_cached * index_bytes
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  int64_t nodes_cached = 0;
  int64_t edges_cached = 0;
};

enum class NeighborCacheScore { kExpectedLookups, kOutInDegree };
inline constexpr NameValue<NeighborCacheScore> kNeighborCacheScoreNames[] = {
    {"lookups", NeighborCacheScore::kExpectedLookups}, {"out-in", NeighborCacheScore::kOutInDegree}};
// The rule as written in ncache.json: "expected_lookups/bytes" | "out_degree/in_degree".
const char* NeighborCacheScoreRule(NeighborCacheScore score);

struct NeighborCacheBuildOptions {
  bool show_progress = false;
  int64_t chunk_bytes = 8 << 20;  // sequential read size of the scans
  // BuildOutInStreaming only: bytes for the out-degree counters (4 B per node of one node
  // range; ranges of N / passes nodes, one scan of indices.bin per range).
  int64_t scan_memory_bytes = int64_t{1} << 30;
  NeighborCacheScore score = NeighborCacheScore::kExpectedLookups;
  // kExpectedLookups only: the sampling the cache serves (seer train's defaults). Seeds are
  // the dataset's train split (every node when it has none).
  std::vector<int> fanouts = {10, 10, 10};  // hop 1 first, -1 = all
  int64_t batch_size = 1000;
};

// Expected neighbor-list reads of every node in one mini-batch of `batch_size` seeds drawn
// from `seeds` (every node when empty) by the sampler (inspector/sampler.h: at hop h it
// expands every node reached within h hops, picking min(1, fanouts[h]/in_degree(w)) of
// each list position of w). With P_0(v) = batch_size/|seeds| for seeds and, treating
// picks as independent,
//   P_{h+1}(v) = 1 - (1 - P_h(v)) * prod over positions of v in w's list (1 - P_h(w) p_h(w)),
// lookups(v) = sum_{h < num_layers} P_h(v) for in_degree(v) > 0, else 0. L-1 sequential
// scans of indices.bin (kCorrupt on an id >= num_nodes).
Result<std::vector<double>> ExpectedNeighborLookups(const Dataset& dataset, const CompactIndptr& indptr,
                                                    const std::vector<int64_t>& seeds,
                                                    const std::vector<int>& fanouts, int64_t batch_size,
                                                    const NeighborCacheBuildOptions& options = {});

class NeighborCache {
 public:
  static constexpr const char* kDirName = "ncache";
  static constexpr const char* kManifestName = "ncache.json";
  static constexpr const char* kTableName = "table.bin";
  static constexpr const char* kListsName = "lists.bin";

  // A disabled cache: every lookup misses.
  NeighborCache() = default;

  // The fixed part of the table for a graph: the bitmap and the per-word ranks.
  static int64_t TableBytes(int64_t num_nodes) { return 16 * ((num_nodes + 63) / 64); }
  // What caching one node's list costs beyond TableBytes.
  static int64_t NodeBytes(int64_t in_degree, int64_t index_bytes) { return 8 + in_degree * index_bytes; }

  // Ranks by options.score (out/in: one pass over indices.bin; expected lookups: L-1
  // passes and the train split) and fills with one more sequential pass. `indptr` must be
  // the dataset's indptr (num_nodes+1 entries).
  static Result<NeighborCache> Build(const Dataset& dataset, const CompactIndptr& indptr,
                                     int64_t budget_bytes,
                                     const NeighborCacheBuildOptions& options = {});
  // Same with the scores given: score[v] per node, higher first (ties: lower id).
  static Result<NeighborCache> BuildWithScores(const Dataset& dataset, const CompactIndptr& indptr,
                                               const std::vector<double>& scores, NeighborCacheScore rule,
                                               int64_t budget_bytes,
                                               const NeighborCacheBuildOptions& options = {});
  // Same, ranked by out/in with out-degrees already computed (ComputeOutDegrees).
  static Result<NeighborCache> BuildWithOutDegrees(const Dataset& dataset,
                                                   const CompactIndptr& indptr,
                                                   const std::vector<int64_t>& out_degrees,
                                                   int64_t budget_bytes,
                                                   const NeighborCacheBuildOptions& options = {});

  // The out/in build (same cache as Build with kOutInDegree, bit for bit) without any
  // per-node array: out-degrees are counted one node range at a time (uint32 counters,
  // saturating, options.scan_memory_bytes of them; one scan of indices.bin per range),
  // indptr is streamed alongside, and the ranked prefix that fits the budget is kept as
  // it forms (a heap of the candidates, 32 B each, worst on top: a node enters, the worst
  // leave while the candidates exceed the budget; at most budget/12 of them). Memory:
  // the cache itself + scan_memory_bytes + 32 B per cached node, whatever N. Does not
  // need the dataset's indptr in RAM (what `seer ncache build --score out-in` runs).
  static Result<NeighborCache> BuildOutInStreaming(const Dataset& dataset, int64_t budget_bytes,
                                                   const NeighborCacheBuildOptions& options = {});

  // The cache of relation `relation` (manifest order) of a typed dataset
  // (storage/dataset/dataset.h), what inspector/typed_topology.h's parts hold: keyed by
  // destination local id (`indptr` = the relation's, count_dst + 1 entries), lists of
  // source local ids, filled by one sequential pass over the relation's indices file (an
  // id >= the source type's count is kCorrupt naming the file). Ranked by Ginex's out/in:
  // out = out_degrees[offset of the destination type + v] (TypedOutDegrees: the edges of
  // every relation that leave v), in = v's list length in this relation; `out_degrees`
  // empty ranks the shortest lists first (the most lists per byte; score_rule
  // "in_degree"). Ties: lower id. Budget rules as Build (a prefix of the ranking, 0 =
  // disabled, a non-zero budget below TableBytes(count_dst) is kResourceExhausted); the
  // same layout, stats over the relation (num_nodes = count_dst, num_edges = its edges).
  // In memory only (Load checks a cache against a homogeneous dataset). A homogeneous
  // dataset, a relation out of range, or indptr / out_degrees of the wrong size throw
  // std::invalid_argument.
  static Result<NeighborCache> BuildForRelation(const Dataset& dataset, size_t relation, const CompactIndptr& indptr,
                                                const std::vector<int64_t>& out_degrees, int64_t budget_bytes,
                                                const NeighborCacheBuildOptions& options = {});

  // Writes dir/ (created if missing) atomically, manifest last. With force=false an
  // existing manifest is kAlreadyExists.
  Status Save(const std::string& dir, bool force) const;
  // Loads dir/ and checks it against `dataset` (num_nodes, num_edges, index dtype).
  static Result<NeighborCache> Load(const std::string& dir, const Dataset& dataset);
  // Checks every cached list against indptr (offset + in-degree within the packed
  // array); Load() alone only checks sizes. kCorrupt naming the node otherwise.
  Status Validate(const CompactIndptr& indptr) const;
  // DIR/ncache for a dataset directory.
  static std::string DefaultDir(const Dataset& dataset) {
    return dataset.dir() + "/" + kDirName;
  }

  bool enabled() const { return !bits_.empty(); }
  const NeighborCacheStats& stats() const { return stats_; }
  // The ranking it was built with, as in ncache.json (caches saved before the field
  // existed: "out_degree/in_degree").
  const std::string& score_rule() const { return score_rule_; }
  IndexDtype index_dtype() const { return index_dtype_; }
  // DatasetManifest::Identity() of the dataset it was built from ("" for an old cache).
  const std::string& dataset_identity() const { return dataset_identity_; }
  // expected_lookups caches: the fan-outs and batch size it was ranked for (else empty / 0).
  const std::vector<int>& ranked_fanouts() const { return ranked_fanouts_; }
  int64_t ranked_batch_size() const { return ranked_batch_size_; }

  // O(1): element offset of v's list in the packed array, or -1 when not cached.
  int64_t Find(int64_t node) const {
    if (bits_.empty()) return -1;
    const size_t w = static_cast<size_t>(node) >> 6;
    const unsigned b = static_cast<unsigned>(node) & 63u;
    const uint64_t word = bits_[w];
    if (((word >> b) & 1u) == 0) return -1;
    const uint64_t below = b == 0 ? 0 : (word & (~uint64_t{0} >> (64 - b)));
    return offsets_[static_cast<size_t>(rank_[w] + __builtin_popcountll(below))];
  }
  bool Contains(int64_t node) const { return Find(node) >= 0; }
  // The neighbor at element `offset + position` of the packed array (from Find()).
  int64_t NeighborAt(int64_t list_offset, int64_t position) const {
    const size_t i = static_cast<size_t>(list_offset + position);
    return index_dtype_ == IndexDtype::kUint32 ? static_cast<int64_t>(lists32_[i]) : lists64_[i];
  }

 private:
  static NeighborCache Disabled(const DatasetManifest& manifest);
  // The adjacency a build reads (a dataset's indices.bin or one relation's; the .cc).
  struct ListFile;
  static ListFile ListFileOf(const Dataset& dataset);  // a homogeneous dataset's
  static NeighborCache Disabled(const ListFile& file);
  // Words of the rank bitmap for num_nodes nodes.
  static size_t Words(int64_t num_nodes) { return static_cast<size_t>((num_nodes + 63) / 64); }
  bool BitSet(int64_t node) const {
    return ((bits_[static_cast<size_t>(node) >> 6] >> (node & 63)) & 1u) != 0;
  }
  // Build: take the ranked prefix that fits `bytes_left`, give each cached node its
  // place in the packed array, fill the lists from indices.bin.
  void SelectPrefix(const std::vector<int64_t>& ranked, const std::vector<int64_t>& in_degrees,
                    int64_t bytes_left, int64_t index_bytes);
  void LayOutLists(const std::vector<int64_t>& in_degrees);
  Status FillLists(const ListFile& file, const CompactIndptr& indptr,
                   const NeighborCacheBuildOptions& options);
  // Load: the manifest (returns its version), the table (version 2 or 1), the lists.
  Result<int64_t> ReadManifest(const std::string& path);
  Status ReadTable(const std::string& table_path);
  Status ReadVersion1Table(const std::string& table_path);
  Status CheckTable(const std::string& table_path) const;
  Status ReadLists(const std::string& lists_path);
  Status CheckListsChecksum(const std::string& lists_path, const std::string& manifest_path) const;
  void BuildRanks();  // rank_ from bits_
  // Index in the packed array of the first neighbor id outside [0, num_nodes), or -1.
  int64_t FirstNeighborOutsideGraph(int64_t num_nodes) const;
  // The rest of a build once the ranking is known.
  static Result<NeighborCache> BuildRanked(const ListFile& file, const CompactIndptr& indptr,
                                           const std::vector<int64_t>& ranked, NeighborCacheScore rule,
                                           int64_t budget_bytes, const NeighborCacheBuildOptions& options);
  NeighborCacheStats stats_;
  std::string score_rule_ = "out_degree/in_degree";
  std::string dataset_identity_;
  std::vector<int> ranked_fanouts_;
  int64_t ranked_batch_size_ = 0;
  std::string table_xxh64_, lists_xxh64_;  // recorded in ncache.json ("" when absent)
  IndexDtype index_dtype_ = IndexDtype::kUint32;
  std::vector<uint64_t> bits_;     // ceil(num_nodes / 64) words; empty = disabled
  std::vector<int64_t> rank_;      // cached nodes before each word
  std::vector<int64_t> offsets_;   // per cached node (id order): list start in the packed array
  std::vector<uint32_t> lists32_;
  std::vector<int64_t> lists64_;
};

// A typed dataset's out-degrees over all its relations, indexed by global id (type offset
// + local id, node types in manifest order; storage/dataset/dataset.h): one pass over every
// relation's indices file (cache/degrees.h ScanOutDegreesByRange, one node range: 4 B of
// counters per node besides the 8 B result), counts saturating at 2^32 - 1. What
// BuildForRelation ranks by. Errors name the file (an id >= the source type's count).
Result<std::vector<int64_t>> TypedOutDegrees(const Dataset& dataset, const NeighborCacheBuildOptions& options = {});

// Parses a neighbor-cache budget: bytes ("0", "4096", "512M", "2G") or a percentage of
// the topology ("25%" = the fixed table + 25% of (indices.bin + 8 B per node), rounded
// down; "100%" caches every list). kInvalidArgument naming the text otherwise.
Result<int64_t> ParseNeighborCacheBudget(const std::string& text, const DatasetManifest& manifest);

}  // namespace seer
