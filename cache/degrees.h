// Node degrees of a dataset's CSC topology (docs/formats.md "On-disk dataset format"), and the
// one home of cache/'s whole-graph scans of indices.bin.
//
// In-degrees come straight from indptr (in RAM). Out-degrees need one sequential pass
// over indices.bin: out_degree[u] = number of times u appears as an in-neighbor, i.e.
// the number of nodes whose sampling can reach u. Both the neighbor cache (Ginex §3.2
// score out/in) and the static-degree feature-cache policy (PaGraph) rank by them, and
// Belady's tie rule scores by them (MakeBeladyNodeScores; the score tables themselves
// are cache/node_scores.h).
//
// Every scan reads indices.bin through ScanIndices: large sequential chunks (buffered
// pread with POSIX_FADV_SEQUENTIAL), never one read per node; each blocks until done.
// The functions are pure (no shared state) and may run concurrently; the caller owns the
// vectors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cache/node_scores.h"
#include "cache/policies.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"
#include "storage/base/status.h"

namespace seer {

struct DegreeScanOptions {
  int64_t chunk_bytes = 8 << 20;  // sequential read size
  bool show_progress = false;     // progress line on stderr (storage/base/progress.h)
  // ScanOutDegreesByRange (MakeBeladyNodeScores): bytes of out-degree counters per pass
  // over indices.bin (4 B per node of a node range; fewer than 4 B x num_nodes = more
  // passes, no per-node int64).
  int64_t scan_memory_bytes = int64_t{1} << 30;
  // MakeBeladyNodeScores: the nodes its ranking may hold, as ascending [lo, hi) ranges of
  // node ids; empty = every node. (A typed dataset cached by bytes ranks only the nodes
  // that own cache units: FeatureUnits::NodesWithUnits, storage/dataset/feature_units.h.)
  std::vector<std::pair<int64_t, int64_t>> ranked_ranges;
};

// One sequential pass over the dataset's indices.bin in chunks of about chunk_bytes that
// hold whole entries: visit(entries, count, first) for each chunk in file order, where
// `entries` are `count` values of the manifest's index dtype (uint32 or int64) from
// element `first` on. A file shorter than the manifest's num_edges needs is
// kUnexpectedEof; visit's error stops the scan. No edges: indices.bin is not opened.
// Homogeneous datasets only (std::logic_error on a typed one).
using IndicesChunkFn = std::function<Status(const void* entries, int64_t count, int64_t first)>;
Status ScanIndices(const Dataset& dataset, int64_t chunk_bytes, const IndicesChunkFn& visit);

// kCorrupt "PATH: neighbor id ID at byte offset OFFSET is >= num_nodes N".
Status NeighborIdOutOfRange(const std::string& path, int64_t id, int64_t byte_offset, int64_t num_nodes);

// Out-degrees counted one node range at a time, without a per-node int64: the nodes are
// cut into ranges [lo, hi) of max(1, scan.scan_memory_bytes / 4) nodes (at least one
// node's counter); per range one
// ScanIndices pass counts the in-range ids into uint32 counters (saturating at 2^32-1),
// then on_range(lo, hi, counts) runs (counts[k] = out-degree of node lo + k); on_range is
// called for every range, in order, also when there are no edges. An id >= num_nodes is
// NeighborIdOutOfRange. Progress (scan.show_progress): "WHAT PATH", "(N passes)" added
// when there is more than one. A typed dataset counts every relation's indices file, its
// source-type local ids as global ids (type offset + local id; storage/dataset/dataset.h),
// so MakeBeladyNodeScores scores (type, row) pairs by their out-degree over all relations.
using OutDegreeRangeFn = std::function<Status(int64_t lo, int64_t hi, const uint32_t* counts)>;
Status ScanOutDegreesByRange(const Dataset& dataset, const DegreeScanOptions& scan, const std::string& what,
                             const OutDegreeRangeFn& on_range);

// out_degree[u] for every node u in [0, num_nodes). Ids >= num_nodes in indices.bin are
// a kCorrupt error naming the file and the byte offset of the bad entry.
Result<std::vector<int64_t>> ComputeOutDegrees(const Dataset& dataset,
                                               const DegreeScanOptions& options = {});

// in_degree[v] = indptr[v+1] - indptr[v]; indptr must have num_nodes+1 entries.
std::vector<int64_t> InDegreesFromIndptr(const std::vector<int64_t>& indptr);
std::vector<int64_t> InDegreesFromIndptr(const CompactIndptr& indptr);

// node_scores from out-degrees: score = out_degree[v] (saturated to uint32).
NodeScoreFn NodeScoresFromDegrees(const std::vector<int64_t>& out_degrees);

// Bucket of a degree for Belady's tie rule (the scores of NodeScoresFromBuckets), one
// byte: exact below 32, then 4 buckets per octave (32-39, 40-47, 48-55, 56-63, 64-79,
// ...); non-decreasing in the degree, 255 only beyond 2^58. Negative degrees are 0.
uint8_t DegreeBucket(int64_t degree);
// The tie rule's resident score table: kBeladyScoreBytesPerNode bytes per node (what the
// memory budget charges, MemoryBudgetRequest::node_score_bytes_per_node).
inline constexpr int64_t kBeladyScoreBytesPerNode = 1;

// Belady's scores as training and `seer stats` both use them (one definition, so train
// misses equal `seer stats --belady-scope superbatch`): out-degrees of `dataset`; the tie
// rule's scores are their DegreeBucket (one byte per node held for the run, instead of a
// uint32), the fill ranking of the top max_capacity_rows uses the exact degrees. The
// exact out-degrees are freed before returning.
// Out-degree, not PreSC visit counts: it needs no pre-sampling epoch (one sequential
// pass over indices.bin), it is what the static-degree policy keeps, and it does not
// depend on which seeds were pre-sampled. Reads indices.bin; blocks.
// Streams: out-degrees are counted one node range at a time (uint32 counters, saturating,
// scan.scan_memory_bytes of them; one pass over indices.bin per range) straight into the
// buckets; the exact degrees of nodes of degree >= 32 (at most num_edges / 32 of them) are
// kept for the ranking, the rest are exact in their bucket. Memory: the buckets (1 B per
// node) + the counters + the ranking (8 B per row) + 16 B per node of degree >= 32 (was
// 16 B per node: int64 degrees + the node list RankNodesByScore sorts). Same result as
// RankNodesByScore(ComputeOutDegrees(dataset), max_capacity_rows) and DegreeBucket.
Status MakeBeladyNodeScores(const Dataset& dataset, int64_t max_capacity_rows, PolicyOptions* options);
Status MakeBeladyNodeScores(const Dataset& dataset, int64_t max_capacity_rows, PolicyOptions* options,
                            const DegreeScanOptions& scan);

}  // namespace seer
