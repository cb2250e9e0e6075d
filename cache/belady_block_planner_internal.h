// The Belady planner with block-granular reads (the rule: cache/belady_planner.h
// "Block-granular reads"), used by PlanBelady / PlanBeladyStreaming when
// options.read_blocks is enabled. Internal to cache/.
#pragma once

#include <vector>

#include "cache/belady_plan.h"
#include "cache/planner_input.h"
#include "storage/base/status.h"

namespace seer::belady_internal {

// Reads every batch of `source` into RAM (O(accesses) RAM: 8 B per access for the ids,
// 16 B per access for the next-use index), then walks the batches with the cache kept as
// an ordered set of keys. O((|ids_i| + free rows_i) log K) per batch.
Result<BeladyPlan> PlanBeladyBlocks(const std::vector<int64_t>& initial_slots, BatchIdSource& source,
                                    const BeladyPlannerOptions& options);

}  // namespace seer::belady_internal
