#include "storage/prep/node_reorder.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/node_order.h"
#include "storage/prep/node_reorder_internal.h"

namespace seer {
namespace {

constexpr int64_t kBlockBytes = 4096;

using reorder_internal::Mapping;

// indices.bin as int64 values, whatever its dtype.
struct Indices {
  const char* data;
  IndexDtype dtype;
  int64_t operator[](int64_t e) const {
    if (dtype == IndexDtype::kUint32) return reinterpret_cast<const uint32_t*>(data)[e];
    return reinterpret_cast<const int64_t*>(data)[e];
  }
};

Result<Indices> MapIndices(const Dataset& dataset, Mapping* file) {
  SEER_ASSIGN_OR_RETURN(*file, Mapping::ReadOnly(dataset.PathOf(dataset_files::kIndices)));
  ::madvise(file->data(), static_cast<size_t>(file->size()), MADV_SEQUENTIAL);
  return Indices{file->data(), dataset.manifest().index_dtype};
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// new_of_old[order[k]] = k.
std::vector<int64_t> Inverse(const std::vector<int64_t>& order) {
  std::vector<int64_t> inverse(order.size());
  for (size_t k = 0; k < order.size(); ++k) inverse[static_cast<size_t>(order[k])] = static_cast<int64_t>(k);
  return inverse;
}

}  // namespace

Result<NodeOrderMethod> ParseNodeOrderMethod(const std::string& text) {
  if (text == "degree") return NodeOrderMethod::kDegree;
  if (text == "bfs") return NodeOrderMethod::kBfs;
  return InvalidArgument("unknown node order '" + text + "' (degree | bfs)");
}

const char* NodeOrderMethodName(NodeOrderMethod method) {
  return method == NodeOrderMethod::kDegree ? "degree" : "bfs";
}

Result<std::vector<int64_t>> ComputeNodeOrder(const Dataset& dataset, NodeOrderMethod method) {
  const int64_t n = dataset.manifest().num_nodes;
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> indptr, dataset.LoadIndptr());
  Mapping file;
  SEER_ASSIGN_OR_RETURN(Indices indices, MapIndices(dataset, &file));
  std::vector<int64_t> order(static_cast<size_t>(n));
  if (method == NodeOrderMethod::kDegree) {
    std::vector<int64_t> out_degree(static_cast<size_t>(n), 0);
    const int64_t m = indptr[static_cast<size_t>(n)];
    for (int64_t e = 0; e < m; ++e) ++out_degree[static_cast<size_t>(indices[e])];
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return out_degree[static_cast<size_t>(a)] > out_degree[static_cast<size_t>(b)];
    });
    return order;
  }
  SEER_RETURN_IF_ERROR(reorder_internal::BreadthFirstOrder(
      n, [&](int64_t v) { return indptr[static_cast<size_t>(v)]; }, [&](int64_t e) { return indices[e]; },
      order.data(), dataset.PathOf(dataset_files::kIndices), [] {}));
  return order;
}

Result<double> MeanBlocksPerNeighborList(const Dataset& dataset, const std::vector<int64_t>& new_of_old) {
  const DatasetManifest& m = dataset.manifest();
  const int64_t row_bytes = m.feature_row_bytes();
  if (row_bytes == 0 || m.num_edges == 0) return 0.0;
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> indptr, dataset.LoadIndptr());
  Mapping file;
  SEER_ASSIGN_OR_RETURN(Indices indices, MapIndices(dataset, &file));
  std::vector<int64_t> blocks;
  double total = 0;
  int64_t lists = 0;
  for (int64_t v = 0; v < m.num_nodes; ++v) {
    const int64_t begin = indptr[static_cast<size_t>(v)], end = indptr[static_cast<size_t>(v) + 1];
    if (begin == end) continue;
    blocks.clear();
    for (int64_t e = begin; e < end; ++e) {
      int64_t u = indices[e];
      if (!new_of_old.empty()) u = new_of_old[static_cast<size_t>(u)];
      const int64_t first = u * row_bytes / kBlockBytes, last = ((u + 1) * row_bytes - 1) / kBlockBytes;
      for (int64_t b = first; b <= last; ++b) blocks.push_back(b);
    }
    std::sort(blocks.begin(), blocks.end());
    total += static_cast<double>(std::unique(blocks.begin(), blocks.end()) - blocks.begin());
    ++lists;
  }
  return lists == 0 ? 0.0 : total / static_cast<double>(lists);
}

