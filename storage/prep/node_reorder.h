// `seer reorder`: renumbers the nodes of a dataset so that rows sampled together share
// 4 KiB blocks of features.bin, and writes the renumbered dataset (topology, features,
// labels, splits, node_ids.txt, node_order.bin) through a DatasetWriter: atomically, into
// a new directory or over the input with force (the input stays intact until Commit).
//
// Orders (new node k = old node order[k]):
//   * kDegree: by out-degree (how often a row is sampled as a neighbor), highest first,
//     ties by old number: the hot rows share blocks.
//   * kBfs: breadth-first over in-neighbor lists (the lists the sampler draws from), roots
//     in old order: a node's not-yet-numbered in-neighbors get consecutive numbers, so the
//     rows one sampling step reads are neighbors in the file (Cuthill-McKee-like, without
//     the degree sort inside a level).
// Memory: indptr (8 B/node) + the order and its inverse (16 B/node) + a visited bitmap;
// indices.bin and features.bin are mapped read-only (the page cache holds what is read).
// Time: one pass over the edges to order (bfs; degree: one scan of indices and a sort of
// the nodes), one to relabel, one random read of each feature row.
// Single-threaded; blocking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

enum class NodeOrderMethod { kDegree, kBfs };
Result<NodeOrderMethod> ParseNodeOrderMethod(const std::string& text);  // "degree" | "bfs"
const char* NodeOrderMethodName(NodeOrderMethod method);

// The order alone: order[k] = the old node that becomes node k.
Result<std::vector<int64_t>> ComputeNodeOrder(const Dataset& dataset, NodeOrderMethod method);

// The mean number of distinct 4 KiB blocks of features.bin that one node's in-neighbor
// rows occupy (over nodes with at least one in-neighbor), with the nodes numbered by
// `new_of_old` (empty = as they are). One pass over the edges.
Result<double> MeanBlocksPerNeighborList(const Dataset& dataset, const std::vector<int64_t>& new_of_old);

struct ReorderOptions {
  NodeOrderMethod method = NodeOrderMethod::kBfs;
  bool force = false;           // write over an existing dataset (out_dir may be the input)
  std::string created_by;       // recorded in the manifest
  bool show_progress = true;
  // > 0: bounded memory (external sorts and streamed passes, the same output): the sort
  // buffers take this many bytes; bfs also keeps 1 bit per node, degree a uint32 per node
  // of one range of nodes at a time (storage/prep/node_reorder_external.cc). 0: the
  // in-memory pass above (24 B per node).
  int64_t memory_budget_bytes = 0;
};

struct ReorderSummary {
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  double order_seconds = 0;
  double rewrite_seconds = 0;
  double blocks_per_list_before = 0;  // MeanBlocksPerNeighborList, old numbering
  double blocks_per_list_after = 0;   // new numbering
};

Result<ReorderSummary> ReorderDataset(const std::string& in_dir, const std::string& out_dir,
                                      const ReorderOptions& options);

}  // namespace seer
