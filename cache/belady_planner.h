// BeladyPlanner: exact Belady changesets for one superbatch (docs/design.md "Planner: exact
// Belady changesets", Ginex §3.3-3.4, with a horizon-aware tie rule), on the CPU or on a
// CUDA device, byte-identical.
//
// Input: the cache state C0 (slot -> node id, kFreeSlot = empty; its length is the
// capacity K in rows), carried over from the previous superbatch, ids_0..ids_{S-1}
// (each batch's unique node ids; an id may not repeat inside one batch), and optionally
// a static score per node (options.node_scores; higher = more worth keeping). The rule:
//
//   C_{i+1} = the K smallest elements of C_i ∪ ids_i under the key (lexicographic)
//     next use finite:  (0, next_use_i(v), v ∉ C_i, v)
//     next use = ∞:     (1, -score(v),     v ∉ C_i, v)
//   next_use_i(v) = first j > i with v ∈ ids_j, or ∞ (only this superbatch is known);
//   score(v) = node_scores(v) as uint32, 0 for every node when node_scores is empty
//   (then ∞ rows are ordered "cached first, then lower id": the pre-tie-rule planner).
//
// Why: inside the horizon any order among never-reused rows is optimal, so the misses
// of this superbatch are still Belady-optimal; but at a superbatch boundary every row
// with no further use inside the horizon ties at ∞, and ordering them by id threw the
// hot set away (it lost to a static top-degree cache at small capacities). With a score
// (the default is the out-degree, cache/degrees.h MakeBeladyNodeScores: the chance a
// node is sampled as a neighbor) the rows kept across the boundary are the ones the
// next superbatch most likely reads.
//
// Consequences worth knowing:
//  * When |C_i ∪ ids_i| <= K everything is kept, including nodes never used again:
//    free capacity is filled ("keep the K smallest"), so a cold cache fills on demand.
//    A free slot is "nothing there" and loses to any node.
//  * At the last iteration every key is ∞: the cache keeps the K best-scored rows of
//    C ∪ ids (at equal score a cached row beats a miss — no copy — then the lower id),
//    and the final state is carried into the next superbatch.
//  * misses_i = |ids_i \ C_i|; hits are served from the cache before the changeset of
//    iteration i is applied (the executor gathers, then applies).
//
// Block-granular reads (options.read_blocks enabled, `--read-block B`; geometry in
// cache/read_blocks.h). A miss forces the read of every B-aligned block its row touches;
// the misses of batch i share reads (one read per distinct block); F_i = the rows lying
// wholly inside the blocks batch i reads that are neither in ids_i nor in C_i and have a
// finite next use (a row never used again inside the superbatch is not admitted). Then
//   C_{i+1} = the K smallest elements of C_i ∪ ids_i ∪ F_i under the same key,
// a free row's key being (0, next_use_i(v), 1, v) like a miss's: it is admitted only
// when its next use is sooner than that of the row it would displace (at equal next use
// a cached row stays). This greedy rule is Belady's exchange argument applied per batch;
// it is NOT claimed optimal for block reads (a free row admitted now may evict a row
// whose block would have brought more later) — it is the rule, and the oracle
// (tests/support/belady_oracle.h BruteForceBeladyBlocks) simulates exactly it.
// Changeset: admitted misses in in_ids (as above), admitted free rows in block_ids
// (ascending id) taking the free slots after the misses'. On the CPU in RAM: the
// superbatch's ids are read once from the source (PlanBeladyStreaming too), ~24 B per
// access; on a GPU (kGpu, or kAuto with a device) by the Thrust planner's block rule
// (kernels/belady_gpu.h), byte-identical; block reads need ids below read_blocks.num_rows.
//
// Changeset i (what turns C_i into C_{i+1}; cache/changeset_store.h), all deterministic:
//  * out_slots / out_ids: the evicted nodes and the slots they held, ascending slot.
//  * in_ids / in_positions: the inserted nodes (always misses of iteration i) and their
//    positions in ids_i, ascending position.
//  * in_slots: where each inserted node goes. Slot rule: after the evictions of
//    iteration i, take the free slots (never-filled ones and those just freed) in
//    ascending slot order; the k-th inserted node (in ascending position) gets the k-th
//    smallest free slot.
//
// CPU algorithm (PlanBelady and PlanBeladyStreaming share it; two passes over the batches):
//  1. Next use of every access (cache/next_use_sort_internal.h): records (node, batch+1,
//     position), C0 as batch 0 with position = slot (so C0's first uses come out of the
//     same sort), sorted by an LSD radix sort of 64-bit packed keys; consecutive records
//     of a node link an access to the next one: NextRef = (next batch (int32), position
//     in it). In RAM this costs 16 bytes per access at the peak. PlanBeladyStreaming with
//     a runtime_dir sorts runs of working_memory_bytes / 16 accesses, writes each run with
//     one sequential write, k-way merges them and appends every NextRef (12-byte records)
//     to the file segments of its batch range (ranges of working_memory_bytes / 16
//     accesses).
//  2. Forward pass (cache/belady_planner.cc), one batch at a time: the cache is kept as
//     buckets by next-use batch (cache/belady_cache_state_internal.h; index S = ∞); bucket
//     i is exactly the hits of batch i; evictions pop the highest non-empty bucket (finite
//     buckets are chunk lists of 16..64 entries, flattened into a max-heap on id only when
//     first evicted from; the ∞ bucket is kept as sorted runs on (score, id) — each
//     batch's new rows radix-sorted, runs merged geometrically); misses are grouped by
//     next-use batch only when the cut reaches past the ∞ group, and only a group cut in
//     part is ordered; the evicted slots are radix-sorted. So iteration i costs
//     O(|ids_i| log) amortized — never O(K).
// RAM: PlanBelady O(accesses) (16 B each) + O(K); PlanBeladyStreaming O(K + one batch +
// working_memory_bytes), with changesets spilled by ChangesetStore past its budget.
// Runtime files (next-use runs and segments, changeset spills) are created inside the
// caller's runtime_dir / spill_dir as seer-trace-PID-* (cache/runtime_file.h) and removed
// by their owners.
// The GPU path (kernels/belady_gpu.h, chosen by options.device: cache/planner_device.h)
// keeps the cache as an array sorted by the rule's key and merges each batch's sorted
// candidates into it — O(n log n + K) work per iteration of n accesses — instead of
// re-sorting C_i ∪ ids_i as Ginex does; both obey the rule above exactly.
//
// Thread-safety: PlanBelady and PlanBeladyStreaming are pure functions (the scores
// function is called from the calling thread only); a BatchIdSource is read by one
// planner at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

