// The Belady rule of cache/belady_planner.h written literally, the oracle of the planner
// tests (tests/cache: the CPU planner and the two-tier plan; tests/kernels: the Thrust
// planner): no sorting of accesses and no sorted cache; next use by scanning forward, a
// full sort of C_i ∪ ids_i under the rule's key per iteration — (0, next use, v ∉ C_i, v)
// for a node used again, (1, -score(v), v ∉ C_i, v) for one that is not — and free slots
// taken in ascending order. Plus the CPU planner's options and DescribeChangeset for
// failure messages.
// Header-only: for test binaries that link seer::cache. Pure functions; no shared state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "cache/belady_planner.h"
#include "cache/changeset_store.h"
#include "cache/planner_input.h"

namespace seer::testing {

using Batches = std::vector<std::vector<int64_t>>;
using ScoreOf = std::function<uint32_t(int64_t)>;  // score(v); null = every score 0

struct OraclePlan {
  std::vector<Changeset> changesets;
  std::vector<int64_t> final_slots;
  int64_t num_misses = 0;
  Batches misses;  // per batch: its ids not cached before it, in batch order
};

inline OraclePlan BruteForceBelady(std::vector<int64_t> slots, const Batches& batches, const ScoreOf& score = {}) {
  const size_t capacity = slots.size();
  OraclePlan out;
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto& ids = batches[i];
    std::set<int64_t> cached;
    for (int64_t v : slots) {
      if (v != kFreeSlot) cached.insert(v);
    }
    std::set<int64_t> candidates = cached;
    candidates.insert(ids.begin(), ids.end());
    std::vector<std::tuple<int, int64_t, int, int64_t>> keys;
    for (int64_t v : candidates) {
      int64_t next = -1;
      for (size_t j = i + 1; j < batches.size() && next < 0; ++j) {
        if (std::find(batches[j].begin(), batches[j].end(), v) != batches[j].end()) next = static_cast<int64_t>(j);
      }
      const int not_cached = cached.count(v) ? 0 : 1;
      if (next >= 0) {
        keys.emplace_back(0, next, not_cached, v);
      } else {
        keys.emplace_back(1, -static_cast<int64_t>(score ? score(v) : 0u), not_cached, v);
      }
    }
    std::sort(keys.begin(), keys.end());
    std::set<int64_t> kept;
    for (size_t k = 0; k < std::min(capacity, keys.size()); ++k) kept.insert(std::get<3>(keys[k]));

    Changeset cs;
    cs.num_accesses = static_cast<int64_t>(ids.size());
    std::vector<int64_t> missed;
    for (int64_t v : ids) {
      if (!cached.count(v)) missed.push_back(v);
    }
    cs.num_misses = static_cast<int64_t>(missed.size());
    for (size_t s = 0; s < capacity; ++s) {
      if (slots[s] != kFreeSlot && !kept.count(slots[s])) {
        cs.out_slots.push_back(static_cast<int32_t>(s));
        cs.out_ids.push_back(slots[s]);
        slots[s] = kFreeSlot;
      }
    }
    for (size_t p = 0; p < ids.size(); ++p) {
      if (cached.count(ids[p]) || !kept.count(ids[p])) continue;
      const auto free_slot = std::find(slots.begin(), slots.end(), kFreeSlot);
      EXPECT_NE(free_slot, slots.end()) << "oracle: no free slot";
      if (free_slot == slots.end()) break;
      *free_slot = ids[p];
      cs.in_ids.push_back(ids[p]);
      cs.in_positions.push_back(static_cast<int32_t>(p));
      cs.in_slots.push_back(static_cast<int32_t>(free_slot - slots.begin()));
    }
    out.num_misses += cs.num_misses;
    out.changesets.push_back(std::move(cs));
    out.misses.push_back(std::move(missed));
  }
  out.final_slots = std::move(slots);
  return out;
}

// The options the oracle is compared against: the CPU planner, no scores.
inline BeladyPlannerOptions CpuPlannerOptions() {
  BeladyPlannerOptions options;
  options.device = PlannerDevice::kCpu;
  return options;
}

// "misses M in: id@position->slot ... out: id@slot ...".
inline std::string DescribeChangeset(const Changeset& c) {
  std::string s = "misses " + std::to_string(c.num_misses) + " in:";
  for (size_t k = 0; k < c.in_ids.size(); ++k) {
    s += " " + std::to_string(c.in_ids[k]) + "@" + std::to_string(c.in_positions[k]) + "->" +
         std::to_string(c.in_slots[k]);
  }
  s += " out:";
  for (size_t k = 0; k < c.out_ids.size(); ++k) {
    s += " " + std::to_string(c.out_ids[k]) + "@" + std::to_string(c.out_slots[k]);
  }
  return s;
}

}  // namespace seer::testing
