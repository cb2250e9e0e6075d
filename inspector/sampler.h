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
// Typed datasets (TopologyView::typed, inspector/typed_topology.h): ids are global (type
// offset + local id) and every destination is expanded through each relation into its
// type, in relation order, exactly as above per relation (fan-out per relation:
// SamplerOptions::relation_fanouts; generator SamplerRng::ForRelation; one ReadBatch per
// relation and hop); a destination's edges are grouped by relation and tagged in
// LayerBlock::edge_rel (inspector/typed_sampler.cc).
//
// Thread safety: SampleBatch is const and may run concurrently on many threads (the
// BlockReader is thread-safe; the cache is immutable). The sampler borrows the indptr,
// the reader and the cache: they must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
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
  // Typed datasets: per relation (manifest order), per hop like `fanouts` (same length);
  // empty = `fanouts` for every relation.
  std::vector<std::vector<int>> relation_fanouts = {};  // "= {}": no -Wmissing-field-initializers for SamplerOptions{fanouts, seed}
};

// Parses "10,10,10" (each > 0 or -1); errors are kInvalidArgument naming the text.
Result<std::vector<int>> ParseFanouts(const std::string& text);

// Parses per-relation fan-outs for a typed dataset (SamplerOptions::relation_fanouts):
// "paper__cites__paper=15,10;written_by=5,5" — ';'-separated items NAME=LIST, NAME a
// relation's full key src__name__dst or its name alone when exactly one relation has it,
// LIST as ParseFanouts with default_fanouts' length. Relations not named get
// default_fanouts. Returns one list per relation_keys entry (manifest order). Empty text =
// default_fanouts for every relation. Errors (unknown or ambiguous name, a relation named
// twice, a bad or wrongly sized list) are kInvalidArgument naming the text.
Result<std::vector<std::vector<int>>> ParseRelationFanouts(const std::string& text,
                                                           const std::vector<std::string>& relation_keys,
                                                           const std::vector<int>& default_fanouts);

// A typed dataset's topology (inspector/typed_topology.h owns what it points to): one
// CSC per relation over its destination type, in the source type's local ids. Global id
// of local id l of type t = type_offsets[t] + l (storage/dataset/dataset.h).
struct RelationView {
  const CompactIndptr* indptr = nullptr;  // the destination type's count + 1
  BlockReader* indices = nullptr;         // the relation's indices file
  IndexDtype index_dtype = IndexDtype::kUint32;
  const NeighborCache* ncache = nullptr;  // optional; keyed by destination local id
  int32_t src_type = 0, dst_type = 0;
};
struct TypedTopologyView {
  std::vector<int64_t> type_offsets;  // T + 1 entries: type t = [offsets[t], offsets[t + 1])
  std::vector<RelationView> relations;
  int32_t TypeOf(int64_t global_id) const;  // the type holding global_id (binary search)
};

// The topology the sampler reads: indptr in RAM, indices through `reader`. A typed
// dataset's view has `typed` set (and indptr/indices null): the sampler then samples every
// relation into the destination's type (LayerBlock::edge_rel) and ids are global.
struct TopologyView {
  const CompactIndptr* indptr = nullptr;  // num_nodes + 1
  BlockReader* indices = nullptr;                // indices.bin
  IndexDtype index_dtype = IndexDtype::kUint32;
  const NeighborCache* ncache = nullptr;         // optional
  const TypedTopologyView* typed = nullptr;      // typed datasets: borrowed, outlives the view
  int64_t num_nodes() const {
    return typed != nullptr ? typed->type_offsets.back() : static_cast<int64_t>(indptr->size()) - 1;
  }
};

// Checks that `options` fit `topology` (the NeighborSampler constructor's checks, as a
// Status): fan-outs > 0 or -1; a homogeneous view has indptr and indices and no
// relation_fanouts; a typed view has type offsets from 0, non-decreasing, at most 256
// relations each with an indptr of count_dst + 1 entries and a reader, types in range,
// a neighbor cache (if any) covering count_dst nodes, and relation_fanouts empty or one
// list per relation of fanouts' length.
// kInvalidArgument saying what is wrong.
Status CheckSamplerOptions(const TopologyView& topology, const SamplerOptions& options);

class NeighborSampler {
 public:
  // Throws std::invalid_argument when CheckSamplerOptions fails.
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
  // The typed path (inspector/typed_sampler.cc), SampleBatch's when topology_.typed is set.
  // Starts *trace (epoch, batch, the seeds, num_layers empty blocks) and returns the
  // seeds' local ids; throws std::invalid_argument for a seed outside [0, num_nodes) or a
  // repeated one.
  static std::unordered_map<int64_t, int32_t> BeginTrace(const int64_t* seeds, int64_t num_seeds, int64_t epoch,
                                                          int64_t batch_index, int num_layers, int64_t num_nodes,
                                                          BatchTrace* trace);
  Status SampleTypedBatch(const int64_t* seeds, int64_t num_seeds, int64_t epoch, int64_t batch_index,
                          BatchTrace* trace, SampleStats* stats) const;
  TopologyView topology_;
  SamplerOptions options_;
  // Typed views: the relations into each node type (relation order), and each relation's
  // fan-out per hop (relation_fanouts, or fanouts for every relation).
  std::vector<std::vector<int32_t>> relations_into_;
  std::vector<std::vector<int>> relation_fanouts_;
};

// ---- Randomness (exposed for tests) ---------------------------------------------------

// xoshiro256** seeded through SplitMix64 from (seed, stream_a, stream_b).
class SamplerRng {
 public:
  SamplerRng(uint64_t seed, uint64_t stream_a, uint64_t stream_b);
  // The generator the sampler uses for `node`'s neighbors at `hop` (0 = the seeds' own
  // neighbors) in `epoch`. node in [0, 2^56), hop in [0, 256).
  static SamplerRng ForNode(uint64_t seed, int64_t epoch, int64_t node, int hop);
  // Typed datasets: the generator for global node `node`'s in-neighbors through relation
  // `relation` (< 256) at `hop` in `epoch`. Its streams are distinct from every ForNode
  // stream, from the epoch shuffle's and from each other for |epoch| < 2^48, node < 2^56.
  static SamplerRng ForRelation(uint64_t seed, int64_t epoch, int64_t node, int hop, int relation);
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
