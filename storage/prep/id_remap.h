// Dense renumbering of a text edge list's node ids for `seer prep --remap-ids`: ids may be
// any tokens (strings, sparse or huge integers); node k of the dataset is the k-th
// distinct id in the order of storage/dataset/node_ids.h (integers by value, then other
// tokens by bytes). The nodes are the ids of the edges plus, when given, every id of a
// --node-ids file (`extra_ids_path`: one per line, trimmed, as node_rows.h reads it):
// those in no edge are nodes of degree 0 (isolated_nodes()).
//
// Bounded memory, one external sort and one scatter (never a hash map of all ids):
//   1. every endpoint becomes a record (id, position 2e or 2e+1), every extra id a record
//      (id, kNoEdge), sorted in runs that fit the budget (storage/prep/record_sorter.h)
//      and merged: each new id gets the next dense number and its line in the mapping
//      file (`node_ids.txt`: line k+1 = original id of node k);
//   2. each position's dense id goes into a DenseScatter (storage/prep/dense_scatter.h:
//      a table of 2E slots, in range buckets when it does not fit), which writes them in
//      edge order as int64 pairs to a temporary bin64 edge list that the CSC builder
//      then reads.
// Ids that could not be read back from node_ids.txt (a '\r' or NUL byte, invalid UTF-8,
// a blank at either end: IdRoundTripProblem) are refused naming the file and line.
// The header rule of storage/prep/edge_list.h: without a named column (and with
// HeaderRule::kAuto) the first data line is held back while the file is read; it is a
// header when both its ids are not integers and neither occurs on another line
// (header_line()), else it is the last edge (the CSC sorts every neighbor list, so the
// dataset does not depend on the edge order).
// Runs, buckets and the temporary list live in a private directory under `work_dir`,
// removed by ~IdRemap. Blocking; the sort's runs are sorted on the caller's TBB arena,
// the rest runs on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "storage/base/atomic_file.h"
#include "storage/base/scratch_dir.h"
#include "storage/base/status.h"
#include "storage/dataset/node_ids.h"
#include "storage/prep/edge_list.h"

namespace seer {

class IdRemap {
 public:
  ~IdRemap();
  IdRemap(const IdRemap&) = delete;
  IdRemap& operator=(const IdRemap&) = delete;

  // Called once per distinct id, in order (node = 0, 1, ...), with its IdSortKey; an
  // error stops the build and is returned.
  using NodeVisitor = std::function<Status(std::string_view sort_key, int64_t node)>;

  // Reads `text_path` (text/CSV edge list as edge_list.h, header rule above) and
  // `extra_ids_path` (if not empty), writes the mapping to `node_ids` and the renumbered
  // edges to edges_path(), and shows each node to `on_node` (if set) as it is numbered.
  // Errors name the file and line.
  static Result<std::unique_ptr<IdRemap>> Build(const std::string& text_path, const TextColumns& columns,
                                                int64_t memory_budget_bytes, const std::string& work_dir,
                                                AtomicFileWriter& node_ids, bool show_progress,
                                                const NodeVisitor& on_node = {},
                                                const std::string& extra_ids_path = "");

  int64_t num_nodes() const { return num_nodes_; }
  int64_t num_edges() const { return num_edges_; }
  // True when every id is a canonical integer: then original_ids() holds them.
  bool integer_ids() const { return integer_ids_; }
  // bin64 edge list with dense ids.
  const std::string& edges_path() const { return edges_path_; }
  // int64 file of the original integer ids in dense order (only when integer_ids()).
  const std::string& original_ids_path() const { return original_ids_path_; }
  // Nodes that are in no edge (ids of `extra_ids_path` only).
  int64_t isolated_nodes() const { return isolated_nodes_; }
  // The line read as a header by the rule's detection ("" when none, or when the header
  // came from a named column or HeaderRule::kYes), and its line number.
  const std::string& header_line() const { return header_line_; }
  int64_t header_line_number() const { return header_line_number_; }
  // Comment lines after the first data line (TextPairReader::comments_after_data).
  int64_t comments_after_data() const { return comments_after_data_; }

 private:
  IdRemap() = default;
  ScratchDir scratch_;  // .seer-remap-PID-*: sort runs, the edges and ids files
  std::string edges_path_, original_ids_path_;
  int64_t num_nodes_ = 0, num_edges_ = 0, isolated_nodes_ = 0;
  bool integer_ids_ = true;
  std::string header_line_;
  int64_t header_line_number_ = 0, comments_after_data_ = 0;
};

}  // namespace seer
