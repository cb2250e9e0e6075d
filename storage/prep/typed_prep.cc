#include "storage/prep/typed_prep.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <tbb/task_arena.h>

#include "storage/base/parse_number.h"
#include "storage/base/progress.h"
#include "storage/dataset/finite_values.h"
#include "storage/dataset/node_ids.h"
#include "storage/prep/node_rows.h"
#include "storage/prep/npy.h"
#include "storage/prep/text_reader.h"
#include "storage/prep/text_table.h"

namespace seer {
namespace {

constexpr int64_t kReadBatchEdges = int64_t{1} << 16;
constexpr int64_t kWriteChunkValues = int64_t{1} << 16;
constexpr int64_t kFeatureChunkBytes = int64_t{4} << 20;

bool IsNpyPath(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

bool IsIntegerToken(std::string_view token) { return ParseNumber<int64_t>(token).has_value(); }

// One node type while the dataset is prepared.
struct TypeState {
  std::string name;
  const TypedNodeTypeInput* input = nullptr;  // its options, or null
  int64_t count = -1;                         // given, then resolved
  int64_t max_id = -1;                        // integer ids: the largest seen
  bool has_node_ids() const { return input != nullptr && !input->node_ids.empty(); }
  std::optional<NpyFile> features, labels_npy;
  std::unordered_map<std::string, int64_t> ids;  // remap_ids: original id -> local id
  int64_t num_rows = -1;                         // --type-node-ids: its lines (rows of the arrays)
  std::vector<int64_t> rows;                     // --type-node-ids: row of each local id
  DatasetNodeType out;
};

// A given id list of a type (one of train, valid, test).
struct SplitInput {
  const std::string* path;
  NodeSplit split;
};

class TypedPrep {
 public:
  TypedPrep(const TypedPrepInputs& in, const TypedPrepOptions& options, const std::string& out_dir)
      : in_(in), options_(options), out_dir_(out_dir) {}

  Result<TypedPrepSummary> Run() {
    SEER_RETURN_IF_ERROR(Validate());
    SEER_RETURN_IF_ERROR(CollectTypes());
    SEER_RETURN_IF_ERROR(ScanInputs());
    SEER_RETURN_IF_ERROR(ResolveCounts());
    SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(out_dir_, options_.force));
    DatasetManifest manifest;
    manifest.created_by = options_.created_by;
    for (TypeState& t : types_) {
      SEER_RETURN_IF_ERROR(WriteNodeType(t, writer));
      manifest.num_nodes += t.count;
      manifest.node_types.push_back(t.out);
      summary_.num_labeled.push_back(num_labeled_);
    }
    for (size_t r = 0; r < in_.relations.size(); ++r) {
      SEER_RETURN_IF_ERROR(WriteRelation(r, writer, &manifest));
    }
    manifest.index_dtype = IndexDtypeFor(manifest.num_nodes);
    SEER_RETURN_IF_ERROR(writer.Commit(manifest));
    SEER_ASSIGN_OR_RETURN(Dataset written, Dataset::OpenAnyKind(out_dir_));
    for (const auto& [name, entry] : written.manifest().files) summary_.bytes_written += entry.bytes;
    summary_.manifest = written.manifest();
    return summary_;
  }

 private:
  // --- checks before any file is read ---

  Status Validate() {
    if (in_.relations.empty()) return InvalidArgument("a typed prep needs at least one --relation");
    SEER_RETURN_IF_ERROR(ValidateSplitFractions(in_.split_fractions));
    if (options_.num_classes < 0 || options_.num_classes > INT32_MAX) {
      return InvalidArgument("--num-classes must be in [0, 2^31 - 1] (0: 1 + the largest label)");
    }
    std::vector<std::string> keys;
    for (const TypedRelationInput& r : in_.relations) {
      for (const auto& [what, name] : {std::pair<const char*, const std::string&>{"source type", r.src},
                                       {"relation name", r.name},
                                       {"destination type", r.dst}}) {
        if (!ValidTypeName(name)) {
          return InvalidArgument("--relation " + r.key() + "=" + r.path + ": " + what + " '" + name +
                                 "' is not a valid name (1 to 64 letters and digits in runs joined by single '_')");
        }
      }
      keys.push_back(r.key());
      if (options_.reverse) {
        if (!ValidTypeName(ReverseRelationName(r.name))) {
          return InvalidArgument("--reverse: relation name '" + ReverseRelationName(r.name) + "' is too long");
        }
        keys.push_back(r.dst + "__" + ReverseRelationName(r.name) + "__" + r.src);
      }
      if (in_.remap_ids && ResolveEdgeListFormat(EdgeListFormat::kAuto, r.path) != EdgeListFormat::kText) {
        return InvalidArgument("--relation " + r.key() + "=" + r.path +
                               ": --remap-ids needs text/CSV edge lists (binary ids carry no strings)");
      }
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (keys[i] == keys[j]) {
          return InvalidArgument("relation " + keys[i] + " is given twice" +
                                 (options_.reverse ? " (counting the reverses of --reverse)" : ""));
        }
      }
    }
    for (const TypedNodeTypeInput& t : in_.node_types) SEER_RETURN_IF_ERROR(ValidateTypeInput(t));
    return Status::Ok();
  }

