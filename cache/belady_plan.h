// The Belady planner's options and its result (a plan: one changeset per batch and the
// final cache state), apart from the entry points (cache/belady_planner.h) so that the
// planner's parts (the GPU adapter, cache/belady_gpu_plan_internal.h) can name them
// without including the planner. Plain data; move-only through ChangesetStore.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/changeset_store.h"
#include "cache/node_scores.h"
#include "cache/planner_device.h"
#include "cache/read_blocks.h"

namespace seer {

// The CPU planner's RAM per access when a superbatch's accesses fit in memory (the
// in-RAM next-use path, ~24 B each): a larger sort buffer is never used, so the memory
// split caps Belady's working memory at this times the superbatch's accesses.
inline constexpr int64_t kBeladyInRamBytesPerAccess = 24;

struct BeladyPlannerOptions {
  PlannerDevice device = PlannerDevice::kAuto;
  int64_t changeset_budget_bytes = ChangesetStore::kUnlimited;
  std::string spill_dir;  // "" = never spill
  // Fills scores[k] = score(ids[k]) for k < n; empty = every score 0 (the old rule).
  NodeScoreFn node_scores;
  // PlanBeladyStreaming: the sort buffer budget for the next-use computation. When all
  // accesses fit, the in-RAM path is used (same output).
  int64_t working_memory_bytes = int64_t{256} << 20;
  // PlanBeladyStreaming: where sorted runs and next-use files spill ("" = keep in RAM).
  std::string runtime_dir;
  // Block-granular reads (cache/read_blocks.h, the rule in cache/belady_planner.h):
  // enabled = the rows of each batch's forced block reads are admission candidates.
  // Always planned on the CPU (the GPU path does not implement it), in RAM.
  ReadBlocks read_blocks;
};

struct BeladyPlan {
  ChangesetStore changesets;        // one per batch
  std::vector<int64_t> final_slots; // C_S: slot -> node id, carry into the next superbatch
  int64_t num_accesses = 0;
  int64_t num_misses = 0;
  int64_t num_block_admits = 0;  // rows admitted from block reads (block_ids), all batches
  PlannerDevice device_used = PlannerDevice::kCpu;
};

}  // namespace seer