// The parts of the planner's API that live in their own headers, re-exported here.
#include "cache/belady_initial_fill.h"
#include "cache/belady_plan.h"
#include "cache/changeset_store.h"
#include "cache/node_scores.h"
#include "cache/planner_device.h"
#include "cache/planner_input.h"
#include "storage/base/status.h"

namespace seer {

// Plans one superbatch. initial_slots = C0 (size = capacity K; ids unique, >= 0 or
// kFreeSlot). Errors: kInvalidArgument for a negative id, an id repeated inside a batch
// or inside C0, a capacity or batch size of 2^31 or more; kUnsupported for kGpu on a
// build without CUDA or without a device (kAuto then plans on the CPU); kIoError
// "GPU planner: ..." when the GPU backend fails (device memory, a CUDA error); errors
// of the changeset spill file.
Result<BeladyPlan> PlanBelady(const std::vector<int64_t>& initial_slots,
                              const std::vector<IdSpan>& batches,
                              const BeladyPlannerOptions& options = {});

// The same plan as PlanBelady (byte-identical changesets and final state, CPU rule),
// with RAM O(capacity rows + one batch + working_memory_bytes) instead of O(accesses):
// next uses come from an external sort whose runs spill to options.runtime_dir, and the
// forward pass reads one batch at a time from `source`. Changesets go to the
// ChangesetStore under options.changeset_budget_bytes / spill_dir. Errors as PlanBelady,
// plus source errors and runtime-file I/O errors (named file and offset). Always CPU.
Result<BeladyPlan> PlanBeladyStreaming(const std::vector<int64_t>& initial_slots,
                                       BatchIdSource& source,
                                       const BeladyPlannerOptions& options = {});

}  // namespace seer
