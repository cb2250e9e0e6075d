#include "cache/policies.h"

#include <algorithm>
#include <functional>
#include <list>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace seer {

Result<PolicyKind> ParsePolicyKind(const std::string& text) {
  return ParseName(kPolicyKindNames, text, "cache policy");
}

const char* PolicyKindName(PolicyKind kind) { return NameOf(kPolicyKindNames, kind); }

std::vector<PolicyKind> AllPolicyKinds() {
  std::vector<PolicyKind> kinds;
  for (const auto& entry : kPolicyKindNames) kinds.push_back(entry.value);
  return kinds;
}

std::vector<int64_t> RankNodesByScore(const std::vector<int64_t>& score, int64_t limit) {
  std::vector<int64_t> nodes(score.size());
  for (size_t v = 0; v < score.size(); ++v) nodes[v] = static_cast<int64_t>(v);
  limit = std::clamp<int64_t>(limit, 0, static_cast<int64_t>(nodes.size()));
  auto better = [&](int64_t a, int64_t b) {
    return score[static_cast<size_t>(a)] != score[static_cast<size_t>(b)]
               ? score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)]
               : a < b;
  };
  std::partial_sort(nodes.begin(), nodes.begin() + limit, nodes.end(), better);
  nodes.resize(static_cast<size_t>(limit));
  return nodes;
}

std::vector<int64_t> CountVisits(const std::vector<IdSpan>& batches, int64_t num_nodes) {
  std::vector<int64_t> counts(static_cast<size_t>(num_nodes), 0);
  for (const IdSpan& b : batches) {
    for (int64_t p = 0; p < b.size; ++p) {
      if (b.data[p] < 0 || b.data[p] >= num_nodes) {
        throw std::out_of_range(fmt::format("CountVisits: id {} outside [0, {})", b.data[p], num_nodes));
      }
      ++counts[static_cast<size_t>(b.data[p])];
    }
  }
  return counts;
}

NodeScoreFn NodeScoresFromVisitCounts(const std::vector<int64_t>& visit_counts) {
  return NodeScoresFromTable(visit_counts);
}

void SetBeladyNodeScores(const std::vector<int64_t>& scores, int64_t max_capacity_rows,
                         PolicyOptions* options) {
  options->planner.node_scores = NodeScoresFromTable(scores);
  options->ranking = RankNodesByScore(scores, max_capacity_rows);
}

namespace {

// Misses-only changesets for policies whose content never changes.
class StaticPolicy : public CachePolicy {
 public:
  StaticPolicy(PolicyKind kind, int64_t capacity_rows, std::vector<int64_t> ranking)
      : CachePolicy(capacity_rows), kind_(kind), ranking_(std::move(ranking)) {}
  PolicyKind kind() const override { return kind_; }

  std::vector<int64_t> InitialSlots(const std::vector<IdSpan>&) override {
    std::vector<int64_t> slots = EmptyCacheState(capacity_rows_);
    for (int64_t s = 0; s < capacity_rows_ && s < static_cast<int64_t>(ranking_.size()); ++s) {
      slots[static_cast<size_t>(s)] = ranking_[static_cast<size_t>(s)];
    }
    return slots;
  }

  Result<ChangesetStore> Plan(const std::vector<int64_t>& slots,
                              const std::vector<IdSpan>& batches) override {
    std::unordered_set<int64_t> cached;
    for (int64_t v : slots) {
      if (v != kFreeSlot) cached.insert(v);
    }
    ChangesetStore store;
    for (const IdSpan& b : batches) {
      Changeset cs;
      cs.num_accesses = b.size;
      for (int64_t p = 0; p < b.size; ++p) cs.num_misses += cached.count(b.data[p]) ? 0 : 1;
      SEER_RETURN_IF_ERROR(store.Append(std::move(cs)));
    }
    return store;
  }

 private:
  PolicyKind kind_;
  std::vector<int64_t> ranking_;
};

class LruPolicy : public CachePolicy {
 public:
  explicit LruPolicy(int64_t capacity_rows) : CachePolicy(capacity_rows) {}
  PolicyKind kind() const override { return PolicyKind::kLru; }

  std::vector<int64_t> InitialSlots(const std::vector<IdSpan>& upcoming) override {
    std::vector<int64_t> slots = EmptyCacheState(capacity_rows_);
    std::unordered_set<int64_t> seen;
    int64_t filled = 0;
    for (const IdSpan& b : upcoming) {
      for (int64_t p = 0; p < b.size && filled < capacity_rows_; ++p) {
        if (seen.insert(b.data[p]).second) slots[static_cast<size_t>(filled++)] = b.data[p];
      }
    }
    return slots;
  }

