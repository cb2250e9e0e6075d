// Which row of the node arrays (features, labels) of a `seer prep --remap-ids` dataset
// belongs to each node, and which node a split entry names. Two rules:
//   by id    (integer ids, no --node-ids) row r belongs to original id r: the arrays need
//            at least largest id + 1 rows (rows of ids not in the graph are skipped);
//            split arrays list original ids (binary search in the remap's id file).
//   by file  (--node-ids FILE) line r+1 of FILE is the original id of row r: the arrays
//            need exactly as many rows as FILE has lines; split arrays list rows (like
//            OGB split indices). Every node of the edge list needs a line.
// FILE is a text file (".gz" read through zlib) with one id per line, surrounding blanks
// and '\r' trimmed, no header or comments, in any order: node_ids.txt is one. Ids compare
// as in storage/dataset/node_ids.h, so "007" is not 7, as in the edge list. Every id of
// FILE is a node (IdRemap reads FILE too): an id in no edge is a node of degree 0 whose
// features, labels and split entries are kept like any other's. An id that could not be
// written back to node_ids.txt unchanged (IdRoundTripProblem) is refused naming its line.
//
// The by-file rule is an external join within the memory budget (never a map of all ids):
// NodeRowJoin joins FILE's (id, row) records with the nodes IdRemap's renumbering shows
// in id order (storage/prep/id_join.h) into an int64 file row_of_node[k]; Finish
// scatters (row, node) back by row (storage/prep/dense_scatter.h) into node_of_row[r]
// (-1: row r's id is not a node). Both files live in a private directory
// under the work dir, removed with the NodeRows. Blocking, single-threaded; lookups are
// one pread each and const (safe from several threads).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/base/scratch_dir.h"
#include "storage/base/status.h"
#include "storage/base/unique_fd.h"
#include "storage/prep/id_join.h"
#include "storage/prep/record_sorter.h"

namespace seer {

// The id on a line of a --node-ids FILE: the line without surrounding blanks and '\r'.
std::string_view NodeIdsFileId(std::string_view line);

class NodeRows {
 public:
  ~NodeRows();
  NodeRows(const NodeRows&) = delete;
  NodeRows& operator=(const NodeRows&) = delete;

  // By id: `original_ids_path` holds the int64 original id of each of `num_nodes` nodes,
  // ascending (IdRemap::original_ids_path(); not owned, must outlive this).
  static Result<std::unique_ptr<NodeRows>> ById(const std::string& original_ids_path, int64_t num_nodes);

  // Rows of nodes [first, first + n) into rows[0, n).
  Status RowsOf(int64_t first, int64_t n, int64_t* rows) const;
  // The node a split entry names (an original id by id, a row by file), or -1.
  Result<int64_t> NodeOf(int64_t entry) const;
  // Why NodeOf(entry) is -1, as the end of a one-line error ("row 4 of ids.txt (line 5)
  // is not a node of the edge list").
  std::string NotANode(int64_t entry) const;
  // Ok when an array with `rows` rows fits the rule; else kInvalidArgument naming `path`
  // and `what` ("feature rows", "labels").
  Status CheckArrayRows(const std::string& path, int64_t rows, const char* what) const;
  // By file: FILE's lines whose id is not a node of the graph (0 by id, and 0 when
  // IdRemap was given FILE too).
  int64_t unmatched_rows() const { return unmatched_rows_; }
  bool by_file() const { return !ids_path_.empty(); }

 private:
  friend class NodeRowJoin;
  NodeRows() = default;

  int64_t num_nodes_ = 0;
  // By id.
  std::string original_ids_path_;
  UniqueFd original_ids_;
  // By file.
  std::string ids_path_;
  int64_t num_rows_ = 0, unmatched_rows_ = 0;
  ScratchDir scratch_;  // by file: .seer-rows-PID-* with the sort runs and both tables
  std::string row_of_node_path_, node_of_row_path_;
  UniqueFd row_of_node_, node_of_row_;
};

// The by-file join, in three steps around IdRemap::Build:
//   auto join = NodeRowJoin::Start(FILE, ...);          // reads and sorts FILE
//   IdRemap::Build(..., [&](key, node) { return join->Match(key, node); });
//   auto rows = join->Finish(remap->num_nodes());       // -> NodeRows
// Errors name FILE: an empty line or an id that does not round-trip (with its line), a
// repeated id (both lines), the first node id missing from FILE.
class NodeRowJoin {
 public:
  ~NodeRowJoin();
  NodeRowJoin(const NodeRowJoin&) = delete;
  NodeRowJoin& operator=(const NodeRowJoin&) = delete;

  static Result<std::unique_ptr<NodeRowJoin>> Start(const std::string& ids_path, int64_t memory_budget_bytes,
                                                    const std::string& work_dir, bool show_progress);
  // The rule's row check is known from the start (FILE's line count): arrays can be
  // checked before the long renumbering and CSC build.
  const NodeRows& rows() const { return *rows_; }
  // The next node (0, 1, ... in id order) and its IdSortKey.
  Status Match(std::string_view sort_key, int64_t node);
  // After the last Match: builds node_of_row and hands over the NodeRows.
  Result<std::unique_ptr<NodeRows>> Finish(int64_t num_nodes);

 private:
  NodeRowJoin(std::unique_ptr<NodeRows> rows, int64_t sort_bytes);
  std::unique_ptr<NodeRows> rows_;  // declared first: its directory outlives the runs
  int64_t sort_bytes_;
  IdJoin by_id_;
  std::unique_ptr<SequentialWriter> row_of_node_;
  int64_t next_node_ = 0;
};

}  // namespace seer
