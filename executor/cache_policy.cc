#include "executor/cache_policy.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>
#include <unordered_map>
#include <utility>

namespace seer {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<IdSpan> SpansOf(const SuperbatchTrace& trace) {
  std::vector<IdSpan> spans;
  spans.reserve(trace.batches.size());
  for (const BatchTrace& b : trace.batches) {
    spans.push_back(IdSpan{b.node_ids.data(), static_cast<int64_t>(b.node_ids.size())});
  }
  return spans;
}

class BeladyPolicy final : public FeatureCachePolicy {
 public:
  explicit BeladyPolicy(FeatureCachePolicyOptions options) : options_(std::move(options)) {}
  int64_t capacity_rows() const override { return options_.capacity_rows; }

  Result<SuperbatchPlan> Plan(const SuperbatchTrace& trace) override {
    const auto start = std::chrono::steady_clock::now();
    SuperbatchPlan plan;
    std::vector<IdSpan> spans = SpansOf(trace);
    if (!started_) {
      state_ = BeladyInitialFill(spans, options_.capacity_rows);
      plan.fill_slots = state_;
      started_ = true;
    }
    BeladyPlannerOptions planner;
    planner.device = options_.planner;
    planner.changeset_budget_bytes = options_.changeset_budget_bytes;
    planner.spill_dir = options_.spill_dir;
    SEER_ASSIGN_OR_RETURN(BeladyPlan belady, PlanBelady(state_, spans, planner));
    state_ = std::move(belady.final_slots);
    plan.changesets = std::make_unique<ChangesetStore>(std::move(belady.changesets));
    plan.planned_misses = belady.num_misses;
    plan.device_used = belady.device_used;
    plan.seconds = SecondsSince(start);
    return plan;
  }

 private:
  FeatureCachePolicyOptions options_;
  bool started_ = false;
  std::vector<int64_t> state_;
};

class StaticPolicy final : public FeatureCachePolicy {
 public:
  explicit StaticPolicy(FeatureCachePolicyOptions options) : options_(std::move(options)) {}
  int64_t capacity_rows() const override { return options_.capacity_rows; }
  Result<SuperbatchPlan> Plan(const SuperbatchTrace&) override {
    SuperbatchPlan plan;
    if (!started_) {
      const auto start = std::chrono::steady_clock::now();
      plan.fill_slots = TopKNodes(options_.node_scores, options_.capacity_rows);
      plan.fill_slots.resize(static_cast<size_t>(options_.capacity_rows), kFreeSlot);
      plan.seconds = SecondsSince(start);
      started_ = true;
    }
    return plan;
  }

 private:
  FeatureCachePolicyOptions options_;
  bool started_ = false;
};

// LRU over batches: after batch i the cache holds the K most recently used nodes of
// C_i ∪ ids_i, recency = (batch, position in the batch). Expressed as changesets so the
// executor's apply path is the same as Belady's: evictions in ascending slot, inserts in
// ascending position into the free slots in ascending order (the planner's slot rule).
class LruPolicy final : public FeatureCachePolicy {
 public:
  explicit LruPolicy(FeatureCachePolicyOptions options)
      : options_(std::move(options)), slots_(EmptyCacheState(options_.capacity_rows)) {}
  int64_t capacity_rows() const override { return options_.capacity_rows; }

