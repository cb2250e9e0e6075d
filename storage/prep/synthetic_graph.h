// Synthetic datasets with a learnable node-classification task (what `seer gen` writes,
// and what tests in every module use to get a dataset).
//
// Topology: R-MAT (Chakrabarti et al.; Graph500's Kronecker generator) with quadrant
// probabilities a,b,c,d = 0.57,0.19,0.19,0.05 over 2^ceil(log2 N) ids, ids >= N
// rejected, self-loops rejected. The first min_in_degree × N edges have their
// destination fixed to every node in turn (each node then has at least min_in_degree
// in-neighbors to aggregate); the rest are plain R-MAT, so in-degrees stay heavy-tailed.
// Classes: ids are cut into blocks of C consecutive ids, each block holds every class
// once in a per-block random rotation. With probability `homophily` an edge's source is
// moved inside its block to the destination's class, else to a uniformly chosen other
// class: a fraction ≈ H of edges joins same-class nodes, R-MAT's block structure (hence
// the degree distribution) is untouched.
// Features: class centroid (entries N(0, signal²/F), so centroids are ≈ signal·√2 apart
// whatever F) plus N(0, noise²) per entry. Defaults make features alone weak (a nearest
// centroid classifier gets ≈ 0.45 with 10 classes) while the mean of a node's
// in-neighbors recovers its class.
// Ids: a keyed Feistel permutation (cycle-walking onto [0, N)) relabels every node at the
// end, so id order carries neither degree nor class. Everything is a pure function of
// (seed, edge or node number): deterministic whatever the thread count.
// Memory: streams through the external CSC builder within memory_budget_bytes.
//
// direct_csc = true (`seer gen --direct-csc`, for graphs whose edge spill would not fit
// the disk or whose degree table would not fit the budget, e.g. a billion nodes): no
// edge list, no sort, no spill. Destinations are visited in id order, block_nodes at a
// time; each node's in-degree is a pure function of (seed, node): min_in_degree plus a
// Poisson draw whose mean is R-MAT's destination marginal for the node's R-MAT-space id
// (scaled so the expected edge count is round(N × avg_degree)), and each in-neighbor is
// drawn from R-MAT's source marginal (the same heavy-tailed out-degrees), then moved to
// the destination's class with probability `homophily` as above. Lists are sorted, the
// node ids permuted as above, and indptr/indices are appended block by block, so memory
// is O(block_nodes + the block's edges) whatever N (no per-node array). A different
// graph from the default mode's (same family: R-MAT degrees, same classes, features and
// splits); the edge count is a random variable close to round(N × avg_degree).
#pragma once

#include <cstdint>
#include <string>

#include "storage/dataset/dataset.h"
#include "storage/base/status.h"

namespace seer {

struct SyntheticGraphConfig {
  int64_t num_nodes = 10000;
  double avg_degree = 10;             // edges = round(num_nodes × avg_degree)
  int64_t feature_dim = 32;
  int64_t num_classes = 10;
  uint64_t seed = 1;
  FeatureDtype feature_dtype = FeatureDtype::kFloat32;
  double train_fraction = 0.1;
  double valid_fraction = 0.05;
  double test_fraction = 0.05;
  double homophily = 0.8;             // fraction of edges joining same-class nodes
  double rmat_a = 0.57, rmat_b = 0.19, rmat_c = 0.19;  // d = 1 - a - b - c
  double feature_signal = 1.5;        // centroid separation scale (see above)
  double feature_noise = 1.0;         // per-entry noise standard deviation
  int64_t min_in_degree = -1;         // -1: floor(avg_degree / 2)
  int64_t memory_budget_bytes = int64_t{512} << 20;
  bool show_progress = false;
  bool direct_csc = false;            // see above: per-destination blocks, no spill
  int64_t block_nodes = 1 << 16;      // direct_csc: destinations per block
  std::string created_by = "seer gen";
};

struct SyntheticGraphSummary {
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  int64_t bytes_written = 0;
  int64_t num_partitions = 0;   // of the external CSC build (direct_csc: blocks)
  // direct_csc: the most edges one block held in RAM (the topology buffer's size, which
  // is what bounds the pass's memory: O(block_nodes + this)).
  int64_t max_block_edges = 0;
  int64_t num_train = 0, num_valid = 0, num_test = 0;
};

// Checks ranges (N >= 1, fractions in [0,1] summing to <= 1, H in [0,1], R-MAT
// probabilities, C >= 1, F >= 0 ...). Errors are kInvalidArgument naming the field.
Status ValidateSyntheticGraphConfig(const SyntheticGraphConfig& config);

// Writes a complete dataset into out_dir (created if missing; an existing dataset
// there needs force). On error no dataset.json is left behind.
Result<SyntheticGraphSummary> GenerateSyntheticDataset(const SyntheticGraphConfig& config,
                                                       const std::string& out_dir, bool force);

// Writes only the generator's edges, in generation order (unsorted), as "src dst" text
// lines (path ending in .txt/.csv) or raw int64 pairs (anything else; e.g. *.bin64) —
// input for `seer prep` benchmarks and tests. Streams; constant memory.
Status WriteSyntheticEdgeList(const SyntheticGraphConfig& config, const std::string& path);

}  // namespace seer
