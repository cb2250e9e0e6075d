#include "executor/typed_data.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include <fcntl.h>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"

namespace seer {

Result<LabelTable> LoadTargetLabels(const Dataset& dataset, const TypedTarget& target,
                                    const std::vector<const std::vector<int64_t>*>& sets) {
  const DatasetNodeType& type = dataset.manifest().node_types[static_cast<size_t>(target.type)];
  LabelTable all;
  for (const std::vector<int64_t>* nodes : sets) {
    SEER_ASSIGN_OR_RETURN(LabelTable more, LabelTable::LoadFile(dataset.PathOf(type.labels), target.offset,
                                                                target.count, type.num_classes, *nodes));
    all.Merge(more);
  }
  return all;
}

// ---- TypedFeatureReader -----------------------------------------------------------------

Result<std::unique_ptr<TypedFeatureReader>> TypedFeatureReader::Create(
    const Dataset& dataset, std::vector<std::unique_ptr<BlockReader>> readers, int64_t row_bytes) {
  const DatasetManifest& m = dataset.manifest();
  if (readers.size() != m.node_types.size()) {
    return InvalidArgument("TypedFeatureReader: one reader per node type expected");
  }
  std::unique_ptr<TypedFeatureReader> r(new TypedFeatureReader());
  r->offsets_ = NodeTypeOffsets(m);
  r->row_bytes_ = row_bytes;
  r->description_ = dataset.dir() + " (features of " + std::to_string(m.node_types.size()) + " node types)";
  bool first = true;
  for (size_t t = 0; t < m.node_types.size(); ++t) {
    const DatasetNodeType& type = m.node_types[t];
    const int64_t bytes = type.feature_dim > 0 ? type.feature_row_bytes() : 0;
    if (bytes > row_bytes) return InvalidArgument("TypedFeatureReader: a row wider than the view's");
    if (bytes > 0 && readers[t] == nullptr) {
      return InvalidArgument("TypedFeatureReader: no reader for the features of node type " + type.name);
    }
    r->type_row_bytes_.push_back(bytes);
    if (readers[t] != nullptr && first) {
      r->alignment_ = readers[t]->alignment_bytes();
      r->mode_ = readers[t]->mode();
      r->direct_ = readers[t]->direct();
      first = false;
    }
  }
  r->readers_ = std::move(readers);
  return r;
}

Status TypedFeatureReader::ReadBatch(const ReadRequest* requests, size_t count, ReadStats* stats) {
  std::vector<std::vector<ReadRequest>> per_type(readers_.size());
  for (size_t i = 0; i < count; ++i) {
    const ReadRequest& q = requests[i];
    if (q.offset_bytes % row_bytes_ != 0 || q.length_bytes % row_bytes_ != 0 || q.offset_bytes < 0 ||
        q.offset_bytes + q.length_bytes > file_size_bytes()) {
      return InvalidArgument(fmt::format("{}: read of {} bytes at offset {} is not whole rows of {} bytes", description_,
                                         q.length_bytes, q.offset_bytes, row_bytes_));
    }
    int64_t g = q.offset_bytes / row_bytes_;
    const int64_t end = g + q.length_bytes / row_bytes_;
    char* dest = static_cast<char*>(q.dest);
    while (g < end) {
      const size_t t = static_cast<size_t>(std::upper_bound(offsets_.begin(), offsets_.end(), g) - offsets_.begin()) - 1;
      const int64_t run = std::min(end, offsets_[t + 1]) - g;  // rows of type t
      const int64_t own = type_row_bytes_[t];
      const int64_t local = g - offsets_[t];
      if (own == row_bytes_) {
        per_type[t].push_back(ReadRequest{local * own, run * own, dest});
      } else {
        for (int64_t k = 0; k < run; ++k) {
          char* row = dest + k * row_bytes_;
          std::memset(row + own, 0, static_cast<size_t>(row_bytes_ - own));
          if (own > 0) per_type[t].push_back(ReadRequest{(local + k) * own, own, row});
        }
      }
      dest += run * row_bytes_;
      g += run;
    }
  }
  ReadStats total;
  for (size_t t = 0; t < per_type.size(); ++t) {
    if (per_type[t].empty()) continue;
    ReadStats type_stats;
    SEER_RETURN_IF_ERROR(readers_[t]->ReadBatch(per_type[t], &type_stats));
    total.Add(type_stats);
  }
  total.requests = static_cast<int64_t>(count);  // what was asked of this reader
  if (stats != nullptr) stats->Add(total);
  return Status::Ok();
}

}  // namespace seer
