// Typed (heterogeneous) datasets read as one graph by the commands that sample, plan and
// train (seer train, predict, sample, stats): node classification on one TARGET node
// type, with every node of every type in one global id space (global id = the type's
// offset in manifest order + its local id, storage/dataset/dataset.h).
//
//   ResolveTarget      which node type's labels and splits a run uses (--target-type, or
//                      the only type with labels);
//   TypedTrainingView  the manifest as the homogeneous parts read it: num_nodes = every
//                      type's nodes, feature_dim = the widest type's, feature_dtype = the
//                      types' common dtype, num_classes = the target's. node_types,
//                      relations and files stay the dataset's, so the view's Identity()
//                      differs from the dataset's: derived files of a run record it;
//   LoadTargetSplit    the target's split in global ids.
//
// Refused with one line: int8 features of different widths across types (an int8 row
// carries its scale and bias after its codes, so it cannot be padded), different feature
// dtypes across types, a target without labels. Pure functions but LoadTargetSplit (reads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

struct TypedTarget {
  int32_t type = -1;   // index into the manifest's node_types
  std::string name;
  int64_t offset = 0;  // global id of its local id 0
  int64_t count = 0;
};

// `requested` "" = the only node type with labels (refused when none or several, naming
// them and the flag --target-type).
Result<TypedTarget> ResolveTarget(const DatasetManifest& m, const std::string& requested);

Result<DatasetManifest> TypedTrainingView(const DatasetManifest& m, const TypedTarget& target);

// The target's split `name` ("train", "valid", "test") in global ids; empty when absent.
// An id outside [0, count) is kCorrupt naming the file and its index.
Result<std::vector<int64_t>> LoadTargetSplit(const Dataset& dataset, const TypedTarget& target,
                                             const std::string& name);

}  // namespace seer
