// The inspector's output for one mini-batch (docs/design.md "Inspector"), and for a superbatch.
//
// node_ids: the batch's unique sampled node ids, seeds first (node_ids[0..num_seeds)
// are the seeds in batch order), then every other node in first-seen order while
// sampling hop 1, hop 2, ... — so the nodes reached within h hops are a prefix.
// blocks: one per GNN layer, ordered input layer first (blocks[0] consumes the raw
// features of node_ids[0..blocks[0].num_src)), output layer last
// (blocks.back().num_dst == num_seeds). A block is CSR over destination nodes in
// *local* ids: the in-neighbors of local dst d are
// col_idx[row_ptr[d] .. row_ptr[d+1]), each a local id < num_src. Destinations are
// node_ids[0..num_dst) and num_dst <= num_src, so a block's dst are a prefix of its src.
//
// Plain values; no I/O here (on disk: inspector/trace_format.h, docs/formats.md "Trace files").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace seer {

struct LayerBlock {
  int64_t num_dst = 0;
  int64_t num_src = 0;
  std::vector<int64_t> row_ptr;   // num_dst + 1
  std::vector<int32_t> col_idx;   // row_ptr[num_dst] entries, local src ids
  // Typed datasets only (inspector/typed_topology.h): the relation index of each edge,
  // parallel to col_idx (into the dataset's manifest `relations`, < 256); empty for a
  // homogeneous dataset. A destination's edges are grouped by relation, in relation order.
  std::vector<uint8_t> edge_rel;
};

// Link prediction (seer train --task link, inspector/link_batch.h): the batch's scored
// pairs as positions into its seeds. Positive pair i is (seeds[src[i]], seeds[dst[i]]);
// its negatives are (seeds[src[i]], seeds[neg[i*k + j]]) for j < k, or, with
// shared_negatives, (seeds[src[i]], seeds[neg[j]]) — the same k for every pair. Empty
// for node classification.
struct LinkPairs {
  int64_t negatives_per_pair = 0;   // k
  bool shared_negatives = false;
  std::vector<int32_t> src, dst;    // one per positive pair
  std::vector<int32_t> neg;         // num_pairs() * k, or k when shared
  int64_t num_pairs() const { return static_cast<int64_t>(src.size()); }
  bool empty() const { return src.empty(); }
  // Position of negative j of pair i.
  int32_t negative(int64_t i, int64_t j) const {
    return neg[static_cast<size_t>(shared_negatives ? j : i * negatives_per_pair + j)];
  }
  bool operator==(const LinkPairs& other) const {
    return negatives_per_pair == other.negatives_per_pair && shared_negatives == other.shared_negatives &&
           src == other.src && dst == other.dst && neg == other.neg;
  }
};

struct BatchTrace {
  int64_t epoch = 0;
  int64_t batch_index = 0;         // index of the batch within its epoch
  int64_t num_seeds = 0;
  std::vector<int64_t> node_ids;   // global ids, seeds first
  std::vector<LayerBlock> blocks;  // input layer first
  LinkPairs link;                  // link prediction only

  const int64_t* seeds() const { return node_ids.data(); }
  bool operator==(const BatchTrace& other) const;
};

struct SuperbatchTrace {
  int64_t epoch = 0;
  int64_t superbatch_index = 0;    // within the epoch
  // Typed datasets: the dataset's relation count (every LayerBlock::edge_rel entry is below
  // it, and every block with edges has edge_rel); 0 = homogeneous (no edge_rel anywhere).
  int64_t num_relations = 0;
  std::vector<BatchTrace> batches;
};

}  // namespace seer
