#include "storage/prep/dataset_prep.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <tbb/task_arena.h>

#include "storage/base/byte_size.h"
#include "storage/base/parse_number.h"
#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/node_ids.h"
#include "storage/base/progress.h"
#include "storage/dataset/finite_values.h"
#include "storage/dataset/float16.h"
#include "storage/prep/npy.h"
#include "storage/prep/ogb_folder.h"
#include "storage/prep/node_rows.h"
#include "storage/prep/node_split.h"
#include "storage/prep/node_tables.h"
#include "storage/prep/split_writer.h"
#include "storage/prep/text_reader.h"

namespace seer {
namespace {

constexpr int64_t kMaxChunkBytes = 4 << 20;
constexpr int64_t kMinChunkBytes = 64 << 10;
constexpr int64_t kWriterBufferBytes = 1 << 20;   // AtomicFileWriter's buffer
constexpr int64_t kTextReaderBytes = (1 << 20) + (512 << 10);  // line buffer + zlib's
constexpr int64_t kSequentialBufferBytes = 64 << 10;            // SequentialReader's

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool IsNpyPath(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

bool ParseInt64(std::string_view token, int64_t* out) {
  const std::optional<int64_t> value = ParseNumber<int64_t>(token);
  if (value) *out = *value;
  return value.has_value();
}

bool ParseFloat(std::string_view token, float* out) {
  const std::optional<float> value = ParseNumber<float>(token);
  if (value) *out = *value;
  return value.has_value();
}

// Appends `rows` rows of `dim` feature values as `dtype` (float32 as is, float16/bfloat16
// rounded, int8 row-wise quantized); `stored` is scratch space reused across calls.
Status AppendFeatureRows(AtomicFileWriter* file, FeatureDtype dtype, const float* values, int64_t dim,
                         int64_t rows, std::vector<char>* stored) {
  if (dtype == FeatureDtype::kFloat32) return file->AppendValues(values, dim * rows);
  stored->resize(static_cast<size_t>(rows * FeatureRowBytes(dtype, dim)));
  EncodeFeatureRows(values, dtype, dim, rows, stored->data());
  return file->Append(stored->data(), static_cast<int64_t>(stored->size()));
}

// Calls read(first_row, num_rows, i) for each run of consecutive rows in rows[0, n):
// rows[i + j] = first_row + j. Rows in node order are random in general, but a
// --node-ids file in id order, or dense integer ids, makes most of them runs.
template <typename ReadRange>
Status ForEachRowRun(const int64_t* rows, int64_t n, ReadRange&& read) {
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && rows[j] == rows[j - 1] + 1) ++j;
    SEER_RETURN_IF_ERROR(read(rows[i], j - i, i));
    i = j;
  }
  return Status::Ok();
}

class Prep {
 public:
  Prep(const PrepInputs& in, const PrepOptions& options, const std::string& out_dir)
      : in_(in), options_(options), out_dir_(out_dir) {}

