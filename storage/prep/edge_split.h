// `seer split-edges`: holds out validation and test edges of a dataset for link
// prediction and writes the dataset without them (docs/formats.md "Edge splits";
// the files' reading side and check: storage/dataset/edge_splits.h).
//
// The candidates are the distinct (src, dst) pairs of the topology (a pair stored twice
// is one candidate); with `undirected` only the pairs with src <= dst, so an edge stored
// both ways (`seer prep --undirected`) is drawn once. round(valid_fraction × candidates)
// and round(test_fraction × candidates) of them are drawn uniformly without replacement
// (EdgeSplitDraw: one pass of selection sampling keyed by the seed; the same seed gives
// byte-identical files) and written to edges_valid.bin / edges_test.bin. The output's
// topology is the input's with every copy of each held-out edge removed and, with
// `undirected`, every copy of its reverse; the lists keep their order. Every other file
// (features, labels, node splits, node_ids.txt, node_order.bin) is copied as it is, its
// checksum verified against the input's manifest on the way.
//
// With eval_negatives = K > 0, each held-out edge also gets K negative destinations drawn
// uniformly from [0, num_nodes) (EvalNegativesStream: one stream per split from the seed
// and the split's name), written as they are drawn to edges_valid_negatives.bin /
// edges_test_negatives.bin (int64, row i = the negatives of pair i); not filtered against
// the true edges (OGB citation2's protocol). K = 0 writes exactly what it wrote before.
//
// Written through a DatasetWriter, so like `seer reorder`: a new directory, or over an
// existing dataset only with force (staged, the old one intact until Commit); the input
// is only read. A dataset that already has edge splits is refused (split the one they
// were made from).
// Memory: HeldOutEdgeSet::kBytesPerEdge (24 B) per held-out edge, the longest neighbor
// list (twice, as int64) and 1 MiB buffers; nothing per node or per kept edge. Time:
// three sequential passes over indptr.bin and indices.bin (count, draw, write), a sort of
// each list in the first two, one binary search per edge in the third, a copy of the rest.
// Single-threaded; blocking.
#pragma once

#include <cstdint>
#include <string>

#include "storage/base/random.h"
#include "storage/base/status.h"

namespace seer {

struct EdgeSplitOptions {
  double valid_fraction = 0.05;
  double test_fraction = 0.1;
  uint64_t seed = 1;
  bool undirected = false;  // also remove each held-out edge's reverse; draw only src <= dst
  int64_t eval_negatives = 0;  // K fixed evaluation negatives per held-out edge; 0 = none
  bool force = false;       // write over an existing dataset (out_dir may be the input)
  std::string created_by;   // recorded in the manifest
  bool show_progress = true;
};

// Each fraction in [0, 1), their sum below 1 (kInvalidArgument naming the flag).
Status ValidateEdgeSplitFractions(double valid_fraction, double test_fraction);
// --eval-negatives in [0, DatasetEdgeSplits::kMaxNegativesPerEdge] (kInvalidArgument).
Status ValidateEvalNegatives(int64_t eval_negatives);

// Selection sampling over `candidates` items in a fixed order: Next() is called once per
// candidate and says where it goes; exactly num_valid go to valid and num_test to test,
// every such assignment equally likely (Knuth's Algorithm S, then each selected item to
// valid with probability valid left / selections left). One SplitMix64 stream from the seed.
class EdgeSplitDraw {
 public:
  enum class Slot { kTrain, kValid, kTest };
  EdgeSplitDraw(int64_t candidates, int64_t num_valid, int64_t num_test, uint64_t seed);
  Slot Next();  // a broken contract (std::logic_error) past the last candidate

 private:
  SplitMix64 rng_;
  int64_t left_candidates_, left_valid_, left_test_;
};

struct EdgeSplitSummary {
  int64_t num_nodes = 0;
  int64_t input_edges = 0;      // num_edges of the input
  int64_t candidate_edges = 0;  // distinct pairs drawn from
  int64_t num_valid = 0, num_test = 0;
  int64_t output_edges = 0;     // num_edges of the output (input minus every removed copy)
  double seconds = 0;
};

Result<EdgeSplitSummary> SplitEdges(const std::string& in_dir, const std::string& out_dir,
                                    const EdgeSplitOptions& options);

}  // namespace seer
