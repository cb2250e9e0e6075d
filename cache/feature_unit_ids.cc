#include "cache/feature_unit_ids.h"

#include <memory>

namespace seer {

Result<IdSpan> UnitIdSource::Next() {
  SEER_ASSIGN_OR_RETURN(IdSpan nodes, nodes_.Next());
  if (units_.identity()) return nodes;
  buffer_.clear();
  units_.Expand(nodes.data, nodes.size, &buffer_);
  return IdSpan{buffer_.data(), static_cast<int64_t>(buffer_.size())};
}

Status MakeCacheRowScores(const Dataset& dataset, const FeatureUnits& units, int64_t max_rows, PolicyOptions* options,
                          DegreeScanOptions scan) {
  if (!units.identity()) scan.ranked_ranges = units.NodesWithUnits();  // nodes that own cache rows
  SEER_RETURN_IF_ERROR(MakeBeladyNodeScores(dataset, max_rows, options, scan));
  MapPolicyOptionsToUnits(units, max_rows, options);
  return Status::Ok();
}

void MapPolicyOptionsToUnits(const FeatureUnits& units, int64_t max_units, PolicyOptions* options) {
  if (units.identity()) return;
  if (options->planner.node_scores) {
    // A unit scores as its node. The copy of `units` is a few vectors of T entries.
    auto layout = std::make_shared<const FeatureUnits>(units);
    NodeScoreFn by_node = std::move(options->planner.node_scores);
    options->planner.node_scores = [layout, by_node](const int64_t* ids, int64_t n, uint32_t* scores) {
      std::vector<int64_t> nodes(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) nodes[static_cast<size_t>(k)] = layout->NodeOfUnit(ids[k]);
      by_node(nodes.data(), n, scores);
    };
  }
  if (!options->ranking.empty()) {
    options->ranking = units.ExpandRanking(options->ranking, max_units);
  }
}

}  // namespace seer
