// SuperbatchCachePlanner: the executor's per-superbatch view of a feature-cache policy
// (cache/policies.h). The policies themselves — belady, static-degree, presc, lru, none —
// live in cache/; this adapter only carries the cache content (slot -> node) from one
// superbatch to the next and says what to install before the first batch:
//
//   first Plan()   fill_slots = policy.InitialSlots(batches of this superbatch) — the
//                  policy's own initial content (Belady: optimal prefetch; static: top-K;
//                  LRU: first K distinct nodes), loaded as a bulk "fill", counted apart
//                  from misses (DESIGN.md "Fair comparison")
//   every Plan()   changesets = policy.Plan(carried slots, batches); the carried slots
//                  then advance by those changesets (Belady's state is carried, not
//                  rebuilt). Static policies (static-degree, presc, none) never change
//                  the content: no changesets, the executor gathers with none.
//
// Plan() is called once per superbatch (or prefetch group, conventional pipeline), in
// execution order, from one thread; it never touches the FeatureCache itself — the
// executor applies the result. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/policies.h"
#include "inspector/trace.h"
#include "storage/base/status.h"

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
  explicit SuperbatchCachePlanner(std::unique_ptr<CachePolicy> policy);

  Result<SuperbatchPlan> Plan(const SuperbatchTrace& trace);

  PolicyKind kind() const { return policy_->kind(); }
  int64_t capacity_rows() const { return policy_->capacity_rows(); }
  // The content after the last planned superbatch (slot -> node, kFreeSlot).
  const std::vector<int64_t>& slots() const { return slots_; }

 private:
  std::unique_ptr<CachePolicy> policy_;
  bool started_ = false;
  std::vector<int64_t> slots_;
};

}  // namespace seer