  Status ValidateTypeInput(const TypedNodeTypeInput& t) {
    if (!ValidTypeName(t.name)) {
      return InvalidArgument("node type '" + t.name +
                             "' is not a valid name (1 to 64 letters and digits in runs joined by single '_')");
    }
    if (t.count < -1 || t.count > kMaxNodeId + 1) {
      return InvalidArgument("--node-type " + t.name + "=" + std::to_string(t.count) + ": out of range [0, 2^40]");
    }
    if (!t.node_ids.empty() && !in_.remap_ids) {
      return InvalidArgument("--type-node-ids " + t.name + "=" + t.node_ids +
                             " needs --remap-ids (without it, row r of the node arrays is node r)");
    }
    if (in_.remap_ids) {
      if (t.count >= 0) return InvalidArgument("--node-type " + t.name + ": --remap-ids counts the nodes itself");
      if (!t.features.empty() && t.node_ids.empty()) {
        return InvalidArgument("--type-features " + t.name + "=" + t.features +
                               ": with --remap-ids give --type-node-ids " + t.name +
                               "=FILE (line r+1 = the original id of feature row r)");
      }
      for (const std::string* path : {&t.labels, &t.train, &t.valid, &t.test}) {
        if (IsNpyPath(*path) && (path != &t.labels || t.node_ids.empty())) {
          return InvalidArgument(*path + ": a .npy holds no original ids: with --remap-ids give a text/CSV table" +
                                 (path == &t.labels ? " (or --type-node-ids " + t.name + "=FILE for its rows)" : ""));
        }
      }
    }
    if (!t.features.empty() && !IsNpyPath(t.features)) {
      return InvalidArgument("--type-features " + t.name + "=" + t.features + ": features must be a .npy");
    }
    return Status::Ok();
  }

  // Manifest order: first appearance in the relations, then the per-type options.
  Status CollectTypes() {
    for (const TypedRelationInput& r : in_.relations) {
      AddType(r.src);
      AddType(r.dst);
    }
    for (const TypedNodeTypeInput& t : in_.node_types) {
      TypeState& state = AddType(t.name);
      if (state.input != nullptr) return InvalidArgument("node type " + t.name + " has its options given twice");
      state.input = &t;
      state.count = t.count;
    }
    return Status::Ok();
  }

  TypeState& AddType(const std::string& name) {
    for (TypeState& t : types_) {
      if (t.name == name) return t;
    }
    types_.push_back(TypeState{});
    types_.back().name = name;
    return types_.back();
  }

  TypeState& Type(const std::string& name) { return AddType(name); }

  // --- the first pass: ids, ranges, counts ---

  Status ScanInputs() {
    relation_edges_.assign(in_.relations.size(), 0);
    header_skipped_.assign(in_.relations.size(), false);
    for (size_t r = 0; r < in_.relations.size(); ++r) {
      SEER_RETURN_IF_ERROR(in_.remap_ids ? ScanRemapRelation(r) : ScanIntegerRelation(r));
    }
    for (TypeState& t : types_) {
      if (t.input == nullptr) continue;
      if (!t.input->labels.empty() && !IsNpyPath(t.input->labels)) {
        SEER_RETURN_IF_ERROR(ForEachTableId(t, t.input->labels, true, [](int64_t, std::string_view, const std::string&) {
          return Status::Ok();
        }));
      }
      for (const SplitInput& s : Splits(t)) {
        if (s.path->empty() || IsNpyPath(*s.path)) continue;
        SEER_RETURN_IF_ERROR(ForEachTableId(t, *s.path, false, [](int64_t, std::string_view, const std::string&) {
          return Status::Ok();
        }));
      }
      SEER_RETURN_IF_ERROR(OpenNodeArrays(t));
      if (!t.input->node_ids.empty()) {
        t.num_rows = 0;
        SEER_RETURN_IF_ERROR(ForEachNodeIdsLine(t, [&](std::string_view id, int64_t, const std::string&) -> Status {
          t.ids.try_emplace(std::string(id), -1);
          ++t.num_rows;
          return Status::Ok();
        }));
      }
    }
    return Status::Ok();
  }

  // visit(id, row, "path:line") for each line of the type's --type-node-ids file.
  template <typename Visit>
  Status ForEachNodeIdsLine(const TypeState& t, Visit&& visit) {
    const std::string& path = t.input->node_ids;
    SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(path));
    std::string_view line;
    for (int64_t row = 0;; ++row) {
      SEER_ASSIGN_OR_RETURN(bool more, reader.NextLine(&line));
      if (!more) break;
      const std::string where = path + ":" + std::to_string(reader.line_number());
      const std::string_view id = NodeIdsFileId(line);
      if (id.empty()) return InvalidArgument(where + ": empty node id");
      if (const char* problem = IdRoundTripProblem(id)) {
        return InvalidArgument(where + ": node id '" + EscapeId(id) + "' " + problem);
      }
      SEER_RETURN_IF_ERROR(visit(id, row, where));
    }
    return Status::Ok();
  }