  Result<ChangesetStore> Plan(const std::vector<int64_t>& slots,
                              const std::vector<IdSpan>& batches) override {
    // Recency list, most recent at the front; `where` maps node -> (list position, slot).
    struct Where {
      std::list<int64_t>::iterator it;
      int32_t slot;          // -1 while a miss of the current batch waits for a slot
      int32_t position = -1; // that miss's position in the batch
    };
    std::list<int64_t> order;
    std::unordered_map<int64_t, Where> where;
    std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> free_slots;
    // Current content: slots in ascending order count as least recent first (initial
    // fill order = first-seen order); a carried state keeps the recency we recorded.
    std::vector<int64_t> content;
    for (size_t s = 0; s < slots.size(); ++s) {
      if (slots[s] == kFreeSlot) {
        free_slots.push(static_cast<int32_t>(s));
      }
    }
    if (recency_.empty()) {
      for (size_t s = 0; s < slots.size(); ++s) {
        if (slots[s] != kFreeSlot) content.push_back(slots[s]);
      }
    } else {
      content = recency_;  // least recent first
    }
    std::unordered_map<int64_t, int32_t> slot_of;
    for (size_t s = 0; s < slots.size(); ++s) {
      if (slots[s] != kFreeSlot) slot_of[slots[s]] = static_cast<int32_t>(s);
    }
    for (int64_t v : content) {
      auto found = slot_of.find(v);
      if (found == slot_of.end()) continue;
      order.push_front(v);
      where[v] = Where{order.begin(), found->second};
    }

    ChangesetStore store;
    std::vector<char> inserted;
    for (const IdSpan& b : batches) {
      Changeset cs;
      cs.num_accesses = b.size;
      inserted.assign(static_cast<size_t>(b.size), 0);
      // Touch every id in position order; a miss enters (slot decided below).
      for (int64_t p = 0; p < b.size; ++p) {
        const int64_t v = b.data[p];
        auto w = where.find(v);
        if (w != where.end()) {
          order.erase(w->second.it);
          order.push_front(v);
          w->second.it = order.begin();
        } else {
          ++cs.num_misses;
          order.push_front(v);
          where[v] = Where{order.begin(), -1, static_cast<int32_t>(p)};
          inserted[static_cast<size_t>(p)] = 1;
        }
      }
      // Trim to K, least recent first: a trimmed node with a slot is evicted; a trimmed
      // new node is simply not inserted.
      std::vector<std::pair<int32_t, int64_t>> evicted;
      while (static_cast<int64_t>(order.size()) > capacity_rows_) {
        const int64_t v = order.back();
        order.pop_back();
        auto w = where.find(v);
        if (w->second.slot >= 0) {
          evicted.emplace_back(w->second.slot, v);
          free_slots.push(w->second.slot);
        } else {
          inserted[static_cast<size_t>(w->second.position)] = 0;
        }
        where.erase(w);
      }
      std::sort(evicted.begin(), evicted.end());
      for (const auto& [slot, v] : evicted) {
        cs.out_slots.push_back(slot);
        cs.out_ids.push_back(v);
      }
      for (int64_t p = 0; p < b.size; ++p) {
        if (!inserted[static_cast<size_t>(p)]) continue;
        const int32_t slot = free_slots.top();
        free_slots.pop();
        where[b.data[p]].slot = slot;
        cs.in_ids.push_back(b.data[p]);
        cs.in_positions.push_back(static_cast<int32_t>(p));
        cs.in_slots.push_back(slot);
      }
      SEER_RETURN_IF_ERROR(store.Append(std::move(cs)));
    }
    recency_.assign(order.rbegin(), order.rend());
    return store;
  }

 private:
  std::vector<int64_t> recency_;  // carried between Plan calls, least recent first
};

class BeladyPolicy : public CachePolicy {
 public:
  BeladyPolicy(int64_t capacity_rows, BeladyPlannerOptions planner, std::vector<int64_t> fill_ranking)
      : CachePolicy(capacity_rows), planner_(std::move(planner)), fill_ranking_(std::move(fill_ranking)) {}
  PolicyKind kind() const override { return PolicyKind::kBelady; }
  std::vector<int64_t> InitialSlots(const std::vector<IdSpan>& upcoming) override {
    return BeladyInitialFill(upcoming, capacity_rows_, fill_ranking_);
  }
  Result<ChangesetStore> Plan(const std::vector<int64_t>& slots,
                              const std::vector<IdSpan>& batches) override {
    SEER_ASSIGN_OR_RETURN(BeladyPlan plan, PlanBelady(slots, batches, planner_));
    return std::move(plan.changesets);
  }

 private:
  BeladyPlannerOptions planner_;
  std::vector<int64_t> fill_ranking_;
};

}  // namespace

Result<std::unique_ptr<CachePolicy>> MakeCachePolicy(PolicyKind kind, PolicyOptions options) {
  if (options.capacity_rows < 0) {
    return InvalidArgument(fmt::format("negative cache capacity {}", options.capacity_rows));
  }
  switch (kind) {
    case PolicyKind::kBelady:
      return std::unique_ptr<CachePolicy>(new BeladyPolicy(options.capacity_rows, options.planner, std::move(options.ranking)));
    case PolicyKind::kStaticDegree:
    case PolicyKind::kPresc:
      if (options.ranking.empty() && options.capacity_rows > 0) {
        return InvalidArgument(fmt::format("policy {} needs a node ranking", PolicyKindName(kind)));
      }
      return std::unique_ptr<CachePolicy>(
          new StaticPolicy(kind, options.capacity_rows, std::move(options.ranking)));
    case PolicyKind::kLru:
      return std::unique_ptr<CachePolicy>(new LruPolicy(options.capacity_rows));
    case PolicyKind::kNone:
      return std::unique_ptr<CachePolicy>(new StaticPolicy(PolicyKind::kNone, 0, {}));
  }
  return InvalidArgument("unknown policy");
}

}  // namespace seer
