// NeighborCache: Ginex's static neighbor cache (Ginex §3.2, DESIGN.md "Inspector").
//
// The in-neighbor lists of the most "important" nodes, kept in RAM so that sampling
// them needs no I/O. Importance = out_degree / in_degree (benefit: how often a node is
// reached; cost: the bytes of its list). Nodes are ranked by that score (descending,
// compared exactly by cross-multiplication; ties: lower id first; nodes with in-degree
// 0 are never looked up and are not cached) and taken in rank order while
//     8 * num_nodes (the offset table) + cached_edges * index_bytes <= budget_bytes;
// the first node that does not fit ends the fill (a prefix of the ranking).
// Budget 0 = disabled (no table at all). A non-zero budget smaller than the table is
// kResourceExhausted. A budget >= the whole topology caches every list.
//
// Layout (direct addressing): offset_[v] = element index of v's list inside the packed
// array lists (index_dtype elements, lists in node-id order), or -1 = not cached. The
// list length is the node's in-degree, known from indptr, so it is not stored.
//
// On disk, DIR/ncache/: table.bin int64[num_nodes], lists.bin index_dtype[edges_cached],
// ncache.json (written last):
//   {"format":"seer-ncache","version":1,"budget_bytes","bytes","table_bytes",
//    "lists_bytes","num_nodes","num_edges","nodes_cached","edges_cached",
//    "index_dtype","score_rule":"out_degree/in_degree"}
// Loading is one sequential read of each file.
//
// A built or loaded cache is immutable: lookups are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/dataset.h"
#include "storage/status.h"

namespace seer {

struct NeighborCacheStats {
  int64_t budget_bytes = 0;
  int64_t bytes = 0;         // table_bytes + lists_bytes (<= budget_bytes)
  int64_t table_bytes = 0;   // 8 * num_nodes, or 0 when disabled
  int64_t lists_bytes = 0;   // edges_cached * index_bytes
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  int64_t nodes_cached = 0;
  int64_t edges_cached = 0;
};

struct NeighborCacheBuildOptions {
  bool show_progress = false;
  int64_t chunk_bytes = 8 << 20;  // sequential read size of the scans
};

class NeighborCache {
 public:
  static constexpr const char* kDirName = "ncache";
  static constexpr const char* kManifestName = "ncache.json";
  static constexpr const char* kTableName = "table.bin";
  static constexpr const char* kListsName = "lists.bin";
  static constexpr const char* kScoreRule = "out_degree/in_degree";

  // A disabled cache: every lookup misses.
  NeighborCache() = default;

  // Ranks with one pass over indices.bin (out-degrees) and fills with a second
  // sequential pass. `indptr` must be the dataset's indptr (num_nodes+1 entries).
  static Result<NeighborCache> Build(const Dataset& dataset, const std::vector<int64_t>& indptr,
                                     int64_t budget_bytes,
                                     const NeighborCacheBuildOptions& options = {});
  // Same, with out-degrees already computed (ComputeOutDegrees).
  static Result<NeighborCache> BuildWithOutDegrees(const Dataset& dataset,
                                                   const std::vector<int64_t>& indptr,
                                                   const std::vector<int64_t>& out_degrees,
                                                   int64_t budget_bytes,
                                                   const NeighborCacheBuildOptions& options = {});

  // Writes dir/ (created if missing) atomically, manifest last. With force=false an
  // existing manifest is kAlreadyExists.
  Status Save(const std::string& dir, bool force) const;
  // Loads dir/ and checks it against `dataset` (num_nodes, num_edges, index dtype).
  static Result<NeighborCache> Load(const std::string& dir, const Dataset& dataset);
  // Checks every cached list against indptr (offset + in-degree within the packed
  // array); Load() alone only checks sizes. kCorrupt naming the node otherwise.
  Status Validate(const std::vector<int64_t>& indptr) const;
  // DIR/ncache for a dataset directory.
  static std::string DefaultDir(const Dataset& dataset) {
    return dataset.dir() + "/" + kDirName;
  }

  bool enabled() const { return !offset_.empty(); }
  const NeighborCacheStats& stats() const { return stats_; }
  IndexDtype index_dtype() const { return index_dtype_; }

  // O(1): element offset of v's list in the packed array, or -1 when not cached.
  int64_t Find(int64_t node) const {
    return offset_.empty() ? -1 : offset_[static_cast<size_t>(node)];
  }
  bool Contains(int64_t node) const { return Find(node) >= 0; }
  // The neighbor at element `offset + position` of the packed array (from Find()).
  int64_t NeighborAt(int64_t list_offset, int64_t position) const {
    const size_t i = static_cast<size_t>(list_offset + position);
    return index_dtype_ == IndexDtype::kUint32 ? static_cast<int64_t>(lists32_[i]) : lists64_[i];
  }

 private:
  static NeighborCache Disabled(const DatasetManifest& manifest);
  NeighborCacheStats stats_;
  IndexDtype index_dtype_ = IndexDtype::kUint32;
  std::vector<int64_t> offset_;
  std::vector<uint32_t> lists32_;
  std::vector<int64_t> lists64_;
};

// Parses a neighbor-cache budget: bytes ("0", "4096", "512M", "2G") or a percentage of
// the topology ("25%" = the 8-byte-per-node table + 25% of indices.bin, rounded down;
// "100%" caches every list). kInvalidArgument naming the text otherwise.
Result<int64_t> ParseNeighborCacheBudget(const std::string& text, const DatasetManifest& manifest);

}  // namespace seer
