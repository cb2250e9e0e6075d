// The optional node order of a dataset (`seer reorder`): `node_order.bin`, int64[num_nodes],
// entry k = the number node k had before the dataset was renumbered (its line in
// node_ids.txt when the dataset has one, else the input's own integer id). Recorded in
// dataset.json as "node_order" (the file) and "node_order_method" (how it was computed).
// A second reorder composes: the file always maps to the numbering before the first one.
//
// OriginalIds answers both directions for a dataset, whatever it has: node k's original
// id (node_ids.txt, node_order.bin, both or neither) and the node of an original id. It
// loads node_ids.txt (its lines) and node_order.bin plus its inverse (16 B/node) into
// memory: meant for `seer predict` and tools, not for the data path. Thread-safe after
// Load (const).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

namespace dataset_files {
inline constexpr const char* kNodeOrder = "node_order.bin";
}  // namespace dataset_files

// Streams `path` (int64[num_nodes]) and checks it is a permutation of [0, num_nodes):
// each entry in range and none twice (a bitmap of num_nodes bits). Errors name the file
// and the entry.
Status CheckNodeOrderFile(const std::string& path, int64_t num_nodes);

// Loads node_order.bin of a dataset (checked as above); empty when it has none.
Result<std::vector<int64_t>> LoadNodeOrder(const Dataset& dataset);

class OriginalIds {
 public:
  static Result<OriginalIds> Load(const Dataset& dataset);
  // `count` nodes whose original ids are the lines of the mapping file `path` (checked as
  // LoadNodeIds does), or "k" for node k when `path` is "": a typed dataset's node type
  // (DatasetNodeType::node_ids, local ids). No node order.
  static Result<OriginalIds> LoadNodeIdsFile(const std::string& path, int64_t count);

  int64_t num_nodes() const { return num_nodes_; }
  // True when node k's original id is "k" (no node_ids.txt, never reordered).
  bool identity() const { return ids_.empty() && order_.empty(); }
  bool has_id_file() const { return !ids_.empty(); }
  // Node k's original id; k must be in [0, num_nodes).
  std::string IdOf(int64_t node) const;
  // The node whose original id is `id`, or -1 when no node has it. Without node_ids.txt
  // ids are canonical non-negative integers ("7", not "07" or "+7").
  int64_t NodeOf(std::string_view id) const;

 private:
  int64_t num_nodes_ = 0;
  std::vector<std::string> ids_;      // node_ids.txt lines (sorted); empty when none
  std::vector<int64_t> order_;        // node -> number before the reorder; empty when none
  std::vector<int64_t> node_of_rank_; // the inverse of order_
};

}  // namespace seer
