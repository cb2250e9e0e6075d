// The optimal prefetch (docs/design.md "Fair comparison"): the cache state a planner starts a
// superbatch from when it may fill the cache before the first batch — the K nodes whose
// first use comes earliest, completed with a fill ranking (e.g. the tie rule's top-scored
// nodes, cache/degrees.h MakeBeladyNodeScores). Belady's initial fill for the first
// superbatch (cache/policies.h, `seer stats`).
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/planner_input.h"

namespace seer {

// The K nodes whose first use in `batches` comes earliest (ties: lower id), in slots 0..
// in that order. Slots left over (fewer than K distinct nodes in `batches`) take the
// nodes of `fill_ranking` (best first, e.g. by the tie rule's score) not already placed,
// in that order — the rule's "free capacity is filled" applied before the first batch;
// the rest stay free (kFreeSlot).
std::vector<int64_t> BeladyInitialFill(const std::vector<IdSpan>& batches, int64_t capacity_rows,
                                       const std::vector<int64_t>& fill_ranking = {});

}  // namespace seer
