#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "cache/belady_block_planner_internal.h"

// The block rule written for clarity over speed: the cache is a std::set of the rule's
// keys, next uses come from one sorted (node, batch) index of the whole superbatch.
namespace seer::belady_internal {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// The rule's key (cache/belady_planner.h): (0, next use, v ∉ C_i, v) or
// (1, -score, v ∉ C_i, v); `order` holds the next use or UINT32_MAX - score.
struct Key {
  int inf = 0;
  int64_t order = 0;
  int not_cached = 0;
  int64_t node = 0;
  bool operator<(const Key& o) const {
    return std::tie(inf, order, not_cached, node) < std::tie(o.inf, o.order, o.not_cached, o.node);
  }
};

class BlockPlanner {
 public:
  BlockPlanner(std::vector<std::vector<int64_t>> batches, const BeladyPlannerOptions& options)
      : batches_(std::move(batches)), options_(options) {
    for (size_t b = 0; b < batches_.size(); ++b) {
      for (int64_t v : batches_[b]) uses_.emplace_back(v, static_cast<int64_t>(b));
    }
    std::sort(uses_.begin(), uses_.end());
  }

  // First batch after i that uses v, or kNever.
  int64_t NextUse(int64_t v, int64_t i) const {
    auto it = std::lower_bound(uses_.begin(), uses_.end(), std::make_pair(v, i + 1));
    return it != uses_.end() && it->first == v ? it->second : kNever;
  }

  uint32_t Score(int64_t v) const {
    if (!options_.node_scores) return 0;
    uint32_t s = 0;
    options_.node_scores(&v, 1, &s);
    return s;
  }

  Key KeyOf(int64_t v, int64_t i, bool cached) const {
    const int64_t next = NextUse(v, i);
    if (next != kNever) return Key{0, next, cached ? 0 : 1, v};
    return Key{1, static_cast<int64_t>(std::numeric_limits<uint32_t>::max() - Score(v)), cached ? 0 : 1, v};
  }

