// LabelTable: the labels (labels.bin, int32 per node, -1 = unlabeled) of a chosen set of
// nodes, loaded by streaming labels.bin in chunks — never the whole array, which is
// 4 B x num_nodes. Load blocks on reads; the table is immutable afterwards, so Get() may
// be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

class LabelTable {
 public:
  LabelTable() = default;
  // The labels of `nodes` (duplicates allowed). An id outside [0, num_nodes) is an
  // InvalidArgument error naming it (ids come from split files and user lists); a label
  // outside [-1, num_classes) is kCorrupt naming labels.bin, the node and the offset.
  static Result<LabelTable> Load(const Dataset& dataset, std::vector<int64_t> nodes);
  // The same from a labels file that holds the labels of ids [first_id, first_id + count)
  // (a typed dataset's node type: first_id = its global offset); ids outside are refused.
  static Result<LabelTable> LoadFile(const std::string& path, int64_t first_id, int64_t count, int64_t num_classes,
                                     std::vector<int64_t> nodes);
  // The labels of the union of several node sets (train, valid, test).
  static Result<LabelTable> LoadAll(const Dataset& dataset, const std::vector<const std::vector<int64_t>*>& sets);

  // The label of `node`; -1 when it is unlabeled or was not loaded.
  int32_t Get(int64_t node) const;
  // Adds `other`'s nodes (a node in both keeps this table's label).
  void Merge(const LabelTable& other);
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }

 private:
  std::vector<int64_t> ids_;     // sorted, distinct
  std::vector<int32_t> labels_;  // parallel to ids_
};

}  // namespace seer
