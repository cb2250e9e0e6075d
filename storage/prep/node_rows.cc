#include "storage/prep/node_rows.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/dataset/node_ids.h"
#include "storage/prep/dense_scatter.h"
#include "storage/prep/text_reader.h"

namespace seer {
namespace {

std::string RowWhere(const std::string& ids_path, int64_t row) {
  return "row " + std::to_string(row) + " of " + ids_path + " (line " + std::to_string(row + 1) + ")";
}

}  // namespace

std::string_view NodeIdsFileId(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

NodeRows::~NodeRows() = default;  // the scratch directory takes its files with it

Result<std::unique_ptr<NodeRows>> NodeRows::ById(const std::string& original_ids_path, int64_t num_nodes) {
  std::unique_ptr<NodeRows> rows(new NodeRows());
  rows->num_nodes_ = num_nodes;
  rows->original_ids_path_ = original_ids_path;
  SEER_ASSIGN_OR_RETURN(rows->original_ids_, UniqueFd::Open(original_ids_path, O_RDONLY));
  return rows;
}

Status NodeRows::RowsOf(int64_t first, int64_t n, int64_t* rows) const {
  if (by_file()) return PreadFull(row_of_node_.get(), rows, n * 8, first * 8, row_of_node_path_);
  return PreadFull(original_ids_.get(), rows, n * 8, first * 8, original_ids_path_);
}

Result<int64_t> NodeRows::NodeOf(int64_t entry) const {
  int64_t node = -1;
  if (by_file()) {
    if (entry < 0 || entry >= num_rows_) return node;
    SEER_RETURN_IF_ERROR(PreadFull(node_of_row_.get(), &node, 8, entry * 8, node_of_row_path_));
    return node;
  }
  // By id: the first node whose original id is >= entry (the file is ascending).
  int64_t lo = 0, hi = num_nodes_;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    int64_t id;
    SEER_RETURN_IF_ERROR(RowsOf(mid, 1, &id));
    if (id < entry) lo = mid + 1;
    else hi = mid;
  }
  if (lo < num_nodes_) {
    int64_t id;
    SEER_RETURN_IF_ERROR(RowsOf(lo, 1, &id));
    if (id == entry) node = lo;
  }
  return node;
}

std::string NodeRows::NotANode(int64_t entry) const {
  if (!by_file()) return "node id " + std::to_string(entry) + " does not occur in the edge list";
  if (entry < 0 || entry >= num_rows_) {
    return "row " + std::to_string(entry) + " out of range [0, " + std::to_string(num_rows_) + ") (" + ids_path_ +
           " has " + std::to_string(num_rows_) + " lines; with --node-ids split arrays hold rows)";
  }
  return RowWhere(ids_path_, entry) + " has an id that is not a node of the edge list";
}

Status NodeRows::CheckArrayRows(const std::string& path, int64_t rows, const char* what) const {
  if (by_file()) {
    if (rows == num_rows_) return Status::Ok();
    return InvalidArgument(path + ": " + std::to_string(rows) + " " + what + ", but " + ids_path_ + " has " +
                           std::to_string(num_rows_) + " lines (--node-ids: row r belongs to the id on line r+1)");
  }
  if (num_nodes_ == 0) return Status::Ok();
  int64_t largest = 0;
  SEER_RETURN_IF_ERROR(RowsOf(num_nodes_ - 1, 1, &largest));
  if (largest >= rows) {
    return InvalidArgument(path + ": " + std::to_string(rows) + " " + what + ", but the edge list has node id " +
                           std::to_string(largest) + " (with --remap-ids row r belongs to id r; --node-ids FILE "
                           "names the id of each row instead)");
  }
  return Status::Ok();
}

NodeRowJoin::NodeRowJoin(std::unique_ptr<NodeRows> rows, int64_t sort_bytes)
    : rows_(std::move(rows)),
      sort_bytes_(sort_bytes),
      // Records come in (key, row) order, so a repeated id shows with the lower row kept.
      by_id_(rows_->scratch_.path(), "node-ids", sort_bytes,
             [path = rows_->ids_path_](std::string_view key, uint64_t kept, uint64_t row) {
               return InvalidArgument(path + ":" + std::to_string(row + 1) + ": node id '" + IdFromSortKey(key) +
                                      "' repeats line " + std::to_string(kept + 1) + " (--node-ids: one line per id)");
             }) {}

NodeRowJoin::~NodeRowJoin() = default;

Result<std::unique_ptr<NodeRowJoin>> NodeRowJoin::Start(const std::string& ids_path, int64_t memory_budget_bytes,
                                                        const std::string& work_dir, bool show_progress) {
  std::unique_ptr<NodeRows> rows(new NodeRows());
  rows->ids_path_ = ids_path;
  SEER_ASSIGN_OR_RETURN(rows->scratch_, ScratchDir::Create(work_dir, "rows"));
  // Half the budget for the run being sorted, as IdRemap: the two sorts never fill at
  // the same time (this one is merging, one record per run, while IdRemap sorts).
  const int64_t sort_bytes = std::max<int64_t>(memory_budget_bytes / 2, 256 << 10);
  std::unique_ptr<NodeRowJoin> join(new NodeRowJoin(std::move(rows), sort_bytes));
  NodeRows& r = *join->rows_;
  SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(ids_path));
  ProgressReporter progress("remap: reading " + ids_path, -1, "ids", show_progress);
  std::string_view line;
  std::string key;
  for (;;) {
    SEER_ASSIGN_OR_RETURN(bool more, reader.NextLine(&line));
    if (!more) break;
    const std::string_view id = NodeIdsFileId(line);
    if (id.empty()) {
      return InvalidArgument(ids_path + ":" + std::to_string(reader.line_number()) +
                             ": empty node id (--node-ids: line r+1 holds the id of row r of the node arrays)");
    }
    if (const char* problem = IdRoundTripProblem(id)) {
      return InvalidArgument(ids_path + ":" + std::to_string(reader.line_number()) + ": node id '" + EscapeId(id) +
                             "' has " + problem + ": node_ids.txt could not give it back (one id per line)");
    }
    IdSortKeyInto(id, &key);
    SEER_RETURN_IF_ERROR(join->by_id_.Add(key, static_cast<uint64_t>(r.num_rows_)));
    if ((++r.num_rows_ & 0xffff) == 0) progress.Set(r.num_rows_);
  }
  progress.Set(r.num_rows_);
  progress.Finish();
  SEER_RETURN_IF_ERROR(join->by_id_.StartMerge());
  r.row_of_node_path_ = r.scratch_.File("row_of_node.bin");
  SEER_ASSIGN_OR_RETURN(SequentialWriter out, SequentialWriter::Create(r.row_of_node_path_));
  join->row_of_node_ = std::make_unique<SequentialWriter>(std::move(out));
  return join;
}

