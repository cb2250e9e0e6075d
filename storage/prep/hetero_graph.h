// A synthetic typed (heterogeneous) dataset with an IGBH-like schema: what
// `seer gen --hetero` writes (docs/formats.md "Typed datasets").
//
// Node types, in manifest order: paper (features, labels, train/valid/test splits),
// author, institute, fos (field of study; features unless listed in `featureless`).
// Relations (each a CSC over its destination type, source-type local ids), in manifest
// order, the reverse after each forward one when `reverse`:
//   paper__cites__paper               cites_per_paper per paper      (reverse paper__cited_by__paper)
//   paper__written_by__author         authors_per_paper per paper    (reverse author__writes__paper)
//   author__affiliated_with__institute institutes_per_author per author (reverse institute__has_member__author)
//   paper__topic__fos                 topics_per_paper per paper     (reverse fos__topic_of__paper)
// A reverse relation holds exactly the forward one's edges, transposed.
//
// The planted structure (what makes paper labels learnable): every node of every type
// has a community in [0, C) (C = num_classes): ids are cut into groups of C consecutive
// ids, each group holds every community once in a per-(type, group) random rotation.
// A paper's label is its community. Features are the (type, community) centroid plus
// noise, as `seer gen`'s (synthetic_graph.h). With probability `homophily` an edge's
// source is moved within its group to the destination's community (else to another one),
// so every relation mostly joins nodes of one community.
//
// Edges: for each forward relation, both types are cut into blocks (a multiple of C
// nodes, sized so a block holds about block_edges edges of the relation, at most
// block_nodes nodes, at least C nodes or the whole type). The edges between source block a and destination block b are a
// pure function of (seed, relation, a, b): Poisson(E × |a|/n_src × |b|/n_dst) of them,
// each endpoint drawn inside its block R-MAT style (each bit 0 with probability `skew`,
// XOR a per-block mask: heavy-ish tailed degrees), then the homophily move above;
// self loops are redrawn, an edge drawn twice is stored once. The forward relation's CSC
// is written destination block by destination block (all source blocks' edges into that
// block drawn, grouped by destination, each list sorted), the reverse one's source
// block by source block from the very same draws — so neither ever holds more than one
// block's edges. The edge count is a random variable close to the expected one.
//
// Memory: O(block_edges × 24 B + block_nodes × 8 B + (n / block) × 8 B) for the
// topology, plus 8192 feature rows and 1 MiB of write buffer per output file (36 files
// with every type featured and reverses): 134 MiB peak RSS at 1M papers (36M edges),
// 150 MiB at 10M papers (360M edges) with the defaults. Deterministic for a seed, whatever the thread count (TBB through
// seer::ParallelFor). Blocking; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

struct HeteroGraphConfig {
  int64_t num_papers = 10000;
  // -1: ratios to the papers between IGBH-small's and IGBH-full's: authors = papers,
  // institutes = max(1, papers / 1000), fos = max(1, papers / 100).
  int64_t num_authors = -1;
  int64_t num_institutes = -1;
  int64_t num_fos = -1;
  double cites_per_paper = 10;
  double authors_per_paper = 3;
  double institutes_per_author = 1;
  double topics_per_paper = 4;
  int64_t feature_dim = 128;  // every featured type (IGBH: 1024)
  FeatureDtype feature_dtype = FeatureDtype::kFloat32;
  std::vector<std::string> featureless;  // node types written without features, e.g. {"institute", "fos"}
  int64_t num_classes = 19;              // paper labels (IGBH: 19 or 2983)
  bool reverse = true;                   // add the four reverse relations
  double homophily = 0.8;
  double skew = 0.6;  // probability of a 0 bit when an endpoint is drawn in its block (0.5: uniform)
  double feature_signal = 1.5;
  double feature_noise = 1.0;
  double train_fraction = 0.6, valid_fraction = 0.2, test_fraction = 0.2;  // of the papers
  uint64_t seed = 1;
  int64_t block_edges = int64_t{1} << 22;  // target edges per block (memory above)
  int64_t block_nodes = int64_t{1} << 20;  // at most this many nodes per block
  bool show_progress = false;
  std::string created_by = "seer gen --hetero";
};

struct HeteroGraphSummary {
  int64_t num_nodes = 0;  // all types
  int64_t num_edges = 0;  // all relations
  int64_t bytes_written = 0;
  int64_t max_block_edges = 0;  // the most edges one block held in RAM
  int64_t num_train = 0, num_valid = 0, num_test = 0;  // papers
  DatasetManifest manifest;  // as committed
};

// Ranges (papers >= 1, counts >= 1 or -1, degrees in [0, 1e6], fractions, C >= 1,
// homophily and skew in [0, 1] / (0, 1), featureless names known types); kInvalidArgument
// naming the field.
Status ValidateHeteroGraphConfig(const HeteroGraphConfig& config);

// Writes the dataset into out_dir through DatasetWriter (an existing dataset there needs
// force; nothing of a failed run is left as a dataset).
Result<HeteroGraphSummary> GenerateHeteroDataset(const HeteroGraphConfig& config, const std::string& out_dir,
                                                 bool force);

}  // namespace seer