  // rows[local id] from the type's node_ids file: each id once, every node a row.
  Status MapRows(TypeState& t) {
    t.rows.assign(static_cast<size_t>(t.count), -1);
    std::string key;
    SEER_RETURN_IF_ERROR(ForEachNodeIdsLine(t, [&](std::string_view id, int64_t row, const std::string& where) -> Status {
      key.assign(id);
      const auto found = t.ids.find(key);
      if (found == t.ids.end()) return Corrupt(where + ": changed while it was read");
      int64_t& slot = t.rows[static_cast<size_t>(found->second)];
      if (slot >= 0) {
        return InvalidArgument(fmt::format("{}: node id '{}' repeats line {} (one line per node)", where,
                                           EscapeId(id), slot + 1));
      }
      slot = row;
      return Status::Ok();
    }));
    for (const auto& [id, local] : t.ids) {
      if (t.rows[static_cast<size_t>(local)] < 0) {
        return InvalidArgument(fmt::format("{}: has no line for node '{}' of type {} (every node of the type needs a "
                                           "row of its features/labels)",
                                           t.input->node_ids, EscapeId(id), t.name));
      }
    }
    return Status::Ok();
  }

  static std::vector<SplitInput> Splits(const TypeState& t) {
    return {{&t.input->train, NodeSplit::kTrain}, {&t.input->valid, NodeSplit::kValid},
            {&t.input->test, NodeSplit::kTest}};
  }

