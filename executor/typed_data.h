// Typed (heterogeneous) datasets in the training and prediction data path (the target
// and the training view: storage/dataset/typed_target.h):
//
//   TypedFeatureReader  a BlockReader over a virtual features file of the global id space:
//                       row g at byte g x row_bytes (the view's row size); a type with fewer
//                       columns reads its own row and zero-pads it, a featureless type's rows
//                       are zeros (no I/O). So the feature cache, the Belady planner and the
//                       gather plan and cache over (type, row) pairs as global ids: one cache
//                       across types, rows of one size (the widest type's);
//   LoadTargetLabels    the target's labels, by global id.
//
// The data path (executor/data_path.h) refuses on typed datasets, with one line: link
// prediction and block reads (--read-block).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "executor/label_table.h"
#include "inspector/typed_topology.h"  // NodeTypeOffsets
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/typed_target.h"
#include "storage/io/block_reader.h"

namespace seer {

// The labels of the union of `sets` (global ids of the target type; others are refused).
Result<LabelTable> LoadTargetLabels(const Dataset& dataset, const TypedTarget& target,
                                    const std::vector<const std::vector<int64_t>*>& sets);

class TypedFeatureReader final : public BlockReader {
 public:
  // readers[t]: the type's features file (null for a featureless type), in manifest order.
  // row_bytes: the view's row size (>= every type's). Fails when a reader is missing for a
  // featured type.
  static Result<std::unique_ptr<TypedFeatureReader>> Create(const Dataset& dataset,
                                                            std::vector<std::unique_ptr<BlockReader>> readers,
                                                            int64_t row_bytes);
  // Requests must cover whole rows (offset and length multiples of row_bytes); each row is
  // read from its type's file (consecutive rows of one full-width type in one request).
  Status ReadBatch(const ReadRequest* requests, size_t count, ReadStats* stats) override;
  using BlockReader::ReadBatch;
  const std::string& path() const override { return description_; }
  int64_t file_size_bytes() const override { return offsets_.back() * row_bytes_; }
  int64_t alignment_bytes() const override { return alignment_; }
  IoMode mode() const override { return mode_; }
  bool direct() const override { return direct_; }

 private:
  TypedFeatureReader() = default;
  std::vector<int64_t> offsets_;             // T + 1
  std::vector<int64_t> type_row_bytes_;      // 0 = featureless
  std::vector<std::unique_ptr<BlockReader>> readers_;
  int64_t row_bytes_ = 0;
  int64_t alignment_ = 512;
  IoMode mode_ = IoMode::kPread;
  bool direct_ = false;
  std::string description_;
};

}  // namespace seer