namespace reorder_internal {

DatasetManifest ReorderedManifest(const DatasetManifest& m, const ReorderOptions& options) {
  DatasetManifest out = m;
  out.files.clear();
  out.created_by = options.created_by;
  out.node_order = dataset_files::kNodeOrder;
  const std::string method = NodeOrderMethodName(options.method);
  out.node_order_method = m.node_order_method.empty() ? method : m.node_order_method + "+" + method;
  return out;
}

}  // namespace reorder_internal

Result<ReorderSummary> ReorderDataset(const std::string& in_dir, const std::string& out_dir,
                                      const ReorderOptions& options) {
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::Open(in_dir));
  const DatasetManifest& m = dataset.manifest();
  const int64_t n = m.num_nodes;
  if (m.edge_splits.present()) {  // their node ids would need renumbering too
    return InvalidArgument(in_dir + " has edge splits (seer split-edges): reorder the dataset they were made from, "
                                    "then split its edges");
  }
  if (options.memory_budget_bytes > 0) return reorder_internal::ReorderDatasetExternal(dataset, out_dir, options);
  ReorderSummary summary;
  summary.num_nodes = n;
  summary.num_edges = m.num_edges;
  // An existing order is composed with the new one, so node_order.bin always maps to the
  // numbering the dataset was written with; read (and check) it before any work.
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> previous_order, LoadNodeOrder(dataset));

  auto start = std::chrono::steady_clock::now();
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> order, ComputeNodeOrder(dataset, options.method));
  const std::vector<int64_t> new_of_old = Inverse(order);
  summary.order_seconds = Seconds(start);
  SEER_ASSIGN_OR_RETURN(summary.blocks_per_list_before, MeanBlocksPerNeighborList(dataset, {}));
  SEER_ASSIGN_OR_RETURN(summary.blocks_per_list_after, MeanBlocksPerNeighborList(dataset, new_of_old));

  start = std::chrono::steady_clock::now();
  SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(out_dir, options.force));
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> indptr, dataset.LoadIndptr());
  constexpr int64_t kChunk = int64_t{1} << 16;
  {  // indptr: new node k has old node order[k]'s in-degree.
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kIndptr));
    std::vector<int64_t> out;
    out.reserve(static_cast<size_t>(std::min(n + 1, kChunk)));
    int64_t offset = 0;
    out.push_back(0);
    for (int64_t k = 0; k < n; ++k) {
      const size_t v = static_cast<size_t>(order[static_cast<size_t>(k)]);
      offset += indptr[v + 1] - indptr[v];
      out.push_back(offset);
      if (static_cast<int64_t>(out.size()) == kChunk) {
        SEER_RETURN_IF_ERROR(file->AppendValues(out.data(), static_cast<int64_t>(out.size())));
        out.clear();
      }
    }
    SEER_RETURN_IF_ERROR(file->AppendValues(out.data(), static_cast<int64_t>(out.size())));
  }
  {  // indices: each list relabelled, in the list's own order.
    Mapping mapped;
    SEER_ASSIGN_OR_RETURN(Indices indices, MapIndices(dataset, &mapped));
    ::madvise(mapped.data(), static_cast<size_t>(mapped.size()), MADV_RANDOM);
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kIndices));
    ProgressReporter progress("reorder: edges", m.num_edges, "edges", options.show_progress);
    std::vector<uint32_t> out32;
    std::vector<int64_t> out64;
    const bool narrow = m.index_dtype == IndexDtype::kUint32;
    auto flush = [&]() -> Status {
      const int64_t count = static_cast<int64_t>(narrow ? out32.size() : out64.size());
      Status st = narrow ? file->AppendValues(out32.data(), count) : file->AppendValues(out64.data(), count);
      progress.Add(count);
      out32.clear();
      out64.clear();
      return st;
    };
    for (int64_t k = 0; k < n; ++k) {
      const size_t v = static_cast<size_t>(order[static_cast<size_t>(k)]);
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
        const int64_t u = new_of_old[static_cast<size_t>(indices[e])];
        if (narrow) out32.push_back(static_cast<uint32_t>(u)); else out64.push_back(u);
      }
      if (static_cast<int64_t>(narrow ? out32.size() : out64.size()) >= kChunk) SEER_RETURN_IF_ERROR(flush());
    }
    SEER_RETURN_IF_ERROR(flush());
    progress.Finish();
  }
  {  // features: row k = old row order[k] (one random read each, sequential writes).
    const int64_t row_bytes = m.feature_row_bytes();
    SEER_ASSIGN_OR_RETURN(Mapping mapped, Mapping::ReadOnly(dataset.PathOf(dataset_files::kFeatures)));
    if (mapped.size() < n * row_bytes) {
      return Corrupt(dataset.PathOf(dataset_files::kFeatures) + ": " + std::to_string(mapped.size()) +
                     " bytes, fewer than " + std::to_string(n * row_bytes));
    }
    if (mapped.size() > 0) ::madvise(mapped.data(), static_cast<size_t>(mapped.size()), MADV_RANDOM);
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kFeatures));
    ProgressReporter progress("reorder: feature rows", n, "rows", options.show_progress);
    const int64_t rows_per_chunk = std::max<int64_t>(1, (int64_t{4} << 20) / std::max<int64_t>(row_bytes, 1));
    std::vector<char> out(static_cast<size_t>(std::min(n, rows_per_chunk) * row_bytes));
    for (int64_t k0 = 0; k0 < n; k0 += rows_per_chunk) {
      const int64_t rows = std::min(rows_per_chunk, n - k0);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t v = order[static_cast<size_t>(k0 + r)];
        std::copy_n(mapped.data() + v * row_bytes, row_bytes, out.data() + r * row_bytes);
      }
      SEER_RETURN_IF_ERROR(file->Append(out.data(), rows * row_bytes));
      progress.Add(rows);
    }
    progress.Finish();
  }
  {  // labels
    SEER_ASSIGN_OR_RETURN(std::vector<int32_t> labels, dataset.LoadLabels());
    std::vector<int32_t> out(labels.size());
    for (int64_t k = 0; k < n; ++k) out[static_cast<size_t>(k)] = labels[static_cast<size_t>(order[static_cast<size_t>(k)])];
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kLabels));
    SEER_RETURN_IF_ERROR(file->AppendValues(out.data(), static_cast<int64_t>(out.size())));
  }
  for (const char* split : {"train", "valid", "test"}) {  // the same nodes, in the same order
    const std::string name = std::string(split) + ".bin";
    if (m.files.count(name) == 0) continue;
    SEER_ASSIGN_OR_RETURN(std::vector<int64_t> ids, dataset.LoadSplit(split));
    for (int64_t& id : ids) id = new_of_old[static_cast<size_t>(id)];
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(name));
    SEER_RETURN_IF_ERROR(file->AppendValues(ids.data(), static_cast<int64_t>(ids.size())));
  }
  if (!m.node_ids.empty()) {  // unchanged: node_order.bin points into it
    SEER_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(dataset.PathOf(m.node_ids)));
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(m.node_ids));
    SEER_RETURN_IF_ERROR(file->Append(text.data(), static_cast<int64_t>(text.size())));
  }
  {  // node_order.bin, composed with an earlier order
    std::vector<int64_t> total = order;
    if (!previous_order.empty()) {
      for (int64_t& v : total) v = previous_order[static_cast<size_t>(v)];
    }
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kNodeOrder));
    SEER_RETURN_IF_ERROR(file->AppendValues(total.data(), static_cast<int64_t>(total.size())));
  }
  SEER_RETURN_IF_ERROR(writer.Commit(reorder_internal::ReorderedManifest(m, options)));
  summary.rewrite_seconds = Seconds(start);
  return summary;
}

}  // namespace seer
