// Dense renumbering of a text edge list's node ids for `seer prep --remap-ids`: ids may be
// any tokens (strings, sparse or huge integers); node k of the dataset is the k-th
// distinct id in the order of storage/dataset/node_ids.h (integers by value, then other
// tokens by bytes).
//
// Bounded memory, one external sort and one scatter (never a hash map of all ids):
//   1. every endpoint becomes a record (id, position 2e or 2e+1), sorted in runs that fit
//      the budget (storage/prep/record_sorter.h) and merged: each new id gets the next
//      dense number and its line in the mapping file (`node_ids.txt`: line k+1 = original
//      id of node k);
//   2. each position's dense id goes into a DenseScatter (storage/prep/dense_scatter.h:
//      a table of 2E slots, in range buckets when it does not fit), which writes them in
//      edge order as int64 pairs to a temporary bin64 edge list that the CSC builder
//      then reads.
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

  // Reads `text_path` (text/CSV edge list as edge_list.h; no header detection unless a
  // column is named), writes the mapping to `node_ids` and the renumbered edges to
  // edges_path(), and shows each node to `on_node` (if set) as it is numbered. Errors
  // name the file and line.
  static Result<std::unique_ptr<IdRemap>> Build(const std::string& text_path, const TextColumns& columns,
                                                int64_t memory_budget_bytes, const std::string& work_dir,
                                                AtomicFileWriter& node_ids, bool show_progress,
                                                const NodeVisitor& on_node = {});

  int64_t num_nodes() const { return num_nodes_; }
  int64_t num_edges() const { return num_edges_; }
  // True when every id is a canonical integer: then original_ids() holds them.
  bool integer_ids() const { return integer_ids_; }
  // bin64 edge list with dense ids.
  const std::string& edges_path() const { return edges_path_; }
  // int64 file of the original integer ids in dense order (only when integer_ids()).
  const std::string& original_ids_path() const { return original_ids_path_; }

 private:
  IdRemap() = default;
  ScratchDir scratch_;  // .seer-remap-PID-*: sort runs, the edges and ids files
  std::string edges_path_, original_ids_path_;
  int64_t num_nodes_ = 0, num_edges_ = 0;
  bool integer_ids_ = true;
};

}  // namespace seer
