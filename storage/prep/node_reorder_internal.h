// Internal to storage/prep's node reordering (storage/prep/node_reorder.h): the bounded-
// memory pass (storage/prep/node_reorder_external.cc) and what it shares with the
// in-memory one.
#pragma once

#include <string>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/prep/node_reorder.h"

namespace seer::reorder_internal {

// The output's manifest: the input's, with node_order.bin and the composed method.
DatasetManifest ReorderedManifest(const DatasetManifest& m, const ReorderOptions& options);

// ReorderDataset with options.memory_budget_bytes > 0: the same files, byte for byte,
// with external sorts and streamed passes instead of per-node tables
// (node_reorder_external.cc's header comment says what each step holds).
Result<ReorderSummary> ReorderDatasetExternal(const Dataset& dataset, const std::string& out_dir,
                                              const ReorderOptions& options);

}  // namespace seer::reorder_internal