  Status ScanIntegerRelation(size_t r) {
    const TypedRelationInput& rel = in_.relations[r];
    TypeState& src = Type(rel.src);
    TypeState& dst = Type(rel.dst);
    SEER_ASSIGN_OR_RETURN(std::unique_ptr<EdgeSource> source,
                          OpenEdgeList(rel.path, EdgeListFormat::kAuto, -1, ColumnsFor(rel.path)));
    std::vector<Edge> batch(static_cast<size_t>(kReadBatchEdges));
    ProgressReporter progress("prep: scanning " + rel.path, source->num_edges_hint(), "edges", options_.show_progress);
    int64_t seen = 0;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(int64_t n, source->Read(batch.data(), kReadBatchEdges));
      if (n == 0) break;
      for (int64_t i = 0; i < n; ++i) {
        const Edge& e = batch[static_cast<size_t>(i)];
        if (src.count >= 0 && e.src >= src.count) return IdBeyondCount(rel, seen + i, src, e.src, "source");
        if (dst.count >= 0 && e.dst >= dst.count) return IdBeyondCount(rel, seen + i, dst, e.dst, "destination");
        src.max_id = std::max(src.max_id, e.src);
        dst.max_id = std::max(dst.max_id, e.dst);
      }
      seen += n;
      progress.Add(n);
    }
    progress.Finish();
    relation_edges_[r] = seen;
    return Status::Ok();
  }

  // --src-col/--dst-col apply to the text tables (a .npy has no columns).
  TextColumns ColumnsFor(const std::string& path) const {
    return ResolveEdgeListFormat(EdgeListFormat::kAuto, path) == EdgeListFormat::kText ? in_.columns : TextColumns{};
  }

  Status IdBeyondCount(const TypedRelationInput& rel, int64_t edge, const TypeState& type, int64_t id,
                       const char* role) {
    SEER_ASSIGN_OR_RETURN(std::string where, LocateEdge(rel.path, edge));
    return InvalidArgument(fmt::format("{}: {} id {} is not a node of type {}: --node-type {}={} (ids 0..{})", where,
                                       role, id, type.name, type.name, type.count, type.count - 1));
  }

  // "path:line" of edge #edge (0-based) of a text edge list, "path: edge #k" otherwise:
  // read again, only on the error path. A first pair whose two ids are not integers is
  // the header of edge_list.h's rule (an integer edge list has no other such line).
  Result<std::string> LocateEdge(const std::string& path, int64_t edge) {
    if (ResolveEdgeListFormat(EdgeListFormat::kAuto, path) != EdgeListFormat::kText) {
      return path + ": edge #" + std::to_string(edge);
    }
    SEER_ASSIGN_OR_RETURN(std::unique_ptr<TextPairReader> reader, TextPairReader::Open(path, in_.columns));
    std::string_view a, b;
    bool first = true;
    for (int64_t k = -1; k < edge;) {
      SEER_ASSIGN_OR_RETURN(bool more, reader->Next(&a, &b));
      if (!more) return path + ": edge #" + std::to_string(edge);
      const bool header = first && !in_.columns.named() && !IsIntegerToken(a) && !IsIntegerToken(b);
      first = false;
      if (!header) ++k;
    }
    return reader->Where();
  }

  // --remap-ids: every token of the relation becomes an id of its type; the first data
  // line of a table without a named column is a header when both its ids are not
  // integers and neither occurs on another line (edge_list.h's rule).
  Status ScanRemapRelation(size_t r) {
    const TypedRelationInput& rel = in_.relations[r];
    TypeState& src = Type(rel.src);
    TypeState& dst = Type(rel.dst);
    SEER_ASSIGN_OR_RETURN(std::unique_ptr<TextPairReader> reader, TextPairReader::Open(rel.path, in_.columns));
    const bool hold_first = !in_.columns.named();
    std::string first_src, first_dst, first_where, key;
    bool have_first = false, first_elsewhere = false;
    int64_t edges = 0;
    std::string_view a, b;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, reader->Next(&a, &b));
      if (!more) break;
      SEER_RETURN_IF_ERROR(CheckIdToken(a, *reader));
      SEER_RETURN_IF_ERROR(CheckIdToken(b, *reader));
      if (hold_first && !have_first) {
        first_src.assign(a);
        first_dst.assign(b);
        first_where = reader->Where();
        have_first = true;
        continue;
      }
      first_elsewhere = first_elsewhere || a == first_src || b == first_src || a == first_dst || b == first_dst;
      key.assign(a);
      src.ids.try_emplace(key, -1);
      key.assign(b);
      dst.ids.try_emplace(key, -1);
      ++edges;
    }
    if (have_first) {
      header_skipped_[r] = !IsIntegerToken(first_src) && !IsIntegerToken(first_dst) && !first_elsewhere;
      if (!header_skipped_[r]) {
        src.ids.try_emplace(first_src, -1);
        dst.ids.try_emplace(first_dst, -1);
        ++edges;
      }
    }
    relation_edges_[r] = edges;
    return Status::Ok();
  }

  static Status CheckIdToken(std::string_view id, const TextPairReader& reader) {
    if (const char* problem = IdRoundTripProblem(id)) {
      return InvalidArgument(reader.Where() + ": node id '" + EscapeId(id) + "' " + problem);
    }
    return Status::Ok();
  }

  // Calls visit(local id, label field, "path:line") for each line of a labels table
  // (with_label) or an id list. Pass 1 (counts not resolved): only records the ids.
  template <typename Visit>
  Status ForEachTableId(TypeState& t, const std::string& path, bool with_label, Visit&& visit) {
    std::vector<TableColumn> columns;
    const std::string& id_col = with_label ? in_.label_id_col : in_.split_id_col;
    columns.push_back(TableColumn{id_col.empty() ? "0" : id_col, !in_.remap_ids});
    if (with_label) columns.push_back(TableColumn{in_.label_col.empty() ? "1" : in_.label_col, true});
    SEER_ASSIGN_OR_RETURN(TextTableReader reader, TextTableReader::Open(path, columns));
    std::string_view fields[2];
    std::string key;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, reader.Next(fields));
      if (!more) break;
      if (reader.fields_in_line() <= reader.column_index(0)) {
        return InvalidArgument(fmt::format("{}: {} fields, but the id is column {}", reader.Where(),
                                           reader.fields_in_line(), reader.column_index(0)));
      }
      if (fields[0].empty()) return InvalidArgument(reader.Where() + ": empty node id");
      SEER_ASSIGN_OR_RETURN(int64_t local, TableLocalId(t, fields[0], reader.Where(), &key));
      SEER_RETURN_IF_ERROR(visit(local, fields[1], reader.Where()));
    }
    return Status::Ok();
  }

  // The local id of a table's id field; -1 while the ids are being collected.
  Result<int64_t> TableLocalId(TypeState& t, std::string_view id, const std::string& where, std::string* key) {
    if (in_.remap_ids) {
      key->assign(id);
      if (!resolved_) {
        if (const char* problem = IdRoundTripProblem(id)) {
          return InvalidArgument(where + ": node id '" + EscapeId(id) + "' " + problem);
        }
        t.ids.try_emplace(*key, -1);
        return int64_t{-1};
      }
      const auto found = t.ids.find(*key);
      if (found == t.ids.end()) return Corrupt(where + ": changed while it was read");
      return found->second;
    }
    const std::optional<int64_t> value = ParseNumber<int64_t>(id);
    if (!value || *value < 0 || *value > kMaxNodeId) {
      return InvalidArgument(where + ": node id '" + EscapeId(id) +
                             "' is not an integer in [0, 2^40) (string ids need --remap-ids)");
    }
    if (t.count >= 0 && *value >= t.count) {
      return InvalidArgument(fmt::format("{}: id {} is not a node of type {} ({} nodes)", where, *value, t.name,
                                         t.count));
    }
    t.max_id = std::max(t.max_id, *value);
    return *value;
  }

  Status OpenNodeArrays(TypeState& t) {
    if (!t.input->features.empty()) {
      SEER_ASSIGN_OR_RETURN(NpyFile features, NpyFile::Open(t.input->features));
      const NpyHeader& h = features.header();
      if (h.shape.size() != 2 || h.kind != 'f') {
        return InvalidArgument(fmt::format("{}: features must be a 2-D float16/32/64 array, found {} {}",
                                           t.input->features, h.descr, h.ShapeString()));
      }
      t.features.emplace(std::move(features));
    }
    if (!t.input->labels.empty() && IsNpyPath(t.input->labels)) {
      SEER_ASSIGN_OR_RETURN(NpyFile labels, NpyFile::Open(t.input->labels));
      const NpyHeader& h = labels.header();
      if (h.shape.empty() || h.shape.size() > 2 || (h.shape.size() == 2 && h.shape[1] != 1)) {
        return InvalidArgument(t.input->labels + ": labels must have shape (N,) or (N, 1), found " + h.ShapeString());
      }
      t.labels_npy.emplace(std::move(labels));
    }
    return Status::Ok();
  }

  // Counts: given, else (remap) the distinct ids, else the feature rows, else 1 + the
  // largest id; the node arrays must then have exactly `count` rows.
  Status ResolveCounts() {
    for (TypeState& t : types_) {
      if (in_.remap_ids) {
        t.count = static_cast<int64_t>(t.ids.size());
        NumberIds(t);
      } else if (t.count < 0) {
        t.count = t.max_id + 1;
        if (t.features) t.count = std::max(t.count, t.features->header().shape[0]);
        if (t.labels_npy) t.count = std::max(t.count, t.labels_npy->header().shape[0]);
      }
      if (t.has_node_ids()) SEER_RETURN_IF_ERROR(CheckRowsOfNodeIds(t));
      for (const std::optional<NpyFile>* array : {&t.features, &t.labels_npy}) {
        if (!*array || t.has_node_ids() || (*array)->header().shape[0] == t.count) continue;
        return InvalidArgument(fmt::format("{}: {} rows, but node type {} has {} nodes ({}; they must be equal)",
                                           (*array)->path(), (*array)->header().shape[0], t.name, t.count,
                                           t.input->count >= 0 ? "--node-type" : "1 + its largest id"));
      }
    }
    resolved_ = true;
    return Status::Ok();
  }

  // With --type-node-ids: the arrays have its line count of rows, and every node a row.
  Status CheckRowsOfNodeIds(TypeState& t) {
    for (const std::optional<NpyFile>* array : {&t.features, &t.labels_npy}) {
      if (!*array || (*array)->header().shape[0] == t.num_rows) continue;
      return InvalidArgument(fmt::format("{}: {} rows, but --type-node-ids {}={} has {} lines (they must be equal)",
                                         (*array)->path(), (*array)->header().shape[0], t.name, t.input->node_ids,
                                         t.num_rows));
    }
    return MapRows(t);
  }

  // Local ids in the order of node_ids.h; the map's values set.
  static void NumberIds(TypeState& t) {
    std::vector<std::pair<std::string, std::unordered_map<std::string, int64_t>::value_type*>> order;
    order.reserve(t.ids.size());
    for (auto& entry : t.ids) order.emplace_back(IdSortKey(entry.first), &entry);
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t k = 0; k < order.size(); ++k) order[k].second->second = static_cast<int64_t>(k);
  }

  // --- the node types' files ---

  Status WriteNodeType(TypeState& t, DatasetWriter& writer) {
    t.out.name = t.name;
    t.out.count = t.count;
    num_labeled_ = 0;
    if (in_.remap_ids) SEER_RETURN_IF_ERROR(WriteNodeIds(t, writer));
    if (t.features) SEER_RETURN_IF_ERROR(WriteFeatures(t, writer));
    if (t.input == nullptr) return Status::Ok();
    std::vector<int32_t> labels;
    if (!t.input->labels.empty()) SEER_RETURN_IF_ERROR(WriteLabels(t, writer, &labels));
    const bool given = !t.input->train.empty() || !t.input->valid.empty() || !t.input->test.empty();
    if (given) return WriteGivenSplits(t, writer);
    if (in_.split_fractions.any() && !labels.empty()) return WriteDrawnSplits(t, labels, writer);
    return Status::Ok();
  }

  Status WriteNodeIds(TypeState& t, DatasetWriter& writer) {
    std::vector<const std::string*> ids(static_cast<size_t>(t.count));
    for (const auto& [id, local] : t.ids) ids[static_cast<size_t>(local)] = &id;
    t.out.node_ids = t.name + ".node_ids.txt";  // text, as node_ids.txt
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * file, writer.OpenFile(t.out.node_ids));
    std::string chunk;
    for (const std::string* id : ids) {
      chunk += *id;
      chunk += '\n';
      if (chunk.size() >= (1 << 20)) {
        SEER_RETURN_IF_ERROR(file->Append(chunk.data(), static_cast<int64_t>(chunk.size())));
        chunk.clear();
      }
    }
    return file->Append(chunk.data(), static_cast<int64_t>(chunk.size()));
  }

  Status WriteFeatures(TypeState& t, DatasetWriter& writer) {
    const NpyFile& npy = *t.features;
    const int64_t f = npy.header().shape[1];
    const FeatureDtype out = options_.feature_dtype.value_or(npy.header().item_bytes == 2 ? FeatureDtype::kFloat16
                                                                                            : FeatureDtype::kFloat32);
    t.out.feature_dim = f;
    t.out.feature_dtype = out;
    if (f == 0) return Status::Ok();
    t.out.features = NodeTypeFileName(t.name, "features");
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * file, writer.OpenFile(t.out.features));
    const int64_t rows_per_chunk = std::max<int64_t>(1, kFeatureChunkBytes / (f * 8));
    const float limit = StoredOverflowLimit(out);
    std::vector<float> values;
    std::vector<char> stored;
    for (int64_t row = 0; row < t.count; row += rows_per_chunk) {
      const int64_t rows = std::min(rows_per_chunk, t.count - row);
      values.resize(static_cast<size_t>(rows * f));
      SEER_RETURN_IF_ERROR(ReadRows(t, row, rows, [&](int64_t first, int64_t n, int64_t i) {
        return npy.ReadAsFloat32(first * f, n * f, values.data() + i * f);
      }));
      if (const int64_t bad = FirstNotBelow(values.data(), rows * f, limit); bad >= 0) {
        return InvalidArgument(fmt::format("{}: row {}, column {}: feature value {} is not finite or does not fit {}",
                                           npy.path(), InputRow(t, row + bad / f), bad % f,
                                           values[static_cast<size_t>(bad)], FeatureDtypeName(out)));
      }
      stored.resize(static_cast<size_t>(rows * FeatureRowBytes(out, f)));
      EncodeFeatureRows(values.data(), out, f, rows, stored.data());
      SEER_RETURN_IF_ERROR(file->Append(stored.data(), static_cast<int64_t>(stored.size())));
    }
    return Status::Ok();
  }

  static int64_t InputRow(const TypeState& t, int64_t local) {
    return t.rows.empty() ? local : t.rows[static_cast<size_t>(local)];
  }

  // read(first input row, rows, position) for the input rows of local ids [first, first +
  // n): one call without a node_ids file, else one per run of consecutive rows.
  template <typename Read>
  static Status ReadRows(const TypeState& t, int64_t first, int64_t n, Read&& read) {
    if (t.rows.empty()) return read(first, n, 0);
    for (int64_t i = 0; i < n;) {
      int64_t j = i + 1;
      while (j < n && InputRow(t, first + j) == InputRow(t, first + j - 1) + 1) ++j;
      SEER_RETURN_IF_ERROR(read(InputRow(t, first + i), j - i, i));
      i = j;
    }
    return Status::Ok();
  }

  Status CheckLabel(int64_t label, const std::string& where, const TypeState& t) {
    const int64_t limit = options_.num_classes > 0 ? options_.num_classes : int64_t{100000};
    if (label < -1 || label >= limit) {
      return InvalidArgument(fmt::format("{}: label {} of node type {} out of range [-1, {}){}", where, label, t.name,
                                         limit, options_.num_classes > 0 ? " given by --num-classes" : ""));
    }
    return Status::Ok();
  }

  Status WriteLabels(TypeState& t, DatasetWriter& writer, std::vector<int32_t>* labels) {
    labels->assign(static_cast<size_t>(t.count), -1);
    if (t.labels_npy) {
      std::vector<int64_t> wide(static_cast<size_t>(t.count));
      SEER_RETURN_IF_ERROR(ReadRows(t, 0, t.count, [&](int64_t first, int64_t n, int64_t i) {
        return t.labels_npy->ReadAsInt64(first, n, wide.data() + i, -1);
      }));
      for (int64_t v = 0; v < t.count; ++v) {
        SEER_RETURN_IF_ERROR(
            CheckLabel(wide[v], t.labels_npy->path() + ": element " + std::to_string(InputRow(t, v)), t));
        (*labels)[static_cast<size_t>(v)] = static_cast<int32_t>(wide[v]);
      }
    } else {
      SEER_RETURN_IF_ERROR(ForEachTableId(
          t, t.input->labels, true, [&](int64_t v, std::string_view field, const std::string& where) -> Status {
            if (field.empty()) return Status::Ok();
            const std::optional<int64_t> label = ParseNumber<int64_t>(field);
            if (!label) return InvalidArgument(where + ": label '" + EscapeId(field) + "' is not an integer");
            SEER_RETURN_IF_ERROR(CheckLabel(*label, where, t));
            int32_t& slot = (*labels)[static_cast<size_t>(v)];
            if (slot >= 0 && *label >= 0 && slot != *label) {
              return InvalidArgument(fmt::format("{}: node {} of type {} has label {} on an earlier line", where, v,
                                                 t.name, slot));
            }
            if (*label >= 0) slot = static_cast<int32_t>(*label);
            return Status::Ok();
          }));
    }
    int64_t num_classes = 0;
    for (const int32_t label : *labels) {
      num_labeled_ += label >= 0;
      num_classes = std::max<int64_t>(num_classes, label + 1);
    }
    t.out.num_classes = options_.num_classes > 0 ? options_.num_classes : std::max<int64_t>(num_classes, 1);
    t.out.labels = NodeTypeFileName(t.name, "labels");
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * file, writer.OpenFile(t.out.labels));
    return file->AppendValues(labels->data(), t.count);
  }

  Status WriteGivenSplits(TypeState& t, DatasetWriter& writer) {
    SplitRegistry registry(t.count);
    for (const SplitInput& s : Splits(t)) {
      if (s.path->empty()) continue;
      const char* role = kSplitNames[static_cast<int>(s.split)];
      std::vector<int64_t> ids;
      if (IsNpyPath(*s.path)) {
        SEER_ASSIGN_OR_RETURN(NpyFile npy, NpyFile::Open(*s.path));
        ids.resize(static_cast<size_t>(npy.header().num_elements()));
        SEER_RETURN_IF_ERROR(npy.ReadAsInt64(0, static_cast<int64_t>(ids.size()), ids.data()));
        for (size_t i = 0; i < ids.size(); ++i) {
          SEER_RETURN_IF_ERROR(registry.Add(ids[i], s.split, *s.path + ": element " + std::to_string(i) +
                                                                  " (node type " + t.name + ")"));
        }
      } else {
        SEER_RETURN_IF_ERROR(ForEachTableId(t, *s.path, false, [&](int64_t v, std::string_view, const std::string& where) {
          ids.push_back(v);
          return registry.Add(v, s.split, where + " (node type " + t.name + ")");
        }));
      }
      std::string& name = s.split == NodeSplit::kTrain ? t.out.train : s.split == NodeSplit::kValid ? t.out.valid
                                                                                                     : t.out.test;
      name = NodeTypeFileName(t.name, role);
      SEER_ASSIGN_OR_RETURN(AtomicFileWriter * file, writer.OpenFile(name));
      SEER_RETURN_IF_ERROR(file->AppendValues(ids.data(), static_cast<int64_t>(ids.size())));
    }
    return Status::Ok();
  }

  Status WriteDrawnSplits(TypeState& t, const std::vector<int32_t>& labels, DatasetWriter& writer) {
    std::vector<int64_t> ids[4];
    for (int64_t v = 0; v < t.count; ++v) {
      if (labels[static_cast<size_t>(v)] < 0) continue;
      ids[static_cast<int>(DrawNodeSplit(in_.split_fractions, in_.split_seed, v))].push_back(v);
    }
    std::string* names[4] = {nullptr, &t.out.train, &t.out.valid, &t.out.test};
    for (int s = 1; s < 4; ++s) {
      *names[s] = NodeTypeFileName(t.name, kSplitNames[s]);
      SEER_ASSIGN_OR_RETURN(AtomicFileWriter * file, writer.OpenFile(*names[s]));
      SEER_RETURN_IF_ERROR(file->AppendValues(ids[s].data(), static_cast<int64_t>(ids[s].size())));
    }
    return Status::Ok();
  }

  // --- the relations: one in RAM at a time ---

  Status WriteRelation(size_t r, DatasetWriter& writer, DatasetManifest* manifest) {
    const TypedRelationInput& rel = in_.relations[r];
    std::vector<Edge> edges;
    SEER_RETURN_IF_ERROR(ReadEdges(r, &edges));
    summary_.input_edges += static_cast<int64_t>(edges.size());
    summary_.max_relation_edges = std::max(summary_.max_relation_edges, static_cast<int64_t>(edges.size()));
    SortEdges(&edges);
    if (options_.drop_self_loops && rel.src == rel.dst) {
      const size_t before = edges.size();
      edges.erase(std::remove_if(edges.begin(), edges.end(), [](const Edge& e) { return e.src == e.dst; }),
                  edges.end());
      summary_.self_loops_dropped += static_cast<int64_t>(before - edges.size());
    }
    if (options_.dedup) {
      const size_t before = edges.size();
      edges.erase(std::unique(edges.begin(), edges.end(),
                              [](const Edge& a, const Edge& b) { return a.src == b.src && a.dst == b.dst; }),
                  edges.end());
      summary_.duplicates_dropped += static_cast<int64_t>(before - edges.size());
    }
    SEER_RETURN_IF_ERROR(WriteCsc(rel.src, rel.name, rel.dst, edges, writer, manifest));
    if (!options_.reverse) return Status::Ok();
    for (Edge& e : edges) std::swap(e.src, e.dst);
    SortEdges(&edges);
    return WriteCsc(rel.dst, ReverseRelationName(rel.name), rel.src, edges, writer, manifest);
  }

  static void SortEdges(std::vector<Edge>* edges) {
    std::sort(edges->begin(), edges->end(),
              [](const Edge& a, const Edge& b) { return a.dst != b.dst ? a.dst < b.dst : a.src < b.src; });
  }

  Status ReadEdges(size_t r, std::vector<Edge>* edges) {
    const TypedRelationInput& rel = in_.relations[r];
    edges->resize(static_cast<size_t>(relation_edges_[r]));
    if (in_.remap_ids) return ReadRemappedEdges(r, edges);
    SEER_ASSIGN_OR_RETURN(std::unique_ptr<EdgeSource> source,
                          OpenEdgeList(rel.path, EdgeListFormat::kAuto, -1, ColumnsFor(rel.path)));
    int64_t n = 0;
    std::vector<Edge> batch(static_cast<size_t>(kReadBatchEdges));
    for (;;) {
      SEER_ASSIGN_OR_RETURN(int64_t got, source->Read(batch.data(), kReadBatchEdges));
      if (got == 0) break;
      if (n + got > relation_edges_[r]) return Corrupt(rel.path + ": changed while it was read (more edges)");
      std::copy(batch.begin(), batch.begin() + got, edges->begin() + n);
      n += got;
    }
    if (n != relation_edges_[r]) return Corrupt(rel.path + ": changed while it was read (fewer edges)");
    return Status::Ok();
  }

  Status ReadRemappedEdges(size_t r, std::vector<Edge>* edges) {
    const TypedRelationInput& rel = in_.relations[r];
    const auto& src = Type(rel.src).ids;
    const auto& dst = Type(rel.dst).ids;
    SEER_ASSIGN_OR_RETURN(std::unique_ptr<TextPairReader> reader, TextPairReader::Open(rel.path, in_.columns));
    std::string_view a, b;
    std::string key;
    bool skip = header_skipped_[r];
    size_t n = 0;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, reader->Next(&a, &b));
      if (!more) break;
      if (skip) {
        skip = false;
        continue;
      }
      key.assign(a);
      const auto s = src.find(key);
      key.assign(b);
      const auto d = dst.find(key);
      if (s == src.end() || d == dst.end() || n >= edges->size()) {
        return Corrupt(reader->Where() + ": changed while it was read");
      }
      (*edges)[n++] = Edge{s->second, d->second};
    }
    if (n != edges->size()) return Corrupt(rel.path + ": changed while it was read (fewer edges)");
    return Status::Ok();
  }

  // edges sorted by (dst, src): indptr over the destination type, indices as the
  // source type's index dtype.
  Status WriteCsc(const std::string& src, const std::string& name, const std::string& dst,
                  const std::vector<Edge>& edges, DatasetWriter& writer, DatasetManifest* manifest) {
    DatasetRelation r;
    r.src = src;
    r.name = name;
    r.dst = dst;
    r.num_edges = static_cast<int64_t>(edges.size());
    r.index_dtype = IndexDtypeFor(Type(src).count);
    r.indptr = RelationFileName(r, "indptr");
    r.indices = RelationFileName(r, "indices");
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * indptr, writer.OpenFile(r.indptr));
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * indices, writer.OpenFile(r.indices));
    const int64_t num_dst = Type(dst).count;
    std::vector<int64_t> offsets;
    offsets.reserve(static_cast<size_t>(kWriteChunkValues));
    size_t e = 0;
    for (int64_t v = 0; v <= num_dst; ++v) {
      offsets.push_back(static_cast<int64_t>(e));
      while (v < num_dst && e < edges.size() && edges[e].dst == v) ++e;
      if (static_cast<int64_t>(offsets.size()) == kWriteChunkValues || v == num_dst) {
        SEER_RETURN_IF_ERROR(indptr->AppendValues(offsets.data(), static_cast<int64_t>(offsets.size())));
        offsets.clear();
      }
    }
    if (r.index_dtype == IndexDtype::kUint32) {
      SEER_RETURN_IF_ERROR(AppendSources<uint32_t>(edges, indices));
    } else {
      SEER_RETURN_IF_ERROR(AppendSources<int64_t>(edges, indices));
    }
    manifest->num_edges += r.num_edges;
    manifest->relations.push_back(std::move(r));
    return Status::Ok();
  }

  template <typename Index>
  static Status AppendSources(const std::vector<Edge>& edges, AtomicFileWriter* out) {
    std::vector<Index> chunk;
    for (size_t first = 0; first < edges.size(); first += kWriteChunkValues) {
      const size_t n = std::min<size_t>(kWriteChunkValues, edges.size() - first);
      chunk.resize(n);
      for (size_t i = 0; i < n; ++i) chunk[i] = static_cast<Index>(edges[first + i].src);
      SEER_RETURN_IF_ERROR(out->AppendValues(chunk.data(), static_cast<int64_t>(n)));
    }
    return Status::Ok();
  }

  const TypedPrepInputs& in_;
  const TypedPrepOptions& options_;
  const std::string out_dir_;
  std::vector<TypeState> types_;
  std::vector<int64_t> relation_edges_;  // pass 1's counts
  std::vector<bool> header_skipped_;     // remap_ids: the first data line was a header
  bool resolved_ = false;                // counts (and remapped ids) known
  int64_t num_labeled_ = 0;              // of the type being written
  TypedPrepSummary summary_;
};

Result<TypedPrepSummary> RunInArena(const TypedPrepInputs& inputs, const TypedPrepOptions& options,
                                    const std::string& out_dir) {
  if (options.threads == 0) return TypedPrep(inputs, options, out_dir).Run();
  tbb::task_arena arena(options.threads);
  std::optional<Result<TypedPrepSummary>> result;
  arena.execute([&] { result.emplace(TypedPrep(inputs, options, out_dir).Run()); });
  return std::move(*result);
}

}  // namespace

std::string ReverseRelationName(const std::string& name) { return "rev_" + name; }

Result<TypedPrepSummary> PrepareTypedDataset(const TypedPrepInputs& inputs, const TypedPrepOptions& options,
                                             const std::string& out_dir) {
  if (options.threads < 0) return InvalidArgument("--threads must be >= 0 (0: every core)");
  struct stat st;
  const bool existed = ::stat(out_dir.c_str(), &st) == 0;
  Result<TypedPrepSummary> result = RunInArena(inputs, options, out_dir);
  // A failed run leaves no dataset (DatasetWriter); an --out it created is empty again.
  if (!result.ok() && !existed) (void)::rmdir(out_dir.c_str());
  return result;
}

}  // namespace seer
