// SuperbatchCachePlanner: the executor's per-superbatch view of a feature-cache policy
// (cache/policies.h). The policies themselves — belady, static-degree, presc, lru, none —
// live in cache/; this adapter only carries the cache content (slot -> node) from one
// superbatch to the next and says what to install before the first batch:
//
//   first Plan()   fill_slots = policy.InitialSlots(batches of this superbatch) — the
//                  policy's own initial content (Belady: optimal prefetch; static: top-K;
//                  LRU: first K distinct nodes), loaded as a bulk "fill", counted apart
//                  from misses (docs/design.md "Fair comparison")
//   every Plan()   changesets = policy.Plan(carried slots, batches); the carried slots
//                  then advance by those changesets (Belady's state is carried, not
//                  rebuilt). Static policies (static-degree, presc, none) never change
//                  the content: no changesets, the executor gathers with none.
//
// Plan() is called once per superbatch (or prefetch group, conventional pipeline), in
// execution order, from one thread; it never touches the FeatureCache itself — the
// executor applies the result. Not thread-safe.
//
// MakeSuperbatchCachePlanner is the factory: it builds the run's policy from the
// --feature-cache kind and the feature cache's capacity, including what a static policy
// ranks by — out-degrees read from indices.bin (static-degree) or visit counts over one
// pre-sampling epoch (presc). It blocks for those reads/samples.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/policies.h"
#include "inspector/superbatch_driver.h"
#include "inspector/trace.h"
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/feature_units.h"

namespace seer {

struct SuperbatchPlan {
  // Non-empty on the first superbatch: slot -> node id to install (bulk read) before
  // its first batch; kFreeSlot entries stay empty.
  std::vector<int64_t> fill_slots;
  // One changeset per batch, or null for static policies (nothing changes).
  std::unique_ptr<ChangesetStore> changesets;
  double seconds = 0;
};

class SuperbatchCachePlanner {
 public:
  // policy: from MakeCachePolicy; its capacity is the FeatureCache's capacity.
  // belady: the planner's options (node scores, working memory, runtime dir) for the
  // streaming plan below; other policies ignore them.
  // units: a typed dataset's layout (borrowed; null or identity = ids are the cache's rows):
  // every batch's nodes are planned as their units.
  explicit SuperbatchCachePlanner(std::unique_ptr<CachePolicy> policy, BeladyPlannerOptions belady = {},
                                  const FeatureUnits* units = nullptr);

  Result<SuperbatchPlan> Plan(const SuperbatchTrace& trace);
  // The same plan from a superbatch read batch by batch (a trace file on the runtime
  // directory): Belady on the CPU streams (PlanBeladyStreaming, RAM O(cache rows +
  // working memory), not O(accesses)); the first Plan's initial fill sees only each
  // node's first use (O(capacity)); LRU and the GPU planner read the ids into RAM.
  Result<SuperbatchPlan> Plan(BatchIdSource& batches);

  PolicyKind kind() const { return policy_->kind(); }
  int64_t capacity_rows() const { return policy_->capacity_rows(); }
  // The content after the last planned superbatch (slot -> node, kFreeSlot).
  const std::vector<int64_t>& slots() const { return slots_; }

 private:
  std::unique_ptr<CachePolicy> policy_;
  Result<SuperbatchPlan> PlanCacheRows(BatchIdSource& batches);
  BeladyPlannerOptions belady_;
  const FeatureUnits* units_ = nullptr;
  bool started_ = false;
  std::vector<int64_t> slots_;
};

struct CachePolicySpec {
  PolicyKind kind = PolicyKind::kBelady;
  int64_t capacity_rows = 0;             // the feature cache's rows (kNone plans for 0)
  PlannerDevice planner = PlannerDevice::kAuto;
  int64_t changeset_budget_bytes = 0;    // RAM for Belady changesets before they spill
  std::string spill_dir;                 // where they spill (and Belady's next-use runs)
  // A typed dataset's cache layout (DataPath::feature_units()); non-identity layouts plan
  // over units (cache/feature_unit_ids.h): capacity_rows is then in units. Borrowed.
  const FeatureUnits* units = nullptr;
  int64_t planner_working_bytes = int64_t{8} << 20;  // Belady's streaming sort buffer (bench/RESULTS.md: 4-64 MiB plan equally fast)
  bool show_progress = false;            // progress line of the out-degree pass (minutes at 10^9 nodes)
  // Block-granular reads (cache/read_blocks.h): belady plans the block rule
  // (cache/belady_planner.h, always on the CPU); other policies only read blocks.
  int64_t read_block_bytes = 0;
};

// The epoch number the PreSC pre-sampling pass uses; training never reaches it, so its
// batches differ from every training epoch's.
constexpr int64_t kPresamplingEpoch = int64_t{1} << 40;

// RAM a policy keeps per cached feature row beyond the rows and their slot index, which
// the memory split charges with the slot index. Measured as the slope of peak RSS over
// --fcache-budget (`seer train --no-train`, 10M nodes, 16 B rows, 2M vs 8M rows):
// belady 110 B/row (the planner's bucketed cache state and its merge runs, the carried
// state, fill changesets, the initial fill's ranking), static-degree 39 B/row (the
// ranking and the fill changeset), lru 35 B/row; presc as static-degree.
// With block reads (`--read-block`) belady plans on the CPU with the block planner
// (cache/belady_block_planner.cc), which keeps every cached row in an ordered set of keys
// (a 32 B key in a 32 B tree node, plus allocator overhead) and a hash map node -> (key,
// slot) (~64 B a node and 8 B of bucket): 160 B more per row, charged on top. (An int8 +
// block run at 430M with 278,588 cached rows peaked 29 MiB over its budget without it.)
inline int64_t PolicyBytesPerCachedRow(PolicyKind kind, bool block_reads = false) {
  switch (kind) {
    case PolicyKind::kNone:
      return 0;
    case PolicyKind::kBelady:
      return block_reads ? 112 + 160 : 112;
    default:
      return 40;
  }
}

// Visit counts per node over every superbatch of one pre-sampling epoch of `sampler`
// (PreSC's score), accumulated superbatch by superbatch.
Result<std::vector<int64_t>> CountPresamplingVisits(SuperbatchSampler& sampler, int64_t num_nodes);

// The run's policy behind the per-superbatch adapter. `sampler` is the training sampler
// (presc only; its state is not changed: sampling is a pure function of epoch and index).
Result<SuperbatchCachePlanner> MakeSuperbatchCachePlanner(const CachePolicySpec& spec, const Dataset& dataset,
                                                          SuperbatchSampler& sampler);

}  // namespace seer