  Result<PrepSummary> Run() {
    chunk_bytes_ = std::clamp<int64_t>(options_.memory_budget_bytes / 8, kMinChunkBytes, kMaxChunkBytes);
    if (in_.ogb_dir.empty() == in_.edges.empty()) {
      return InvalidArgument("give either an edge list (--edges) or an OGB folder (--ogb), not both or neither");
    }
    if (options_.num_classes < 0 || options_.num_classes > INT32_MAX) {
      return InvalidArgument("--num-classes must be in [0, 2^31 - 1] (0: 1 + the largest label)");
    }
    if (in_.num_nodes > kMaxNodeId + 1) {
      return InvalidArgument("--num-nodes " + std::to_string(in_.num_nodes) +
                             " is above the largest supported node count 2^40");
    }
    if (!in_.ogb_dir.empty()) SEER_RETURN_IF_ERROR(ResolveOgb());
    SEER_RETURN_IF_ERROR(OpenNodeArrays());
    if (!in_.node_ids.empty() && !in_.remap_ids) {
      return InvalidArgument("--node-ids " + in_.node_ids + " needs --remap-ids (without it, row r of the node "
                             "arrays is node r)");
    }
    if (in_.remap_ids) {
      if (!in_.ogb_dir.empty() || ResolveEdgeListFormat(in_.edges_format, in_.edges) != EdgeListFormat::kText) {
        return InvalidArgument("--remap-ids needs a text edge list (--edges, text/CSV)");
      }
      if (in_.num_nodes >= 0) return InvalidArgument("--remap-ids counts the nodes itself: drop --num-nodes");
      num_nodes_ = -1;
    }
    SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(out_dir_, options_.force));
    SEER_RETURN_IF_ERROR(StartTables());
    if (in_.remap_ids) SEER_RETURN_IF_ERROR(RemapIds(writer));
    // A node count taken from a node array's rows does not bound the edge ids: an id
    // beyond it then shows as that array being short (it is named), not as a bad edge.
    const bool bound_edges = !rows_give_num_nodes_ || in_.remap_ids;
    SEER_ASSIGN_OR_RETURN(std::unique_ptr<EdgeSource> edges,
                          OpenEdgeList(edges_path_, edges_format_, bound_edges ? num_nodes_ : -1,
                                       in_.remap_ids ? TextColumns{} : in_.columns));

    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* indptr, writer.OpenFile(dataset_files::kIndptr));
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* indices, writer.OpenFile(dataset_files::kIndices));
    CscBuildOptions build;
    build.num_nodes = bound_edges ? num_nodes_ : -1;
    build.min_num_nodes = bound_edges ? 0 : num_nodes_;
    build.undirected = options_.undirected;
    build.dedup = options_.dedup;
    build.drop_self_loops = options_.drop_self_loops;
    build.index_dtype = options_.index_dtype;
    // The CSC build and the node arrays run one after the other: the builder gets the
    // whole budget (it counts its own writer buffers); the node arrays' chunks, file
    // buffers and split bitmap, sized from these inputs, must fit in it too.
    build.memory_budget_bytes = options_.memory_budget_bytes;
    build.writer_buffer_bytes = kWriterBufferBytes;
    build.spill_dir = out_dir_;
    build.show_progress = options_.show_progress;
    if (const int64_t fixed = NodeArrayBytes(); fixed > options_.memory_budget_bytes) {
      return Status(StatusCode::kResourceExhausted, "memory budget " + FormatBytes(options_.memory_budget_bytes) +
                                                        " is below the " + FormatBytes(fixed) +
                                                        " that these node arrays need (chunks, file buffers, "
                                                        "split bitmap); raise --memory-budget");
    }
    SEER_ASSIGN_OR_RETURN(summary_.csc, BuildCsc(*edges, build, *indptr, *indices));
    num_nodes_ = summary_.csc.num_nodes;
    SEER_RETURN_IF_ERROR(JoinTables());
    if (const int64_t fixed = NodeArrayBytes(); fixed > options_.memory_budget_bytes) {
      return Status(StatusCode::kResourceExhausted, "memory budget " + FormatBytes(options_.memory_budget_bytes) +
                                                        " is below the " + FormatBytes(fixed) + " that the node arrays of " +
                                                        std::to_string(num_nodes_) + " nodes need; raise --memory-budget");
    }

    SEER_RETURN_IF_ERROR(WriteFeatures(writer));
    SEER_RETURN_IF_ERROR(WriteLabels(writer));
    SEER_RETURN_IF_ERROR(WriteSplits(writer));

    DatasetManifest manifest;
    manifest.num_nodes = num_nodes_;
    manifest.num_edges = summary_.csc.num_edges;
    manifest.index_dtype = summary_.csc.index_dtype;
    manifest.feature_dim = summary_.feature_dim;
    manifest.feature_dtype = summary_.feature_dtype;
    if (options_.num_classes > 0) summary_.num_classes = options_.num_classes;
    manifest.num_classes = summary_.num_classes;
    manifest.created_by = options_.created_by;
    if (remap_) manifest.node_ids = dataset_files::kNodeIds;
    SEER_RETURN_IF_ERROR(writer.Commit(manifest));
    SEER_ASSIGN_OR_RETURN(Dataset written, Dataset::Open(out_dir_));
    for (const auto& [name, entry] : written.manifest().files) summary_.bytes_written += entry.bytes;
    return summary_;
  }

 private:
  Status ResolveOgb() {
    SEER_ASSIGN_OR_RETURN(OgbFolder folder, ResolveOgbFolder(in_.ogb_dir, in_.ogb_split, in_.num_nodes < 0));
    edges_path_ = folder.edges;
    edges_format_ = EdgeListFormat::kText;
    ogb_features_ = folder.features;
    ogb_labels_ = folder.labels;
    for (int s = 0; s < 3; ++s) ogb_splits_[s] = folder.splits[s];
    ogb_num_nodes_ = folder.num_nodes;
    return Status::Ok();
  }

  // Opens the .npy headers (cheap) so shape/dtype errors come before the long CSC build,
  // and fixes num_nodes_.
  Status OpenNodeArrays() {
    if (in_.edges.size()) {
      edges_path_ = in_.edges;
      edges_format_ = in_.edges_format;
    }
    num_nodes_ = in_.num_nodes;
    if (!in_.features.empty()) {
      SEER_ASSIGN_OR_RETURN(NpyFile f, NpyFile::Open(in_.features));
      const NpyHeader& h = f.header();
      if (h.kind != 'f') {
        return InvalidArgument(in_.features + ": features dtype " + h.descr + " is not float16/32/64");
      }
      if (h.shape.size() != 2) {
        return InvalidArgument(in_.features + ": features must be 2-D (N, F), got shape " + h.ShapeString());
      }
      if (h.fortran_order) {
        return Status(StatusCode::kUnsupported, in_.features + ": Fortran-order features are not supported "
                                                               "(save with numpy.ascontiguousarray)");
      }
      SEER_RETURN_IF_ERROR(TakeRowCount(in_.features, h.shape[0]));
      features_ = std::make_unique<NpyFile>(std::move(f));
    }
    if (!in_.labels.empty() && !IsNpyPath(in_.labels)) {
      label_table_path_ = in_.labels;  // a text table: read after the output is opened
    } else if (!in_.labels.empty()) {
      SEER_ASSIGN_OR_RETURN(NpyFile f, NpyFile::Open(in_.labels));
      const NpyHeader& h = f.header();
      if (h.shape.size() < 1 || h.shape.size() > 2 || (h.shape.size() == 2 && h.shape[1] != 1)) {
        return InvalidArgument(in_.labels + ": labels must have shape (N,) or (N, 1), got " + h.ShapeString());
      }
      SEER_RETURN_IF_ERROR(TakeRowCount(in_.labels, h.shape[0]));
      labels_ = std::make_unique<NpyFile>(std::move(f));
    }
    if (num_nodes_ < 0) num_nodes_ = ogb_num_nodes_;
    const std::string* split_paths[3] = {&in_.train, &in_.valid, &in_.test};
    for (int s = 0; s < 3; ++s) {
      if (split_paths[s]->empty()) continue;
      if (!IsNpyPath(*split_paths[s])) {
        split_table_paths_[s] = *split_paths[s];
        continue;
      }
      SEER_ASSIGN_OR_RETURN(NpyFile f, NpyFile::Open(*split_paths[s]));
      const NpyHeader& h = f.header();
      if (h.kind != 'i' && h.kind != 'u') {
        return InvalidArgument(*split_paths[s] + ": split ids dtype " + h.descr + " is not an integer type");
      }
      if (h.shape.size() < 1 || h.shape.size() > 2 || (h.shape.size() == 2 && h.shape[1] != 1)) {
        return InvalidArgument(*split_paths[s] + ": split ids must have shape (K,) or (K, 1), got " + h.ShapeString());
      }
      splits_[s] = std::make_unique<NpyFile>(std::move(f));
    }
    return CheckSplitSources();
  }

  // Drawn splits exclude given ones and need labels; table columns need tables.
  Status CheckSplitSources() const {
    const bool label_source = labels_ || !label_table_path_.empty() || !ogb_labels_.empty();
    if (!in_.label_id_col.empty() || !in_.label_col.empty()) {
      if (label_table_path_.empty()) {
        return InvalidArgument("--label-id-col/--label-col choose the columns of a labels table (--labels "
                               "FILE.csv/.tsv/.txt), not of " + (in_.labels.empty() ? "a missing --labels" : in_.labels));
      }
    }
    if (!in_.split_id_col.empty() && split_table_paths_[0].empty() && split_table_paths_[1].empty() &&
        split_table_paths_[2].empty()) {
      return InvalidArgument("--split-id-col chooses the id column of --train/--valid/--test id lists "
                             "(.csv/.tsv/.txt), but none is given");
    }
    if (!in_.split_fractions.any()) return Status::Ok();
    SEER_RETURN_IF_ERROR(ValidateSplitFractions(in_.split_fractions));
    for (const std::string* given : {&in_.train, &in_.valid, &in_.test}) {
      if (!given->empty()) {
        return InvalidArgument("--train-fraction/--valid-fraction/--test-fraction draw the splits, and " + *given +
                               " gives one: use one or the other");
      }
    }
    if (!ogb_splits_[0].empty() || !ogb_splits_[1].empty() || !ogb_splits_[2].empty()) {
      return InvalidArgument("--train-fraction/--valid-fraction/--test-fraction draw the splits, and " + in_.ogb_dir +
                             " has split/ files: choose another --ogb-split or drop the fractions");
    }
    if (!label_source) {
      return InvalidArgument("--train-fraction/--valid-fraction/--test-fraction draw the splits among labeled "
                             "nodes, but no labels are given (--labels FILE)");
    }
    return Status::Ok();
  }

  // The text tables (--labels/--train/--valid/--test that are not .npy) are read and
  // sorted now, so their errors come before the long build; they join the nodes during
  // the renumbering (--remap-ids) or after the CSC build.
  Status StartTables() {
    NodeTableOptions options;
    options.original_ids = in_.remap_ids;
    options.declared_classes = options_.num_classes > 0;
    options.label_limit = options.declared_classes ? options_.num_classes : kMaxAutoClasses;
    options.memory_budget_bytes = options_.memory_budget_bytes;
    options.work_dir = out_dir_;
    options.show_progress = options_.show_progress;
    if (!label_table_path_.empty()) {
      SEER_ASSIGN_OR_RETURN(label_table_,
                            NodeTable::StartLabels(label_table_path_, in_.label_id_col, in_.label_col, options));
      tables_.push_back(label_table_.get());
    }
    for (int s = 0; s < 3; ++s) {
      if (split_table_paths_[s].empty()) continue;
      SEER_ASSIGN_OR_RETURN(split_tables_[s], NodeTable::StartIds(split_table_paths_[s], in_.split_id_col, options));
      tables_.push_back(split_tables_[s].get());
    }
    return Status::Ok();
  }

  // Without --remap-ids: nodes 0..N-1 are ids 0..N-1.
  Status JoinTables() {
    for (NodeTable* table : tables_) {
      if (!in_.remap_ids) SEER_RETURN_IF_ERROR(table->MatchIntegerNodes(num_nodes_));
      if (table->not_in_graph() > 0) summary_.ids_not_in_graph.emplace_back(table->path(), table->not_in_graph());
    }
    return Status::Ok();
  }

  // --remap-ids: renumbers the ids (node_ids.txt) and fixes which row of the node arrays
  // each node takes (node_rows_): by --node-ids, else row r = integer id r.
  Status RemapIds(DatasetWriter& writer) {
    const bool node_arrays = features_ || labels_ || splits_[0] || splits_[1] || splits_[2];
    std::unique_ptr<NodeRowJoin> join;
    if (!in_.node_ids.empty()) {
      SEER_ASSIGN_OR_RETURN(join, NodeRowJoin::Start(in_.node_ids, options_.memory_budget_bytes, out_dir_,
                                                     options_.show_progress));
      SEER_RETURN_IF_ERROR(CheckNodeArrayRows(join->rows()));  // before the long build
    }
    IdRemap::NodeVisitor on_node;
    if (join || !tables_.empty()) {
      on_node = [&join, this](std::string_view key, int64_t node) -> Status {
        if (join) SEER_RETURN_IF_ERROR(join->Match(key, node));
        for (NodeTable* table : tables_) SEER_RETURN_IF_ERROR(table->Match(key, node));
        return Status::Ok();
      };
    }
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* ids, writer.OpenFile(dataset_files::kNodeIds));
    SEER_ASSIGN_OR_RETURN(remap_, IdRemap::Build(in_.edges, in_.columns, options_.memory_budget_bytes, out_dir_,
                                                 *ids, options_.show_progress, on_node, in_.node_ids));
    summary_.nodes_without_edges = remap_->isolated_nodes();
    summary_.detected_header = remap_->header_line();
    summary_.detected_header_line = remap_->header_line_number();
    summary_.comments_after_data = remap_->comments_after_data();
    edges_path_ = remap_->edges_path();
    edges_format_ = EdgeListFormat::kBin64;
    num_nodes_ = remap_->num_nodes();
    for (NodeTable* table : tables_) SEER_RETURN_IF_ERROR(table->Finish(num_nodes_));
    if (join) {
      SEER_ASSIGN_OR_RETURN(node_rows_, join->Finish(num_nodes_));
    } else if (node_arrays) {
      if (!remap_->integer_ids()) {
        return InvalidArgument(in_.edges + ": non-integer ids: node arrays then need --node-ids FILE (line r+1 = "
                               "the id of row r); without it row r belongs to integer id r");
      }
      SEER_ASSIGN_OR_RETURN(node_rows_, NodeRows::ById(remap_->original_ids_path(), num_nodes_));
    }
    return Status::Ok();
  }

  // A node array's row count: within the id range, and the node count when nothing
  // else gave one.
  Status TakeRowCount(const std::string& path, int64_t rows) {
    if (rows > kMaxNodeId + 1) {
      return InvalidArgument(fmt::format("{}: {} rows, above the largest supported node count 2^40", path, rows));
    }
    if (num_nodes_ < 0) {
      num_nodes_ = rows;
      rows_give_num_nodes_ = true;
    }
    return Status::Ok();
  }

  Status CheckNodeArrayRows(const NodeRows& rows) const {
    if (features_) SEER_RETURN_IF_ERROR(rows.CheckArrayRows(features_->path(), features_->header().shape[0], "feature rows"));
    if (labels_) SEER_RETURN_IF_ERROR(rows.CheckArrayRows(labels_->path(), labels_->header().shape[0], "labels"));
    return Status::Ok();
  }

  Status RowCountMismatch(const std::string& path, int64_t rows, const char* what) const {
    if (rows_give_num_nodes_ && rows < num_nodes_) {  // the edges need more rows than this array has
      return InvalidArgument(path + ": " + std::to_string(rows) + " " + what + ", but " + edges_path_ +
                             " has node id " + std::to_string(num_nodes_ - 1) +
                             " (every node id needs a row: the array is short or the id is wrong)");
    }
    return InvalidArgument(path + ": " + std::to_string(rows) + " " + what + ", but the graph has " +
                           std::to_string(num_nodes_) + " nodes (they must be equal)");
  }

  Status WriteFeatures(DatasetWriter& writer) {
    if (features_) return WriteNpyFeatures(writer);
    if (ogb_features_.empty()) {  // the format requires the file: empty, feature_dim 0
      return writer.OpenFile(dataset_files::kFeatures).status();
    }
    return WriteOgbFeatures(writer);
  }

  // features.npy: copied in chunks, converted when the dtype changes.
  Status WriteNpyFeatures(DatasetWriter& writer) {
    const NpyHeader& h = features_->header();
    if (node_rows_) {
      SEER_RETURN_IF_ERROR(node_rows_->CheckArrayRows(features_->path(), h.shape[0], "feature rows"));
    } else if (h.shape[0] != num_nodes_) {
      return RowCountMismatch(features_->path(), h.shape[0], "feature rows");
    }
    const int64_t f = h.shape[1];
    const FeatureDtype out = options_.feature_dtype.value_or(h.item_bytes == 2 ? FeatureDtype::kFloat16
                                                                                : FeatureDtype::kFloat32);
    summary_.feature_dim = f;
    summary_.feature_dtype = out;
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kFeatures));
    const int64_t rows_per_chunk = std::max<int64_t>(1, chunk_bytes_ / std::max<int64_t>(1, f * 8));
    std::vector<char> raw;
    std::vector<float> values;
    std::vector<char> stored;
    std::vector<int64_t> ids;
    ProgressReporter progress("prep: features", num_nodes_, "rows", options_.show_progress);
    const bool same = (out == FeatureDtype::kFloat32 && h.item_bytes == 4) ||
                      (out == FeatureDtype::kFloat16 && h.item_bytes == 2);
    const float limit = StoredOverflowLimit(out);
    for (int64_t row = 0; row < num_nodes_; row += rows_per_chunk) {
      const int64_t rows = std::min(rows_per_chunk, num_nodes_ - row);
      const int64_t count = rows * f;
      if (node_rows_) {  // the rows of nodes [row, row + rows): one read per run of consecutive rows
        ids.resize(static_cast<size_t>(rows));
        SEER_RETURN_IF_ERROR(node_rows_->RowsOf(row, rows, ids.data()));
      }
      if (same) {
        raw.resize(static_cast<size_t>(count * h.item_bytes));
        if (node_rows_) {
          SEER_RETURN_IF_ERROR(ForEachRowRun(ids.data(), rows, [&](int64_t first, int64_t n, int64_t i) {
            return features_->ReadRaw(first * f, n * f, raw.data() + i * f * h.item_bytes);
          }));
        } else {
          SEER_RETURN_IF_ERROR(features_->ReadRaw(row * f, count, raw.data()));
        }
        // Copied as is: only NaN/inf can be wrong (float32 by bits, float16 as numpy's).
        if (FirstNonFiniteStored(raw.data(), out, count) >= 0) {
          values.resize(static_cast<size_t>(count));
          DecodeFeatureValues(raw.data(), out, count, values.data());
          SEER_RETURN_IF_ERROR(CheckFeatureValues(values.data(), rows, f, row, node_rows_ ? ids.data() : nullptr,
                                                  out, limit));
        }
        SEER_RETURN_IF_ERROR(file->Append(raw.data(), static_cast<int64_t>(raw.size())));
      } else {
        values.resize(static_cast<size_t>(count));
        if (node_rows_) {
          SEER_RETURN_IF_ERROR(ForEachRowRun(ids.data(), rows, [&](int64_t first, int64_t n, int64_t i) {
            return features_->ReadAsFloat32(first * f, n * f, values.data() + i * f);
          }));
        } else {
          SEER_RETURN_IF_ERROR(features_->ReadAsFloat32(row * f, count, values.data()));
        }
        if (FirstNotBelow(values.data(), count, limit) >= 0) {
          SEER_RETURN_IF_ERROR(CheckFeatureValues(values.data(), rows, f, row, node_rows_ ? ids.data() : nullptr,
                                                  out, limit));
        }
        SEER_RETURN_IF_ERROR(AppendFeatureRows(file, out, values.data(), f, rows, &stored));
      }
      progress.Add(rows);
    }
    progress.Finish();
    return Status::Ok();
  }

  // values[0, rows * f): the features of nodes [first_node, first_node + rows) as float32,
  // about to be stored as `out`, with at least one NaN/inf or value beyond `limit`
  // (StoredOverflowLimit(out)). Refused (the first, naming the input row and column)
  // unless --allow-non-finite, which counts them: NaN/inf in the input as kept, finite
  // values the storing turns into ±inf as overflowed. A float64 input's value is read
  // again to tell 1e300 (finite, beyond float32) from inf.
  Status CheckFeatureValues(const float* values, int64_t rows, int64_t f, int64_t first_node, const int64_t* ids,
                            FeatureDtype out, float limit) {
    const NpyHeader& h = features_->header();
    for (int64_t i = FirstNotBelow(values, rows * f, limit); i >= 0 && i < rows * f; ++i) {
      const float v = values[i];
      if (std::fabs(v) < limit) continue;
      const int64_t r = i / f, c = i % f;
      const int64_t input_row = ids != nullptr ? ids[r] : first_node + r;
      double source = v;
      if (std::isinf(v) && h.kind == 'f' && h.item_bytes == 8) {
        SEER_RETURN_IF_ERROR(features_->ReadRaw(input_row * f + c, 1, &source));
      }
      if (!options_.allow_non_finite) {
        return FeatureValueRefused(fmt::format("{}: row {}, column {}", features_->path(), input_row, c), source,
                                   h.item_bytes == 8 ? fmt::format("{}", source) : fmt::format("{}", v), out);
      }
      ++(std::isfinite(source) ? summary_.overflowed_to_inf : summary_.non_finite_kept);
    }
    return Status::Ok();
  }

  // A feature value that is not finite (`source`, as read; `shown` as written in the
  // input) or that `out` cannot hold.
  static Status FeatureValueRefused(const std::string& where, double source, const std::string& shown,
                                    FeatureDtype out) {
    if (!std::isfinite(source)) {
      return InvalidArgument(fmt::format("{}: feature value {} is not finite (training cannot use it); fix the "
                                         "input, or give --allow-non-finite to keep such values",
                                         where, shown));
    }
    return InvalidArgument(fmt::format("{}: feature value {} does not fit {} (largest finite {:.7g}) and would be "
                                       "stored as {}inf; scale the features{}, or give --allow-non-finite",
                                       where, shown, FeatureDtypeName(out), LargestFinite(out), source < 0 ? "-" : "",
                                       out == FeatureDtype::kFloat32 ? "" : ", store them as float32 (--feature-dtype)"));
  }

  // OGB node-feat.csv: one row of F comma-separated floats per node.
  Status WriteOgbFeatures(DatasetWriter& writer) {
    SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(ogb_features_));
    const FeatureDtype out = options_.feature_dtype.value_or(FeatureDtype::kFloat32);
    summary_.feature_dtype = out;
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kFeatures));
    std::vector<float> row;
    std::vector<char> stored;
    int64_t rows = 0;
    int64_t f = -1;
    std::string_view line;
    const float limit = StoredOverflowLimit(out);
    ProgressReporter progress("prep: node-feat", num_nodes_, "rows", options_.show_progress);
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, reader.NextLine(&line));
      if (!more) break;
      const std::string where = ogb_features_ + ":" + std::to_string(reader.line_number());
      row.clear();
      size_t start = 0;
      while (start <= line.size()) {
        size_t comma = line.find(',', start);
        std::string_view token = Trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        float v;
        if (!ParseFloat(token, &v)) {
          // 1e300 (beyond float32) or 1e-50 (below its subnormals): a number, but not a float.
          const std::optional<double> wide = ParseNumber<double>(token);
          if (!wide) {
            return InvalidArgument(where + ": non-numeric feature value '" + Excerpt(token) + "' in column " +
                                   std::to_string(row.size() + 1));
          }
          constexpr float kInf = std::numeric_limits<float>::infinity();
          v = std::fabs(*wide) > std::numeric_limits<float>::max() ? (*wide < 0 ? -kInf : kInf)
                                                                    : static_cast<float>(*wide);
        }
        if (!(std::fabs(v) < limit)) {
          const double source = std::isinf(v) ? ParseNumber<double>(token).value_or(v) : v;
          if (!options_.allow_non_finite) {
            return FeatureValueRefused(where + ": column " + std::to_string(row.size() + 1), source,
                                       Excerpt(token, 40), out);
          }
          ++(std::isfinite(source) ? summary_.overflowed_to_inf : summary_.non_finite_kept);
        }
        row.push_back(v);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      if (f < 0) f = static_cast<int64_t>(row.size());
      if (static_cast<int64_t>(row.size()) != f) {
        return InvalidArgument(where + ": malformed line: " + std::to_string(row.size()) + " values, expected " +
                               std::to_string(f) + " like line 1");
      }
      if (++rows > num_nodes_) break;
      SEER_RETURN_IF_ERROR(AppendFeatureRows(file, out, row.data(), f, 1, &stored));
      progress.Add(1);
    }
    progress.Finish();
    if (rows != num_nodes_) return RowCountMismatch(ogb_features_, rows > num_nodes_ ? num_nodes_ + 1 : rows,
                                                    rows > num_nodes_ ? "or more feature rows" : "feature rows");
    summary_.feature_dim = std::max<int64_t>(f, 0);
    return Status::Ok();
  }

  Status CheckLabel(int64_t label, const std::string& where) {
    const bool declared = options_.num_classes > 0;
    const int64_t limit = declared ? options_.num_classes : kMaxAutoClasses;
    if (label < -1 || label >= limit) {
      return InvalidArgument(where + ": label " + std::to_string(label) + " out of range [-1, " + std::to_string(limit) +
                             ")" +
                             (declared ? std::string(" given by --num-classes")
                                       : " (labels are 0..C-1 with C at most " + std::to_string(kMaxAutoClasses) +
                                             " unless --num-classes says more)") +
                             "; -1 = unlabeled");
    }
    if (label >= 0) {
      ++summary_.num_labeled;
      summary_.num_classes = std::max(summary_.num_classes, label + 1);
    }
    return Status::Ok();
  }

  // Appends the labels of the next n nodes and, with --train-fraction..., draws the split
  // of each labeled one (storage/prep/node_split.h).
  Status EmitLabels(AtomicFileWriter* file, const int32_t* labels, int64_t n) {
    SEER_RETURN_IF_ERROR(file->AppendValues(labels, n));
    if (drawn_) SEER_RETURN_IF_ERROR(drawn_->Add(labels_emitted_, labels, n));
    labels_emitted_ += n;
    return Status::Ok();
  }

  Status WriteLabels(DatasetWriter& writer) {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kLabels));
    if (in_.split_fractions.any()) {
      SEER_ASSIGN_OR_RETURN(DrawnSplits drawn, DrawnSplits::Open(writer, in_.split_fractions, in_.split_seed));
      drawn_ = std::make_unique<DrawnSplits>(std::move(drawn));
      summary_.splits_drawn = true;
    }
    std::vector<int64_t> wide;
    std::vector<int32_t> narrow;
    if (label_table_) return WriteTableLabels(file);
    if (!labels_ && ogb_labels_.empty()) {  // the format requires the file: all unlabeled
      narrow.assign(static_cast<size_t>(std::clamp<int64_t>(num_nodes_, 1, 65536)), -1);
      for (int64_t first = 0; first < num_nodes_; first += 65536) {
        SEER_RETURN_IF_ERROR(EmitLabels(file, narrow.data(), std::min<int64_t>(65536, num_nodes_ - first)));
      }
      return Status::Ok();
    }
    if (labels_) {
      const NpyHeader& h = labels_->header();
      if (node_rows_) {
        SEER_RETURN_IF_ERROR(node_rows_->CheckArrayRows(labels_->path(), h.shape[0], "labels"));
      } else if (h.shape[0] != num_nodes_) {
        return RowCountMismatch(labels_->path(), h.shape[0], "labels");
      }
      const int64_t chunk = chunk_bytes_ / 8;
      std::vector<int64_t> rows;
      for (int64_t first = 0; first < num_nodes_; first += chunk) {
        const int64_t n = std::min(chunk, num_nodes_ - first);
        wide.resize(static_cast<size_t>(n));
        narrow.resize(static_cast<size_t>(n));
        rows.resize(static_cast<size_t>(n));
        if (node_rows_) {
          SEER_RETURN_IF_ERROR(node_rows_->RowsOf(first, n, rows.data()));
          SEER_RETURN_IF_ERROR(ForEachRowRun(rows.data(), n, [&](int64_t row, int64_t count, int64_t i) {
            return labels_->ReadAsInt64(row, count, &wide[i], -1);
          }));
        } else {
          for (int64_t i = 0; i < n; ++i) rows[i] = first + i;
          SEER_RETURN_IF_ERROR(labels_->ReadAsInt64(first, n, wide.data(), -1));
        }
        for (int64_t i = 0; i < n; ++i) {
          SEER_RETURN_IF_ERROR(CheckLabel(wide[i], labels_->path() + ": element " + std::to_string(rows[i])));
          narrow[i] = static_cast<int32_t>(wide[i]);
        }
        SEER_RETURN_IF_ERROR(EmitLabels(file, narrow.data(), n));
      }
      return Status::Ok();
    }
    SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(ogb_labels_));
    std::string_view line;
    int64_t rows = 0;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, reader.NextLine(&line));
      if (!more) break;
      const std::string where = ogb_labels_ + ":" + std::to_string(reader.line_number());
      std::string_view token = Trim(line);
      int64_t label;
      float as_float;
      if (token.empty() || token == "nan" || token == "NaN") {
        label = -1;
      } else if (!ParseInt64(token, &label)) {
        if (!ParseFloat(token, &as_float) || std::floor(as_float) != as_float) {
          return InvalidArgument(where + ": non-numeric label '" + std::string(token) + "'");
        }
        label = static_cast<int64_t>(as_float);
      }
      SEER_RETURN_IF_ERROR(CheckLabel(label, where));
      if (++rows > num_nodes_) break;
      narrow.push_back(static_cast<int32_t>(label));
      if (narrow.size() >= 65536) {
        SEER_RETURN_IF_ERROR(EmitLabels(file, narrow.data(), static_cast<int64_t>(narrow.size())));
        narrow.clear();
      }
    }
    if (rows != num_nodes_) return RowCountMismatch(ogb_labels_, rows, rows > num_nodes_ ? "or more labels" : "labels");
    return EmitLabels(file, narrow.data(), static_cast<int64_t>(narrow.size()));
  }

  // A labels table: its join wrote one int32 per node (checked when read).
  Status WriteTableLabels(AtomicFileWriter* file) {
    SEER_ASSIGN_OR_RETURN(SequentialReader in, SequentialReader::Open(label_table_->result_path()));
    std::vector<int32_t> labels(static_cast<size_t>(std::clamp<int64_t>(num_nodes_, 1, chunk_bytes_ / 4)));
    for (int64_t first = 0; first < num_nodes_; first += static_cast<int64_t>(labels.size())) {
      const int64_t n = std::min<int64_t>(static_cast<int64_t>(labels.size()), num_nodes_ - first);
      SEER_ASSIGN_OR_RETURN(bool more, in.Read(labels.data(), static_cast<size_t>(n) * sizeof(int32_t)));
      if (!more) return Corrupt(label_table_->result_path() + ": ends at node " + std::to_string(first));
      for (int64_t i = 0; i < n; ++i) {
        if (labels[i] < 0) continue;
        ++summary_.num_labeled;
        summary_.num_classes = std::max<int64_t>(summary_.num_classes, labels[i] + 1);
      }
      SEER_RETURN_IF_ERROR(EmitLabels(file, labels.data(), n));
    }
    return Status::Ok();
  }

  Status WriteSplits(DatasetWriter& writer) {
    if (drawn_) {  // written with the labels
      summary_.num_train = drawn_->count(0);
      summary_.num_valid = drawn_->count(1);
      summary_.num_test = drawn_->count(2);
      return Status::Ok();
    }
    GivenSplit given[3];
    for (int s = 0; s < 3; ++s) {
      given[s].npy = splits_[s].get();
      given[s].table = split_tables_[s].get();
      given[s].ogb_csv = ogb_splits_[s];
    }
    int64_t counts[3] = {0, 0, 0};
    SEER_RETURN_IF_ERROR(WriteGivenSplits(given, node_rows_.get(), num_nodes_, chunk_bytes_ / 8, writer, counts));
    summary_.num_train = counts[0];
    summary_.num_valid = counts[1];
    summary_.num_test = counts[2];
    return Status::Ok();
  }

  // Peak bytes of the node-array phase for these inputs (num_nodes_ < 0: not known yet,
  // then the arrays' own sizes bound it): the touched part of every file writer's
  // buffer, the conversion chunks, text readers, and the split bitmap.
  int64_t NodeArrayBytes() const {
    const int64_t n = std::max<int64_t>(num_nodes_, 0);
    auto writer = [](int64_t bytes) { return std::min(kWriterBufferBytes, bytes); };
    // indptr's and indices' writers keep what their buffers touched during the build.
    int64_t total = writer(8 * (n + 1)) + writer(summary_.csc.num_edges * IndexDtypeBytes(summary_.csc.index_dtype));
    if (features_) {
      const NpyHeader& h = features_->header();
      const int64_t bytes = h.shape[0] * h.shape[1] * 8;  // raw + float32 + float16 copies bound
      total += writer(h.shape[0] * h.shape[1] * 4) + std::min(bytes, chunk_bytes_ * 7 / 4);
    } else if (!ogb_features_.empty()) {
      total += kWriterBufferBytes + kTextReaderBytes;
    }
    if (labels_) {
      total += writer(4 * n) + std::min(12 * labels_->header().shape[0], chunk_bytes_ * 3 / 2);
    } else if (!ogb_labels_.empty()) {
      total += writer(4 * n) + kTextReaderBytes + (256 << 10);
    } else if (!label_table_path_.empty()) {  // the join's result read back in chunks
      total += writer(4 * n) + std::min(4 * n, chunk_bytes_) + kSequentialBufferBytes;
    } else {
      total += writer(4 * n) + std::min<int64_t>(4 * n, 256 << 10);
    }
    bool any_split = false;
    for (int s = 0; s < 3; ++s) {
      if (splits_[s]) {
        const int64_t k = splits_[s]->header().shape[0];
        total += writer(8 * k) + std::min(8 * k, chunk_bytes_);
        any_split = true;
      } else if (!ogb_splits_[s].empty()) {
        total += kWriterBufferBytes + kTextReaderBytes + (512 << 10);
        any_split = true;
      } else if (!split_table_paths_[s].empty()) {
        total += writer(8 * n) + std::min<int64_t>(8 * n, 512 << 10) + kSequentialBufferBytes;
        any_split = true;
      }
    }
    // Drawn splits: three writers filled as the labels are written, and their id chunks.
    if (in_.split_fractions.any()) total += 3 * writer(8 * n) + std::min(8 * n, chunk_bytes_ / 4 * 8);
    if (any_split) total += n;  // SplitRegistry: one byte per node
    return total;
  }

  const PrepInputs& in_;
  const PrepOptions& options_;
  int64_t chunk_bytes_ = kMaxChunkBytes;
  std::string out_dir_;
  std::string edges_path_;
  EdgeListFormat edges_format_ = EdgeListFormat::kAuto;
  int64_t num_nodes_ = -1;
  bool rows_give_num_nodes_ = false;  // num_nodes_ is the features' (or labels') row count
  int64_t ogb_num_nodes_ = -1;
  std::string ogb_features_, ogb_labels_;
  std::string ogb_splits_[3];
  std::unique_ptr<NpyFile> features_, labels_;
  std::unique_ptr<NpyFile> splits_[3];
  std::string label_table_path_, split_table_paths_[3];   // text tables (not .npy)
  std::unique_ptr<NodeTable> label_table_, split_tables_[3];
  std::vector<NodeTable*> tables_;                          // those started
  std::unique_ptr<DrawnSplits> drawn_;  // --train-fraction ...: written as the labels are
  int64_t labels_emitted_ = 0;  // nodes whose labels EmitLabels wrote
  std::unique_ptr<IdRemap> remap_;      // --remap-ids
  std::unique_ptr<NodeRows> node_rows_;  // --remap-ids with node arrays: the row of each node
  PrepSummary summary_;
};

}  // namespace

Result<PrepSummary> PrepareDataset(const PrepInputs& inputs, const PrepOptions& options,
                                   const std::string& out_dir) {
  if (options.threads < 0) return InvalidArgument("--threads must be >= 0 (0: every core)");
  if (options.threads == 0) return Prep(inputs, options, out_dir).Run();
  tbb::task_arena arena(options.threads);
  std::optional<Result<PrepSummary>> result;
  arena.execute([&] { result.emplace(Prep(inputs, options, out_dir).Run()); });
  return std::move(*result);
}

}  // namespace seer
