// Typed (heterogeneous) datasets in the training and prediction data path (the target
// and the training view: storage/dataset/typed_target.h):
//
//   TypedFeatureReader  a BlockReader over the virtual features file of a FeatureUnits layout
//                       (storage/dataset/feature_units.h): cache row k at byte k x U. Padded:
//                       k = the global node id, U = the widest row, narrower rows zero-padded,
//                       featureless rows zeros (no I/O). By bytes: k = a unit of U bytes of
//                       one node's row (the bytes past the row's end zeros), featureless nodes
//                       own no unit. So the feature cache, the Belady planner and the gather
//                       plan and cache one id space across types either way;
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
#include "storage/dataset/feature_units.h"
#include "storage/dataset/typed_target.h"
#include "storage/io/block_reader.h"

namespace seer {

// The labels of the union of `sets` (global ids of the target type; others are refused).
Result<LabelTable> LoadTargetLabels(const Dataset& dataset, const TypedTarget& target,
                                    const std::vector<const std::vector<int64_t>*>& sets);

class TypedFeatureReader final : public BlockReader {
 public:
  // readers[t]: the type's features file (null for a featureless type), in manifest order.
  // units: the layout (copied). Fails when a reader is missing for a featured type or the
  // layout does not match the manifest's rows.
  static Result<std::unique_ptr<TypedFeatureReader>> Create(const Dataset& dataset,
                                                            std::vector<std::unique_ptr<BlockReader>> readers,
                                                            const FeatureUnits& units);
  // Requests must cover whole cache rows (offset and length multiples of U); each is read
  // from its type's file (consecutive units of a type whose rows they tile: one request).
  Status ReadBatch(const ReadRequest* requests, size_t count, ReadStats* stats) override;
  using BlockReader::ReadBatch;
  const std::string& path() const override { return description_; }
  int64_t file_size_bytes() const override { return units_.num_units() * unit_bytes_; }
  int64_t alignment_bytes() const override { return alignment_; }
  IoMode mode() const override { return mode_; }
  bool direct() const override { return direct_; }

 private:
  TypedFeatureReader() = default;
  FeatureUnits units_;
  std::vector<std::unique_ptr<BlockReader>> readers_;
  int64_t unit_bytes_ = 0;
  int64_t alignment_ = 512;
  IoMode mode_ = IoMode::kPread;
  bool direct_ = false;
  std::string description_;
};

}  // namespace seer