Status NodeRowJoin::Match(std::string_view sort_key, int64_t node) {
  if (node != next_node_) {
    throw std::logic_error("NodeRowJoin::Match: node " + std::to_string(node) + " out of order (expected " +
                           std::to_string(next_node_) + ")");
  }
  ++next_node_;
  SEER_ASSIGN_OR_RETURN(std::optional<uint64_t> row, by_id_.Match(sort_key));
  if (!row) {
    return InvalidArgument(rows_->ids_path_ + ": no line for node id '" + IdFromSortKey(sort_key) +
                           "' of the edge list (--node-ids: every node needs the row of its features/labels)");
  }
  const int64_t value = static_cast<int64_t>(*row);
  return row_of_node_->Write(&value, sizeof value);
}

Result<std::unique_ptr<NodeRows>> NodeRowJoin::Finish(int64_t num_nodes) {
  if (num_nodes != next_node_) {
    throw std::logic_error("NodeRowJoin::Finish: " + std::to_string(next_node_) + " nodes matched, " +
                           std::to_string(num_nodes) + " expected");
  }
  NodeRows& r = *rows_;
  SEER_RETURN_IF_ERROR(by_id_.Finish());
  r.unmatched_rows_ = by_id_.unmatched_keys();  // repeats are errors: one row per key
  SEER_RETURN_IF_ERROR(row_of_node_->Close());
  row_of_node_.reset();
  r.num_nodes_ = num_nodes;
  // node_of_row: every node's row scattered back (rows without a node read -1).
  {
    SEER_ASSIGN_OR_RETURN(DenseScatter by_row, DenseScatter::Create(r.scratch_.path(), "rows", r.num_rows_, sort_bytes_));
    SEER_ASSIGN_OR_RETURN(SequentialReader row_of_node, SequentialReader::Open(r.row_of_node_path_));
    for (int64_t node = 0; node < num_nodes; ++node) {
      int64_t row;
      SEER_ASSIGN_OR_RETURN(bool more, row_of_node.Read(&row, sizeof row));
      if (!more) return Corrupt(r.row_of_node_path_ + ": ends at node " + std::to_string(node));
      SEER_RETURN_IF_ERROR(by_row.Set(row, node));
    }
    r.node_of_row_path_ = r.scratch_.File("node_of_row.bin");
    SEER_ASSIGN_OR_RETURN(SequentialWriter out, SequentialWriter::Create(r.node_of_row_path_));
    SEER_RETURN_IF_ERROR(by_row.WriteTo(out));
    SEER_RETURN_IF_ERROR(out.Close());
  }
  SEER_ASSIGN_OR_RETURN(r.row_of_node_, UniqueFd::Open(r.row_of_node_path_, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(r.node_of_row_, UniqueFd::Open(r.node_of_row_path_, O_RDONLY));
  return std::move(rows_);
}

}  // namespace seer