  Result<SuperbatchPlan> Plan(const SuperbatchTrace& trace) override {
    const auto start = std::chrono::steady_clock::now();
    SuperbatchPlan plan;
    plan.changesets = std::make_unique<ChangesetStore>(options_.changeset_budget_bytes, options_.spill_dir);
    const int64_t k_rows = options_.capacity_rows;
    int64_t misses_total = 0;
    for (const BatchTrace& batch : trace.batches) {
      ++clock_;
      Changeset cs;
      cs.num_accesses = static_cast<int64_t>(batch.node_ids.size());
      std::vector<std::pair<int64_t, int32_t>> misses;  // (node, position)
      for (size_t p = 0; p < batch.node_ids.size(); ++p) {
        const int64_t v = batch.node_ids[p];
        const Stamp stamp{clock_, static_cast<int64_t>(p)};
        auto it = slot_of_.find(v);
        if (it != slot_of_.end()) {
          order_.erase({stamp_of_[v], v});
        } else {
          misses.emplace_back(v, static_cast<int32_t>(p));
        }
        stamp_of_[v] = stamp;
        order_.insert({stamp, v});
      }
      cs.num_misses = static_cast<int64_t>(misses.size());
      misses_total += cs.num_misses;
      // Drop the least recent until K remain.
      std::vector<std::pair<int32_t, int64_t>> evicted;  // (slot, node)
      while (static_cast<int64_t>(order_.size()) > k_rows) {
        const int64_t v = order_.begin()->node;
        order_.erase(order_.begin());
        stamp_of_.erase(v);
        auto it = slot_of_.find(v);
        if (it != slot_of_.end()) {
          evicted.emplace_back(it->second, v);
          slots_[static_cast<size_t>(it->second)] = kFreeSlot;
          slot_of_.erase(it);
        }
      }
      std::sort(evicted.begin(), evicted.end());
      for (const auto& [slot, v] : evicted) {
        cs.out_slots.push_back(slot);
        cs.out_ids.push_back(v);
      }
      size_t next_free = 0;
      for (const auto& [v, p] : misses) {
        if (!stamp_of_.count(v)) continue;  // evicted within its own batch: never inserted
        while (slots_[next_free] != kFreeSlot) ++next_free;
        slots_[next_free] = v;
        slot_of_[v] = static_cast<int32_t>(next_free);
        cs.in_ids.push_back(v);
        cs.in_positions.push_back(p);
        cs.in_slots.push_back(static_cast<int32_t>(next_free));
      }
      SEER_RETURN_IF_ERROR(plan.changesets->Append(std::move(cs)));
    }
    plan.planned_misses = misses_total;
    plan.seconds = SecondsSince(start);
    return plan;
  }

 private:
  struct Stamp {
    int64_t batch = 0;
    int64_t position = 0;
    bool operator<(const Stamp& o) const {
      return batch != o.batch ? batch < o.batch : position < o.position;
    }
  };
  struct Entry {
    Stamp stamp;
    int64_t node;
    bool operator<(const Entry& o) const {
      if (stamp < o.stamp) return true;
      if (o.stamp < stamp) return false;
      return node < o.node;
    }
  };
  FeatureCachePolicyOptions options_;
  std::vector<int64_t> slots_;
  std::unordered_map<int64_t, int32_t> slot_of_;
  std::unordered_map<int64_t, Stamp> stamp_of_;
  std::set<Entry> order_;
  int64_t clock_ = 0;
};

class NoCachePolicy final : public FeatureCachePolicy {
 public:
  int64_t capacity_rows() const override { return 0; }
  Result<SuperbatchPlan> Plan(const SuperbatchTrace&) override { return SuperbatchPlan{}; }
};

}  // namespace

Result<FeatureCachePolicyKind> ParseFeatureCachePolicy(const std::string& text) {
  if (text == "belady") return FeatureCachePolicyKind::kBelady;
  if (text == "static-degree") return FeatureCachePolicyKind::kStaticDegree;
  if (text == "presc") return FeatureCachePolicyKind::kPresc;
  if (text == "lru") return FeatureCachePolicyKind::kLru;
  if (text == "none") return FeatureCachePolicyKind::kNone;
  return InvalidArgument("unknown feature cache policy '" + text +
                         "' (expected belady, static-degree, presc, lru or none)");
}

const char* FeatureCachePolicyName(FeatureCachePolicyKind kind) {
  switch (kind) {
    case FeatureCachePolicyKind::kBelady: return "belady";
    case FeatureCachePolicyKind::kStaticDegree: return "static-degree";
    case FeatureCachePolicyKind::kPresc: return "presc";
    case FeatureCachePolicyKind::kLru: return "lru";
    case FeatureCachePolicyKind::kNone: return "none";
  }
  return "?";
}

std::vector<int64_t> TopKNodes(const std::vector<int64_t>& scores, int64_t k) {
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  k = std::max<int64_t>(0, std::min<int64_t>(k, static_cast<int64_t>(order.size())));
  auto better = [&](int64_t a, int64_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
  order.resize(static_cast<size_t>(k));
  return order;
}

std::unique_ptr<FeatureCachePolicy> MakeFeatureCachePolicy(FeatureCachePolicyOptions options) {
  if (options.capacity_rows <= 0) return std::make_unique<NoCachePolicy>();
  switch (options.kind) {
    case FeatureCachePolicyKind::kBelady: return std::make_unique<BeladyPolicy>(std::move(options));
    case FeatureCachePolicyKind::kStaticDegree:
    case FeatureCachePolicyKind::kPresc: return std::make_unique<StaticPolicy>(std::move(options));
    case FeatureCachePolicyKind::kLru: return std::make_unique<LruPolicy>(std::move(options));
    case FeatureCachePolicyKind::kNone: return std::make_unique<NoCachePolicy>();
  }
  return std::make_unique<NoCachePolicy>();
}

}  // namespace seer
