// NeighborSampler: GraphSAGE uniform neighbor sampling without replacement over a
// CSC topology whose indptr is in RAM and whose indices are read through a BlockReader
// (O_DIRECT io_uring in production, storage/io/direct_reader.h), with an optional static
// NeighborCache in front of it (cache/neighbor_cache.h). docs/design.md "Inspector".
//
// Per batch and per layer (hop 1 = the seeds' neighbors = the output layer):
//   1. for every destination node (each unique node once per layer), pick neighbor
//      *positions* with Floyd's algorithm and an unbiased bounded generator (Lemire's
//      multiply-shift with rejection; no modulo bias, every position reachable);
//      degree <= fan-out takes all positions; fan-out -1 means "all neighbors";
//   2. neighbor-cache hits are copied from RAM; every other position becomes one small
//      ReadRequest (index_bytes at indptr[v]+pos) — all requests of the layer go to the
//      reader in one ReadBatch, which merges requests falling in the same block and keeps
//      many reads in flight;
//   3. the block is assembled in local ids (new nodes appended in first-seen order).
// Positions are kept in ascending order inside a node's sample.
//
// Randomness: one generator per (seed, epoch, node, hop) (SamplerRng::ForNode), so a
// node's sampled neighbors at a hop are a function of those four values only: a seed's
// computation tree is the same whichever batch it lands in and whatever the batch's other
// seeds (data-parallel ranks with b/W seeds each sample exactly what one process with b
// seeds samples; evaluation sharded across ranks predicts what one process predicts).
// Traces are byte-identical whatever the thread count, the neighbor cache or the reader
// backend. (Until the data-parallel change the generator was keyed by the batch index and
// consumed in batch order: traces of the same seed differ from those older ones.)
//
// Thread safety: SampleBatch is const and may run concurrently on many threads (the
// BlockReader is thread-safe; the cache is immutable). The sampler borrows the indptr,
// the reader and the cache: they must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/neighbor_cache.h"
#include "inspector/trace.h"
#include "storage/base/status.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"
#include "storage/io/block_reader.h"

namespace seer {

// Counters of one batch or a sum of batches.
struct SampleStats {
  int64_t batches = 0;
  int64_t sampled_nodes = 0;      // sum over batches of node_ids.size()
  int64_t edges = 0;              // sum of col_idx sizes over all blocks
  int64_t neighbor_lookups = 0;   // (dst node, layer) pairs with degree > 0
  int64_t ncache_hits = 0;        // ... whose list came from the neighbor cache
  int64_t topology_requests = 0;  // neighbor ids requested from the reader
  ReadStats reads;                // what the reader did (device_reads = blocks read)
  void Add(const SampleStats& other);
  double ncache_hit_ratio() const {
    return neighbor_lookups == 0 ? 0.0 : static_cast<double>(ncache_hits) / neighbor_lookups;
  }
};

struct SamplerOptions {
  std::vector<int> fanouts = {10, 10, 10};  // hop 1 (output layer) first; -1 = all; empty = the seeds only
  uint64_t seed = 0;
};

// Parses "10,10,10" (each > 0 or -1); errors are kInvalidArgument naming the text.
Result<std::vector<int>> ParseFanouts(const std::string& text);

// The topology the sampler reads: indptr in RAM, indices through `reader`.
struct TopologyView {
  const CompactIndptr* indptr = nullptr;  // num_nodes + 1
  BlockReader* indices = nullptr;                // indices.bin
  IndexDtype index_dtype = IndexDtype::kUint32;
  const NeighborCache* ncache = nullptr;         // optional
  int64_t num_nodes() const { return static_cast<int64_t>(indptr->size()) - 1; }
};

class NeighborSampler {
 public:
  // Throws std::invalid_argument when a fan-out is 0 or < -1, or the view is incomplete.
  NeighborSampler(TopologyView topology, SamplerOptions options);

  // Samples one batch: trace->node_ids starts with `seeds` (which must be distinct and
  // < num_nodes; violations throw std::invalid_argument). I/O errors come back as a
  // Status naming the file and offset; out-of-range ids read from indices.bin are
  // kCorrupt; a batch of more than 2^31 nodes is kInvalidArgument. On error *trace is
  // unspecified. `stats` (optional) is added to.
  Status SampleBatch(const int64_t* seeds, int64_t num_seeds, int64_t epoch,
                     int64_t batch_index, BatchTrace* trace, SampleStats* stats) const;

  const SamplerOptions& options() const { return options_; }
  const TopologyView& topology() const { return topology_; }

 private:
  TopologyView topology_;
  SamplerOptions options_;
};

// ---- Randomness (exposed for tests) ---------------------------------------------------

// xoshiro256** seeded through SplitMix64 from (seed, stream_a, stream_b).
class SamplerRng {
 public:
  SamplerRng(uint64_t seed, uint64_t stream_a, uint64_t stream_b);
  // The generator the sampler uses for `node`'s neighbors at `hop` (0 = the seeds' own
  // neighbors) in `epoch`. node in [0, 2^56), hop in [0, 256).
  static SamplerRng ForNode(uint64_t seed, int64_t epoch, int64_t node, int hop);
  uint64_t Next();
  // Uniform integer in [0, bound) without modulo bias (Lemire 2019). bound > 0.
  uint64_t Below(uint64_t bound);

 private:
  uint64_t s_[4];
};

// Floyd's algorithm: `count` distinct positions from [0, degree), uniformly among all
// subsets, written ascending to out[0..count). Requires 0 <= count <= degree.
void SamplePositions(SamplerRng& rng, int64_t degree, int64_t count, int64_t* out);

}  // namespace seer
