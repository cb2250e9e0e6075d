// The feature cache's id space on a typed dataset planned by bytes (storage/dataset/
// feature_units.h): every policy, the Belady planner and the hit simulator see the units
// of each batch's nodes instead of the nodes, through these two adapters:
//
//   UnitIdSource            a BatchIdSource whose batches are the units of another source's
//                           batches (FeatureUnits::Expand; identity layouts pass through);
//   MapPolicyOptionsToUnits the node-keyed parts of PolicyOptions made unit-keyed: the tie
//                           rule's scores (a unit scores as its node) and the ranking of
//                           static policies and of Belady's fill (a node's units in its
//                           place, cut at the capacity).
//
// Both borrow the FeatureUnits, which must outlive them. Not thread-safe (one planner).
#pragma once

#include <vector>

#include "cache/degrees.h"
#include "cache/planner_input.h"
#include "cache/policies.h"
#include "storage/dataset/feature_units.h"

namespace seer {

class UnitIdSource : public BatchIdSource {
 public:
  UnitIdSource(BatchIdSource& nodes, const FeatureUnits& units) : nodes_(nodes), units_(units) {}
  int64_t num_batches() const override { return nodes_.num_batches(); }
  Status Rewind() override { return nodes_.Rewind(); }
  Result<IdSpan> Next() override;

 private:
  BatchIdSource& nodes_;
  const FeatureUnits& units_;
  std::vector<int64_t> buffer_;
};

// MakeBeladyNodeScores (cache/degrees.h) for the cache's rows: out-degree scores and a
// ranking of the nodes that own cache rows (scan.ranked_ranges set from `units`), then
// MapPolicyOptionsToUnits. Identity layouts: MakeBeladyNodeScores itself.
Status MakeCacheRowScores(const Dataset& dataset, const FeatureUnits& units, int64_t max_rows, PolicyOptions* options,
                          DegreeScanOptions scan = {});

// options->node_scores and options->ranking, from node-keyed to unit-keyed (the ranking cut
// at max_units: the largest capacity it serves). No-op for identity layouts.
void MapPolicyOptionsToUnits(const FeatureUnits& units, int64_t max_units, PolicyOptions* options);

}  // namespace seer