  Result<BeladyPlan> Run(const std::vector<int64_t>& initial_slots) {
    const ReadBlocks& geometry = options_.read_blocks;
    capacity_ = static_cast<int64_t>(initial_slots.size());
    slot_nodes_ = initial_slots;
    for (size_t s = 0; s < slot_nodes_.size(); ++s) {
      const int64_t v = slot_nodes_[s];
      if (v == kFreeSlot) {
        free_slots_.insert(static_cast<int32_t>(s));
      } else {
        const Key key = KeyOf(v, -1, true);
        cache_.insert(key);
        cached_.emplace(v, std::make_pair(key, static_cast<int32_t>(s)));
      }
    }
    BeladyPlan plan;
    plan.changesets = ChangesetStore(options_.changeset_budget_bytes, options_.spill_dir);
    for (size_t b = 0; b < batches_.size(); ++b) {
      const int64_t i = static_cast<int64_t>(b);
      const std::vector<int64_t>& ids = batches_[b];
      std::vector<int64_t> sorted_ids = ids;
      std::sort(sorted_ids.begin(), sorted_ids.end());
      auto dup = std::adjacent_find(sorted_ids.begin(), sorted_ids.end());
      if (dup != sorted_ids.end()) {
        return InvalidArgument(fmt::format("Belady planner: node {} appears twice in batch {}", *dup, i));
      }
      if (!sorted_ids.empty() && (sorted_ids.front() < 0 || sorted_ids.back() >= geometry.num_rows)) {
        const int64_t bad = sorted_ids.front() < 0 ? sorted_ids.front() : sorted_ids.back();
        return InvalidArgument(fmt::format("Belady planner: batch {} holds node {} outside [0, {})", i, bad,
                                           geometry.num_rows));
      }
      Changeset cs;
      cs.num_accesses = static_cast<int64_t>(ids.size());
      // Candidates: the batch's misses (position >= 0) and the free rows of its block
      // reads (position -1); hits get their new key in place.
      struct Candidate {
        Key key;
        int32_t position;
      };
      std::vector<Candidate> candidates;
      std::vector<int64_t> missed;
      for (size_t p = 0; p < ids.size(); ++p) {
        const int64_t v = ids[p];
        auto it = cached_.find(v);
        if (it != cached_.end()) {
          cache_.erase(it->second.first);
          it->second.first = KeyOf(v, i, true);
          cache_.insert(it->second.first);
        } else {
          missed.push_back(v);
          candidates.push_back(Candidate{KeyOf(v, i, false), static_cast<int32_t>(p)});
        }
      }
      cs.num_misses = static_cast<int64_t>(missed.size());
      const std::vector<int64_t> blocks = BlocksOfRows(missed.data(), static_cast<int64_t>(missed.size()), geometry);
      for (int64_t v : RowsInsideBlocks(blocks, geometry)) {
        if (std::binary_search(sorted_ids.begin(), sorted_ids.end(), v) || cached_.count(v) != 0) continue;
        const int64_t next = NextUse(v, i);
        if (next == kNever) continue;  // never used again: not admitted
        candidates.push_back(Candidate{Key{0, next, 1, v}, -1});
      }
      std::sort(candidates.begin(), candidates.end(),
                [](const Candidate& a, const Candidate& c) { return a.key < c.key; });
      // Keep the K smallest keys of C_i ∪ candidates: cut the largest one at a time.
      int64_t excess = static_cast<int64_t>(cache_.size() + candidates.size()) - capacity_;
      size_t kept = candidates.size();
      std::vector<int32_t> evicted;
      while (excess > 0) {
        if (kept > 0 && (cache_.empty() || *cache_.rbegin() < candidates[kept - 1].key)) {
          --kept;
        } else {
          const Key top = *cache_.rbegin();
          cache_.erase(std::prev(cache_.end()));
          auto it = cached_.find(top.node);
          evicted.push_back(it->second.second);
          cached_.erase(it);
        }
        --excess;
      }
      std::sort(evicted.begin(), evicted.end());
      for (int32_t slot : evicted) {
        cs.out_slots.push_back(slot);
        cs.out_ids.push_back(slot_nodes_[static_cast<size_t>(slot)]);
        slot_nodes_[static_cast<size_t>(slot)] = kFreeSlot;
        free_slots_.insert(slot);
      }
      // Misses in ascending position first, then free rows in ascending id, each taking
      // the smallest free slot.
      std::vector<Candidate> admitted(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(kept));
      std::sort(admitted.begin(), admitted.end(), [](const Candidate& a, const Candidate& c) {
        const bool a_free = a.position < 0, c_free = c.position < 0;
        if (a_free != c_free) return c_free;
        return a_free ? a.key.node < c.key.node : a.position < c.position;
      });
      for (const Candidate& c : admitted) {
        const int32_t slot = *free_slots_.begin();
        free_slots_.erase(free_slots_.begin());
        slot_nodes_[static_cast<size_t>(slot)] = c.key.node;
        Key key = c.key;
        key.not_cached = 0;
        cache_.insert(key);
        cached_.emplace(key.node, std::make_pair(key, slot));
        if (c.position >= 0) {
          cs.in_ids.push_back(key.node);
          cs.in_positions.push_back(c.position);
          cs.in_slots.push_back(slot);
        } else {
          cs.block_ids.push_back(key.node);
          cs.block_slots.push_back(slot);
        }
      }
      plan.num_accesses += cs.num_accesses;
      plan.num_misses += cs.num_misses;
      plan.num_block_admits += static_cast<int64_t>(cs.block_ids.size());
      SEER_RETURN_IF_ERROR(plan.changesets.Append(std::move(cs)));
    }
    plan.final_slots = std::move(slot_nodes_);
    plan.device_used = PlannerDevice::kCpu;
    return plan;
  }

 private:
  std::vector<std::vector<int64_t>> batches_;
  const BeladyPlannerOptions& options_;
  std::vector<std::pair<int64_t, int64_t>> uses_;  // (node, batch), sorted
  int64_t capacity_ = 0;
  std::vector<int64_t> slot_nodes_;
  std::set<int32_t> free_slots_;
  std::set<Key> cache_;
  std::unordered_map<int64_t, std::pair<Key, int32_t>> cached_;  // node -> (key, slot)
};

}  // namespace

Result<BeladyPlan> PlanBeladyBlocks(const std::vector<int64_t>& initial_slots, BatchIdSource& source,
                                    const BeladyPlannerOptions& options) {
  if (options.read_blocks.num_rows <= 0) {
    return InvalidArgument("Belady planner: block reads need the number of rows");
  }
  for (int64_t v : initial_slots) {
    if (v != kFreeSlot && (v < 0 || v >= options.read_blocks.num_rows)) {
      return InvalidArgument(fmt::format("Belady planner: the initial cache holds invalid id {}", v));
    }
  }
  SEER_RETURN_IF_ERROR(source.Rewind());
  std::vector<std::vector<int64_t>> batches(static_cast<size_t>(source.num_batches()));
  for (auto& batch : batches) {
    SEER_ASSIGN_OR_RETURN(IdSpan ids, source.Next());
    batch.assign(ids.data, ids.data + ids.size);
  }
  BlockPlanner planner(std::move(batches), options);
  return planner.Run(initial_slots);
}

}  // namespace seer::belady_internal
