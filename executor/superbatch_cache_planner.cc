#include "executor/superbatch_cache_planner.h"

#include <chrono>
#include <unordered_set>
#include <utility>

#include "cache/degrees.h"
#include "cache/feature_unit_ids.h"

namespace seer {
namespace {

bool ChangesContent(PolicyKind kind) { return kind == PolicyKind::kBelady || kind == PolicyKind::kLru; }

// The ids of every batch of `batches`, copied into RAM (policies that need them all).
struct ReadIds {
  std::vector<std::vector<int64_t>> ids;
  std::vector<IdSpan> spans;
};
Result<ReadIds> ReadAllIds(BatchIdSource& batches) {
  ReadIds out;
  SEER_RETURN_IF_ERROR(batches.Rewind());
  for (int64_t i = 0; i < batches.num_batches(); ++i) {
    SEER_ASSIGN_OR_RETURN(IdSpan span, batches.Next());
    out.ids.emplace_back(span.data, span.data + span.size);
  }
  out.spans = MakeIdSpans(out.ids);
  return out;
}

// Each batch's ids that are used for the first time in the superbatch, in batch order,
// until `capacity` distinct ids are seen: what an initial fill (Belady's first uses,
// LRU's first distinct nodes) depends on, in O(capacity + one batch) RAM.
Result<ReadIds> ReadFirstUses(BatchIdSource& batches, int64_t capacity) {
  ReadIds out;
  std::unordered_set<int64_t> seen;
  SEER_RETURN_IF_ERROR(batches.Rewind());
  for (int64_t i = 0; i < batches.num_batches() && static_cast<int64_t>(seen.size()) < capacity; ++i) {
    SEER_ASSIGN_OR_RETURN(IdSpan span, batches.Next());
    std::vector<int64_t> fresh;
    for (int64_t p = 0; p < span.size; ++p) {
      if (seen.insert(span.data[p]).second) fresh.push_back(span.data[p]);
    }
    out.ids.push_back(std::move(fresh));
  }
  out.spans = MakeIdSpans(out.ids);
  return out;
}

}  // namespace

SuperbatchCachePlanner::SuperbatchCachePlanner(std::unique_ptr<CachePolicy> policy, BeladyPlannerOptions belady,
                                               const FeatureUnits* units)
    : policy_(std::move(policy)),
      belady_(std::move(belady)),
      units_(units != nullptr && !units->identity() ? units : nullptr),
      slots_(EmptyCacheState(policy_->capacity_rows())) {}

Result<SuperbatchPlan> SuperbatchCachePlanner::Plan(const SuperbatchTrace& trace) {
  std::vector<IdSpan> spans;
  spans.reserve(trace.batches.size());
  for (const BatchTrace& b : trace.batches) {
    spans.push_back(IdSpan{b.node_ids.data(), static_cast<int64_t>(b.node_ids.size())});
  }
  VectorBatchIdSource source(std::move(spans));
  return Plan(source);
}

Result<SuperbatchPlan> SuperbatchCachePlanner::Plan(BatchIdSource& batches) {
  if (units_ == nullptr) return PlanCacheRows(batches);
  UnitIdSource units(batches, *units_);
  return PlanCacheRows(units);
}

Result<SuperbatchPlan> SuperbatchCachePlanner::PlanCacheRows(BatchIdSource& batches) {
  const auto start = std::chrono::steady_clock::now();
  SuperbatchPlan plan;
  if (!started_) {
    started_ = true;
    if (policy_->capacity_rows() > 0) {
      SEER_ASSIGN_OR_RETURN(ReadIds first, ReadFirstUses(batches, policy_->capacity_rows()));
      slots_ = policy_->InitialSlots(first.spans);
      plan.fill_slots = slots_;
    }
  }
  // Belady streams on the CPU; the GPU planner (block rule included) needs the
  // superbatch's ids in RAM.
  if (policy_->kind() == PolicyKind::kBelady && policy_->capacity_rows() > 0 &&
      ResolvePlannerDevice(belady_.device) == PlannerDevice::kCpu) {
    SEER_RETURN_IF_ERROR(batches.Rewind());
    SEER_ASSIGN_OR_RETURN(BeladyPlan belady, PlanBeladyStreaming(slots_, batches, belady_));
    slots_ = std::move(belady.final_slots);
    plan.changesets = std::make_unique<ChangesetStore>(std::move(belady.changesets));
  } else if (ChangesContent(policy_->kind()) && policy_->capacity_rows() > 0) {
    SEER_ASSIGN_OR_RETURN(ReadIds all, ReadAllIds(batches));
    const std::vector<IdSpan>& spans = all.spans;
    SEER_ASSIGN_OR_RETURN(ChangesetStore store, policy_->Plan(slots_, spans));
    // Advance the carried content: C_{i+1} = C_i - out + in + block admits, changeset by
    // changeset (the order FeatureCache applies them in).
    for (int64_t i = 0; i < store.size(); ++i) {
      SEER_ASSIGN_OR_RETURN(Changeset cs, store.Get(i));
      for (int32_t slot : cs.out_slots) slots_[static_cast<size_t>(slot)] = kFreeSlot;
      for (size_t k = 0; k < cs.in_ids.size(); ++k) slots_[static_cast<size_t>(cs.in_slots[k])] = cs.in_ids[k];
      for (size_t k = 0; k < cs.block_ids.size(); ++k) {
        slots_[static_cast<size_t>(cs.block_slots[k])] = cs.block_ids[k];
      }
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
    // Batch by batch: a superbatch is never held whole.
    SEER_RETURN_IF_ERROR(sampler.SampleStreaming(kPresamplingEpoch, k, [&visits](BatchTrace&& b) {
      for (int64_t v : b.node_ids) ++visits[static_cast<size_t>(v)];
      return Status::Ok();
    }));
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
  DegreeScanOptions scan;
  scan.show_progress = spec.show_progress;
  const FeatureUnits no_units;  // identity: the cache's rows are the nodes
  const FeatureUnits& units = spec.units != nullptr ? *spec.units : no_units;
  if (spec.kind == PolicyKind::kStaticDegree && options.capacity_rows > 0) {
    // RankNodesByScore(ComputeOutDegrees(dataset), rows), streamed: no int64 per node.
    SEER_RETURN_IF_ERROR(MakeCacheRowScores(dataset, units, options.capacity_rows, &options, scan));
    options.planner.node_scores = NodeScoreFn();
  } else if (spec.kind == PolicyKind::kBelady && options.capacity_rows > 0) {
    // The tie rule's scores and fill ranking, as `seer stats` sets them (same misses).
    SEER_RETURN_IF_ERROR(MakeCacheRowScores(dataset, units, options.capacity_rows, &options, scan));
  } else if (spec.kind == PolicyKind::kPresc && options.capacity_rows > 0) {
    SEER_ASSIGN_OR_RETURN(std::vector<int64_t> visits, CountPresamplingVisits(sampler, dataset.manifest().num_nodes));
    if (!units.identity()) {
      // Nodes without cache rows (featureless types) rank last.
      std::vector<int64_t> keep(visits.size(), 0);
      for (const auto& [lo, hi] : units.NodesWithUnits()) {
        std::copy(visits.begin() + lo, visits.begin() + hi, keep.begin() + lo);
      }
      visits = std::move(keep);
    }
    options.ranking = RankNodesByScore(visits, options.capacity_rows);
    MapPolicyOptionsToUnits(units, options.capacity_rows, &options);
  }
  if (spec.kind == PolicyKind::kBelady && spec.read_block_bytes > 0) {
    const DatasetManifest& m = dataset.manifest();
    options.planner.read_blocks = ReadBlocks{m.feature_row_bytes(), spec.read_block_bytes, m.num_nodes};
  }
  BeladyPlannerOptions belady = options.planner;  // the streaming plan's copy
  belady.working_memory_bytes = spec.planner_working_bytes;
  belady.runtime_dir = spec.spill_dir;
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<CachePolicy> policy, MakeCachePolicy(spec.kind, std::move(options)));
  return SuperbatchCachePlanner(std::move(policy), std::move(belady), spec.units);
}

}  // namespace seer
