#include "storage/prep/node_tables.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "storage/base/parse_number.h"
#include "storage/base/progress.h"
#include "storage/dataset/node_ids.h"
#include "storage/prep/text_table.h"

namespace seer {
namespace {

// A label record's payload: the label above the line number, so the records of one id
// come ordered by label (two different labels meet as neighbours).
constexpr int kLineBits = 33;
constexpr uint64_t kLineMask = (uint64_t{1} << kLineBits) - 1;
constexpr int64_t kLabelEnd = int64_t{1} << 31;

int64_t LineOf(uint64_t payload) { return static_cast<int64_t>(payload & kLineMask); }
int64_t LabelOf(uint64_t payload) { return static_cast<int64_t>(payload >> kLineBits); }

// The sort key of integer node id `id` (IdSortKey of its canonical text).
void IntegerKey(int64_t id, std::string* key) {
  key->assign(9, '\0');
  PutBigEndian(static_cast<uint64_t>(id), key->data() + 1);
}

}  // namespace

NodeTable::~NodeTable() = default;  // the scratch directory takes its files with it

Result<std::unique_ptr<NodeTable>> NodeTable::StartLabels(const std::string& path, const std::string& id_col,
                                                          const std::string& label_col,
                                                          const NodeTableOptions& options) {
  std::unique_ptr<NodeTable> table(new NodeTable(Kind::kLabels, path));
  SEER_RETURN_IF_ERROR(table->Read(id_col, label_col, options));
  return table;
}

Result<std::unique_ptr<NodeTable>> NodeTable::StartIds(const std::string& path, const std::string& id_col,
                                                       const NodeTableOptions& options) {
  std::unique_ptr<NodeTable> table(new NodeTable(Kind::kIds, path));
  SEER_RETURN_IF_ERROR(table->Read(id_col, "", options));
  return table;
}

Status NodeTable::Read(const std::string& id_col, const std::string& label_col, const NodeTableOptions& options) {
  const bool labels = kind_ == Kind::kLabels;
  SEER_ASSIGN_OR_RETURN(scratch_, ScratchDir::Create(options.work_dir, "table"));
  const int64_t sort_bytes = std::max<int64_t>(options.memory_budget_bytes / 2, 256 << 10);
  const std::string path = path_;
  IdJoin::RepeatCheck on_repeat;
  if (labels) {
    on_repeat = [path](std::string_view key, uint64_t kept, uint64_t repeat) -> Status {
      if (LabelOf(kept) == LabelOf(repeat)) return Status::Ok();
      return InvalidArgument(fmt::format("{}:{}: node id '{}' has label {}, but line {} gave it label {} (one "
                                         "label per node)",
                                         path, LineOf(repeat), IdFromSortKey(key), LabelOf(repeat), LineOf(kept),
                                         LabelOf(kept)));
    };
  } else {
    on_repeat = [path](std::string_view key, uint64_t kept, uint64_t repeat) -> Status {
      return InvalidArgument(fmt::format("{}:{}: node id '{}' repeats line {} (one line per node)", path,
                                         static_cast<int64_t>(repeat), IdFromSortKey(key),
                                         static_cast<int64_t>(kept)));
    };
  }
  join_ = std::make_unique<IdJoin>(scratch_.path(), "table", sort_bytes, std::move(on_repeat));

  // Without --remap-ids the ids are integers: a header shows as a non-integer id too.
  std::vector<TableColumn> columns = {TableColumn{id_col.empty() ? "0" : id_col, !options.original_ids}};
  if (labels) columns.push_back(TableColumn{label_col.empty() ? "1" : label_col, true});
  SEER_ASSIGN_OR_RETURN(TextTableReader reader, TextTableReader::Open(path_, columns));
  ProgressReporter progress("prep: reading " + path_, -1, "lines", options.show_progress);
  std::string_view fields[2];
  int64_t lines = 0;
  for (;;) {
    SEER_ASSIGN_OR_RETURN(bool more, reader.Next(fields));
    if (!more) break;
    const int64_t line = reader.line_number();
    if (reader.fields_in_line() <= reader.column_index(0)) {
      return InvalidArgument(fmt::format("{}: {} fields, but the id is column {}: '{}'", reader.Where(),
                                         reader.fields_in_line(), reader.column_index(0),
                                         reader.line().substr(0, 80)));
    }
    const std::string_view id = fields[0];
    if (id.empty()) return InvalidArgument(reader.Where() + ": empty node id");
    if (options.original_ids) {
      IdSortKeyInto(id, &key_);
    } else {
      const std::optional<int64_t> value = ParseNumber<int64_t>(id);
      if (!value || *value < 0) {
        return InvalidArgument(fmt::format("{}: node id '{}' is not a node number (without --remap-ids the ids are "
                                           "the graph's integer node ids 0..N-1)",
                                           reader.Where(), id.substr(0, 80)));
      }
      IntegerKey(*value, &key_);
    }
    if (line > static_cast<int64_t>(kLineMask)) {
      return InvalidArgument(fmt::format("{}: more than 2^33 lines", reader.Where()));
    }
    if (labels) {
      if (fields[1].empty()) continue;  // an empty or missing label: unlabeled
      const std::optional<int64_t> label = ParseNumber<int64_t>(fields[1]);
      if (!label) {
        return InvalidArgument(fmt::format("{}: non-integer label '{}' (labels are 0..C-1; an empty field leaves "
                                           "the node unlabeled)",
                                           reader.Where(), fields[1].substr(0, 80)));
      }
      if (*label < 0 || *label >= kLabelEnd) {
        return InvalidArgument(fmt::format("{}: label {} out of range [0, 2^31) (an empty field leaves the node "
                                           "unlabeled)",
                                           reader.Where(), *label));
      }
      if (*label >= options.label_limit) {
        return InvalidArgument(
            options.declared_classes
                ? fmt::format("{}: label {} out of range [0, {}) given by --num-classes", reader.Where(), *label,
                              options.label_limit)
                : fmt::format("{}: label {} out of range [0, {}) (labels are 0..C-1 with C at most {} unless "
                              "--num-classes says more)",
                              reader.Where(), *label, options.label_limit, options.label_limit));
      }
      SEER_RETURN_IF_ERROR(join_->Add(key_, (static_cast<uint64_t>(*label) << kLineBits) | static_cast<uint64_t>(line)));
    } else {
      SEER_RETURN_IF_ERROR(join_->Add(key_, static_cast<uint64_t>(line)));
    }
    if ((++lines & 0xffff) == 0) progress.Set(lines);
  }
  progress.Set(lines);
  progress.Finish();
  SEER_RETURN_IF_ERROR(join_->StartMerge());
  result_path_ = scratch_.File(labels ? "label_of_node.bin" : "listed_nodes.bin");
  SEER_ASSIGN_OR_RETURN(SequentialWriter out, SequentialWriter::Create(result_path_));
  result_ = std::make_unique<SequentialWriter>(std::move(out));
  return Status::Ok();
}

Status NodeTable::Match(std::string_view sort_key, int64_t node) {
  if (node != next_node_) {
    throw std::logic_error(fmt::format("NodeTable::Match: node {} out of order (expected {})", node, next_node_));
  }
  ++next_node_;
  SEER_ASSIGN_OR_RETURN(std::optional<uint64_t> payload, join_->Match(sort_key));
  if (payload) ++matched_;
  if (kind_ == Kind::kLabels) {
    const int32_t label = payload ? static_cast<int32_t>(LabelOf(*payload)) : -1;
    return result_->Write(&label, sizeof label);
  }
  if (!payload) return Status::Ok();
  const int64_t entry[2] = {node, static_cast<int64_t>(*payload)};
  return result_->Write(entry, sizeof entry);
}

Status NodeTable::MatchIntegerNodes(int64_t num_nodes) {
  std::string key;
  for (int64_t node = 0; node < num_nodes; ++node) {
    IntegerKey(node, &key);
    SEER_RETURN_IF_ERROR(Match(key, node));
  }
  return Finish(num_nodes);
}

Status NodeTable::Finish(int64_t num_nodes) {
  if (num_nodes != next_node_) {
    throw std::logic_error(
        fmt::format("NodeTable::Finish: {} nodes matched, {} expected", next_node_, num_nodes));
  }
  SEER_RETURN_IF_ERROR(join_->Finish());
  SEER_RETURN_IF_ERROR(result_->Close());
  result_.reset();
  return Status::Ok();
}

}  // namespace seer
