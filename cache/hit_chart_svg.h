// RenderHitRatioSvg: a standalone SVG line chart of replay results (ReplayGrid,
// cache/replay_grid.h; `seer stats --svg`): hit ratio (0..1) against cache capacity
// (rows, labelled as % of the nodes), one polyline per policy in the order the policies
// first appear in `rows`, axes with ticks and a legend. A policy with one result (none)
// is drawn across the chart. Pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/hit_simulator.h"

namespace seer {

// capacities: the x ticks (rows; any order). The whole document, ending in "</svg>\n".
std::string RenderHitRatioSvg(std::vector<PolicyStats> rows, std::vector<int64_t> capacities,
                              int64_t num_nodes, const std::string& title);

}  // namespace seer
