// Node tables of `seer prep`: a labels table (--labels FILE that is not .npy: an id column
// and a label column) and id lists (--train/--valid/--test FILE that is not .npy: one id
// column), text/CSV/TSV as storage/prep/text_table.h (".gz" too), keyed by node id:
//   original ids (--remap-ids)  any token, the edge list's ids (IdSortKey: "007" is not 7);
//   integer ids (otherwise)     the graph's node ids (ParseNumber: "007" is 7).
// Labels: integers in [0, 2^31) and below the class limit (--num-classes, else
// kMaxAutoClasses); an empty or missing label field leaves the node unlabeled; an id on
// two lines with two labels is an error naming both lines (the same label twice is
// allowed). Id lists: an id on two lines is an error naming both.
//
// A table is read and sorted when started (its errors come before the long build: every
// one names file:line), then joined with the nodes in id order by the one external join
// (storage/prep/id_join.h): Match per node during IdRemap's renumbering, or
// MatchIntegerNodes for nodes 0..N-1. The result is a scratch file in node order:
//   labels  int32 per node, -1 for a node without a label;
//   ids     (node, line) int64 pairs of the listed nodes, ascending.
// Ids that are not nodes of the graph are skipped and counted (not_in_graph()). Memory:
// half the budget while sorting, then one record per sorted run. Files live in a
// ScratchDir under work_dir, removed with the NodeTable. Blocking, single-threaded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/base/scratch_dir.h"
#include "storage/base/status.h"
#include "storage/prep/id_join.h"
#include "storage/prep/record_sorter.h"

namespace seer {

struct NodeTableOptions {
  bool original_ids = false;   // --remap-ids
  int64_t label_limit = 0;     // labels must be below it
  bool declared_classes = false;  // the limit is --num-classes (for the message)
  int64_t memory_budget_bytes = int64_t{512} << 20;
  std::string work_dir;
  bool show_progress = false;
};

class NodeTable {
 public:
  enum class Kind { kLabels, kIds };

  // id_col/label_col: header name or 0-based index (text_table.h).
  static Result<std::unique_ptr<NodeTable>> StartLabels(const std::string& path, const std::string& id_col,
                                                        const std::string& label_col, const NodeTableOptions& options);
  static Result<std::unique_ptr<NodeTable>> StartIds(const std::string& path, const std::string& id_col,
                                                     const NodeTableOptions& options);
  ~NodeTable();
  NodeTable(const NodeTable&) = delete;
  NodeTable& operator=(const NodeTable&) = delete;

  // The next node (0, 1, ... in id order) and its IdSortKey.
  Status Match(std::string_view sort_key, int64_t node);
  // Integer ids: Match for nodes 0..num_nodes-1 (node k is id k), then Finish.
  Status MatchIntegerNodes(int64_t num_nodes);
  // After the last node: closes the result.
  Status Finish(int64_t num_nodes);

  Kind kind() const { return kind_; }
  const std::string& path() const { return path_; }
  const std::string& result_path() const { return result_path_; }
  int64_t matched() const { return matched_; }        // labeled / listed nodes
  int64_t not_in_graph() const { return join_->unmatched_keys(); }  // distinct ids (after Finish)

 private:
  NodeTable(Kind kind, std::string path) : kind_(kind), path_(std::move(path)) {}
  Status Read(const std::string& id_col, const std::string& label_col, const NodeTableOptions& options);
  Status AddLabelLine(std::string_view id, std::string_view label, int64_t line, const NodeTableOptions& options);

  Kind kind_;
  std::string path_;
  ScratchDir scratch_;            // declared before the join: outlives its runs
  std::unique_ptr<IdJoin> join_;
  std::string key_;               // scratch for keys
  std::string result_path_;
  std::unique_ptr<SequentialWriter> result_;
  int64_t next_node_ = 0, matched_ = 0;
};

}  // namespace seer
