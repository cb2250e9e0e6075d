#include "executor/cache_policy.h"

#include <chrono>
#include <utility>

#include "cache/degrees.h"

namespace seer {
namespace {

bool ChangesContent(PolicyKind kind) { return kind == PolicyKind::kBelady || kind == PolicyKind::kLru; }

}  // namespace

SuperbatchCachePlanner::SuperbatchCachePlanner(std::unique_ptr<CachePolicy> policy)
    : policy_(std::move(policy)), slots_(EmptyCacheState(policy_->capacity_rows())) {}

Result<SuperbatchPlan> SuperbatchCachePlanner::Plan(const SuperbatchTrace& trace) {
  const auto start = std::chrono::steady_clock::now();
  SuperbatchPlan plan;
  std::vector<IdSpan> spans;
  spans.reserve(trace.batches.size());
  for (const BatchTrace& b : trace.batches) {
    spans.push_back(IdSpan{b.node_ids.data(), static_cast<int64_t>(b.node_ids.size())});
  }
  if (!started_) {
    started_ = true;
    if (policy_->capacity_rows() > 0) {
      slots_ = policy_->InitialSlots(spans);
      plan.fill_slots = slots_;
    }
  }
  if (ChangesContent(policy_->kind()) && policy_->capacity_rows() > 0) {
    SEER_ASSIGN_OR_RETURN(ChangesetStore store, policy_->Plan(slots_, spans));
    // Advance the carried content: C_{i+1} = C_i - out + in, changeset by changeset.
    for (int64_t i = 0; i < store.size(); ++i) {
      SEER_ASSIGN_OR_RETURN(Changeset cs, store.Get(i));
      for (int32_t slot : cs.out_slots) slots_[static_cast<size_t>(slot)] = kFreeSlot;
      for (size_t k = 0; k < cs.in_ids.size(); ++k) slots_[static_cast<size_t>(cs.in_slots[k])] = cs.in_ids[k];
    }
    plan.changesets = std::make_unique<ChangesetStore>(std::move(store));
  }
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

Result<std::vector<int64_t>> CountPresamplingVisits(SuperbatchSampler& sampler, int64_t num_nodes) {
  // CountVisits per superbatch would cost a node-sized array each time.
  std::vector<int64_t> visits(static_cast<size_t>(num_nodes), 0);
  for (int64_t k = 0; k < sampler.num_superbatches(); ++k) {
    SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, sampler.Sample(kPresamplingEpoch, k));
    for (const BatchTrace& b : trace.batches) {
      for (int64_t v : b.node_ids) ++visits[static_cast<size_t>(v)];
    }
  }
  return visits;
}

Result<SuperbatchCachePlanner> MakeSuperbatchCachePlanner(const CachePolicySpec& spec, const Dataset& dataset,
                                                          SuperbatchSampler& sampler) {
  PolicyOptions options;
  options.capacity_rows = spec.kind == PolicyKind::kNone ? 0 : spec.capacity_rows;
  options.planner.device = spec.planner;
  options.planner.changeset_budget_bytes = spec.changeset_budget_bytes;
  options.planner.spill_dir = spec.spill_dir;
  if (spec.kind == PolicyKind::kStaticDegree && options.capacity_rows > 0) {
    SEER_ASSIGN_OR_RETURN(std::vector<int64_t> degrees, ComputeOutDegrees(dataset));
    options.ranking = RankNodesByScore(degrees, options.capacity_rows);
  } else if (spec.kind == PolicyKind::kPresc && options.capacity_rows > 0) {
    SEER_ASSIGN_OR_RETURN(std::vector<int64_t> visits, CountPresamplingVisits(sampler, dataset.manifest().num_nodes));
    options.ranking = RankNodesByScore(visits, options.capacity_rows);
  }
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<CachePolicy> policy, MakeCachePolicy(spec.kind, std::move(options)));
  return SuperbatchCachePlanner(std::move(policy));
}

}  // namespace seer
