// Held-out edges of a dataset (`seer split-edges`, written by storage/prep/edge_split.h;
// docs/formats.md "Edge splits"): the reading side and the check.
//
//   edges_valid.bin, edges_test.bin   int64 (src, dst) pairs, little-endian, 16 B each,
//                                     in CSC order (by dst, then src)
//   edges_valid_negatives.bin,        optional (--eval-negatives K): int64 node ids, K per
//   edges_test_negatives.bin          held-out edge, row i = the negatives of pair i; drawn
//                                     uniformly from [0, num_nodes) (EvalNegativesStream),
//                                     not filtered against true edges (OGB citation2's protocol)
//   dataset.json "edge_splits"        names the files (listed in `files` with their size
//                                     and xxh64), counts, fractions, seed, undirected, K
//
// The held-out edges are not in the training topology (indptr.bin/indices.bin): no
// in-neighbor list holds a held-out edge src -> dst, not even a second copy of it; with
// `undirected` not its reverse dst -> src either. Node ids are the dataset's node numbers
// (as in train.bin).
//
// NeighborListReader streams the topology list by list; HeldOutEdgeSet is the sorted
// lookup both the writer and the check use; CheckEdgeSplits is what `seer check` runs.
// All single-threaded and blocking.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/base/random.h"
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

namespace dataset_files {
inline constexpr const char* kEdgesValid = "edges_valid.bin";
inline constexpr const char* kEdgesTest = "edges_test.bin";
inline constexpr const char* kEdgesValidNegatives = "edges_valid_negatives.bin";
inline constexpr const char* kEdgesTestNegatives = "edges_test_negatives.bin";
}  // namespace dataset_files

// The stream of one split's evaluation negatives ("valid" | "test"): SplitMix64 started at
// SplitMixFinalize(seed ^ XXH64("seer-eval-negatives:" + split, 0)); the held-out edges in
// file order each take K draws Below(num_nodes) (Lemire's multiply-shift with rejection).
// The one rule the writer follows and docs/formats.md states.
SplitMix64 EvalNegativesStream(uint64_t seed, const std::string& split);

inline constexpr int64_t kHeldOutEdgeBytes = 16;  // one (src, dst) pair in a split file

// How many of `candidates` edges a split holds for `fraction`: round(fraction × candidates),
// halves away from zero. The one rule the writer and the check apply.
int64_t HeldOutCount(double fraction, int64_t candidates);

// The in-neighbor lists of a dataset in node order, streamed: indptr.bin and indices.bin
// are read sequentially in 1 MiB chunks and hashed as they are read; Finish() compares
// both hashes with the manifest (a changed input is refused, never passed on). RAM: the
// two chunks and the longest list. Corrupt (naming the file and position) when indptr
// does not start at 0, decreases or passes num_edges.
class NeighborListReader {
 public:
  static Result<NeighborListReader> Open(const Dataset& dataset);
  NeighborListReader(NeighborListReader&&) noexcept;
  NeighborListReader& operator=(NeighborListReader&&) noexcept;
  ~NeighborListReader();

  // The next node's in-neighbors (in file order) into *sources, its number into *node;
  // false after the last node.
  Result<bool> Next(int64_t* node, std::vector<int64_t>* sources);
  // Position in indices.bin of the first element of the list Next() returned last.
  int64_t list_offset() const;
  // After the last list: both files were read whole and match the manifest's xxh64.
  Status Finish();
  int64_t bytes_read() const;

 private:
  struct State;
  explicit NeighborListReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Held-out edges as a sorted array: lookups in O(log H), kBytesPerEdge of RAM per edge.
// Directed, an edge is its (src, dst); undirected, an edge and its reverse are the same
// key. Add every edge, Seal() once, then Find.
class HeldOutEdgeSet {
 public:
  static constexpr int64_t kBytesPerEdge = 24;
  explicit HeldOutEdgeSet(bool undirected) : undirected_(undirected) {}
  // `origin`: the caller's tag for the edge (e.g. file and index), returned by Find.
  void Add(int64_t src, int64_t dst, int64_t origin);
  // Sorts; the origins of the first two entries that are the same edge (a repeat), if any.
  std::optional<std::pair<int64_t, int64_t>> Seal();
  // The origin of the held-out edge src -> dst (undirected: or dst -> src), else -1.
  int64_t Find(int64_t src, int64_t dst) const;
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }

 private:
  struct Entry {
    int64_t hi, lo, origin;  // directed (dst, src); undirected (max, min)
  };
  Entry KeyOf(int64_t src, int64_t dst) const;
  bool undirected_;
  bool sealed_ = false;
  std::vector<Entry> entries_;
};

// The held-out edges of one split file ("valid" | "test") of a dataset with edge splits,
// checked: size = 16 × the manifest's count, every id in [0, num_nodes), the xxh64.
Result<std::vector<std::pair<int64_t, int64_t>>> LoadHeldOutEdges(const Dataset& dataset, const std::string& split);

// What `seer check` runs on a dataset with edge splits (Ok without): the manifest's
// counts agree with its fractions; each split file has its size and checksum, ids in
// range, no edge twice; valid and test share no edge (undirected: in either direction);
// each negatives file (when K > 0), streamed: size = count × K × 8, ids in range, xxh64;
// and, streaming the topology, no held-out edge (undirected: nor its reverse) is in any
// in-neighbor list. RAM: HeldOutEdgeSet::kBytesPerEdge per held-out edge + one list.
// The first problem is one line naming the file and the pair or edge index.
Status CheckEdgeSplits(const Dataset& dataset, int64_t* bytes_read, int64_t* checksums_verified);

}  // namespace seer
