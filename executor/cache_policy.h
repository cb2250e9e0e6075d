// FeatureCachePolicy: decides, per superbatch, what the executor's FeatureCache
// (cache/feature_cache.h) holds — as an initial fill and one Changeset per batch — so
// every policy goes through the same gather/apply path and compares fairly
// (DESIGN.md "Feature cache and policies").
//
//   belady         exact Belady changesets from the planner (cache/belady_planner.h); the
//                  first superbatch starts from BeladyInitialFill (the optimal prefetch),
//                  later ones from the previous plan's final state (carried, not rebuilt)
//   static-degree  top-K nodes by out-degree, installed once, never changed (PaGraph)
//   presc          top-K nodes by visit count over pre-sampled batches (GNNLab PreSC),
//                  installed once
//   lru            classic LRU simulated per batch and expressed as changesets
//   none           capacity 0: every access reads the SSD
//
// Plan() is called once per superbatch, in execution order, from one thread (the
// planner stage); it never touches the cache itself — the executor applies the result.
// This adapter lives in executor/ because cache/ exposes the planner and the cache but
// (at the time of writing) no per-superbatch policy interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "inspector/trace.h"
#include "storage/status.h"

namespace seer {

enum class FeatureCachePolicyKind { kBelady, kStaticDegree, kPresc, kLru, kNone };
Result<FeatureCachePolicyKind> ParseFeatureCachePolicy(const std::string& text);
const char* FeatureCachePolicyName(FeatureCachePolicyKind kind);

struct SuperbatchPlan {
  // Non-empty: slot -> node id to install (bulk read) before the first batch; this is
  // a fill, its reads are reported separately from misses.
  std::vector<int64_t> fill_slots;
  // One changeset per batch, or null for static policies (nothing changes).
  std::unique_ptr<ChangesetStore> changesets;
  int64_t planned_misses = -1;   // misses the policy predicts (-1 = not known)
  double seconds = 0;
  PlannerDevice device_used = PlannerDevice::kCpu;
};

class FeatureCachePolicy {
 public:
  virtual ~FeatureCachePolicy() = default;
  virtual Result<SuperbatchPlan> Plan(const SuperbatchTrace& trace) = 0;
  virtual int64_t capacity_rows() const = 0;
};

struct FeatureCachePolicyOptions {
  FeatureCachePolicyKind kind = FeatureCachePolicyKind::kBelady;
  int64_t capacity_rows = 0;
  PlannerDevice planner = PlannerDevice::kAuto;
  int64_t changeset_budget_bytes = ChangesetStore::kUnlimited;
  std::string spill_dir;
  // static-degree: out-degree per node; presc: visit count per node. Ranked descending,
  // ties by lower id.
  std::vector<int64_t> node_scores;
};

std::unique_ptr<FeatureCachePolicy> MakeFeatureCachePolicy(FeatureCachePolicyOptions options);

// The K highest-scoring nodes (ties: lower id), in rank order.
std::vector<int64_t> TopKNodes(const std::vector<int64_t>& scores, int64_t k);

}  // namespace seer
