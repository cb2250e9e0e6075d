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
    const Dataset& dataset, std::vector<std::unique_ptr<BlockReader>> readers, const FeatureUnits& units) {
  const DatasetManifest& m = dataset.manifest();
  if (readers.size() != m.node_types.size() || units.num_types() != static_cast<int64_t>(m.node_types.size())) {
    return InvalidArgument("TypedFeatureReader: one reader and one unit layout per node type expected");
  }
  std::unique_ptr<TypedFeatureReader> r(new TypedFeatureReader());
  r->units_ = units;
  r->unit_bytes_ = units.unit_bytes();
  r->description_ = dataset.dir() + " (features of " + std::to_string(m.node_types.size()) + " node types)";
  bool first = true;
  for (size_t t = 0; t < m.node_types.size(); ++t) {
    const DatasetNodeType& type = m.node_types[t];
    const int64_t bytes = type.feature_dim > 0 ? type.feature_row_bytes() : 0;
    if (bytes != units.type_row_bytes(static_cast<int64_t>(t)) ||
        bytes > units.units_per_row(static_cast<int64_t>(t)) * units.unit_bytes()) {
      return InvalidArgument("TypedFeatureReader: the unit layout does not hold node type " + type.name + "'s rows");
    }
    if (bytes > 0 && readers[t] == nullptr) {
      return InvalidArgument("TypedFeatureReader: no reader for the features of node type " + type.name);
    }
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
  const int64_t u = unit_bytes_;
  const std::vector<int64_t>& offsets = units_.unit_offsets();
  std::vector<std::vector<ReadRequest>> per_type(readers_.size());
  for (size_t i = 0; i < count; ++i) {
    const ReadRequest& q = requests[i];
    if (q.offset_bytes % u != 0 || q.length_bytes % u != 0 || q.offset_bytes < 0 ||
        q.offset_bytes + q.length_bytes > file_size_bytes()) {
      return InvalidArgument(fmt::format("{}: read of {} bytes at offset {} is not whole cache rows of {} bytes",
                                         description_, q.length_bytes, q.offset_bytes, u));
    }
    int64_t k = q.offset_bytes / u;
    const int64_t end = k + q.length_bytes / u;
    char* dest = static_cast<char*>(q.dest);
    while (k < end) {
      const int64_t t = units_.TypeOfUnit(k);
      const int64_t run = std::min(end, offsets[static_cast<size_t>(t) + 1]) - k;  // units of type t
      const int64_t own = units_.type_row_bytes(t);
      const int64_t per_row = units_.units_per_row(t);
      const int64_t first = k - offsets[static_cast<size_t>(t)];  // unit index within the type
      std::vector<ReadRequest>& out = per_type[static_cast<size_t>(t)];
      if (own == per_row * u) {
        // The type's units tile its file exactly: one request for the run.
        out.push_back(ReadRequest{first * u, run * u, dest});
      } else {
        for (int64_t x = 0; x < run; ++x) {
          const int64_t row = (first + x) / per_row, j = (first + x) % per_row;
          const int64_t lo = j * u, len = std::max<int64_t>(0, std::min(own, lo + u) - lo);
          char* unit = dest + x * u;
          std::memset(unit + len, 0, static_cast<size_t>(u - len));
          if (len > 0) out.push_back(ReadRequest{row * own + lo, len, unit});
        }
      }
      dest += run * u;
      k += run;
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
