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

// The block rule of cache/belady_planner.h ("Block-granular reads") written literally:
// row v is bytes [v*row_bytes, (v+1)*row_bytes) of features.bin; the blocks a batch
// reads are found byte by byte from its misses; a row is free when every one of its
// bytes is in a block read, it is in neither ids_i nor C_i, and a later batch uses it;
// then the full sort of C_i ∪ ids_i ∪ F_i, free rows keyed (0, next use, 1, v). Free
// rows take free slots after the misses, in ascending id. Also counts distinct blocks
// read per batch (block_reads).
inline OraclePlan BruteForceBeladyBlocks(std::vector<int64_t> slots, const Batches& batches, int64_t row_bytes,
                                         int64_t block_bytes, int64_t num_rows, const ScoreOf& score = {},
                                         std::vector<int64_t>* block_reads = nullptr) {
  const size_t capacity = slots.size();
  OraclePlan out;
  auto next_use = [&](int64_t v, size_t i) -> int64_t {
    for (size_t j = i + 1; j < batches.size(); ++j) {
      if (std::find(batches[j].begin(), batches[j].end(), v) != batches[j].end()) return static_cast<int64_t>(j);
    }
    return -1;
  };
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto& ids = batches[i];
    std::set<int64_t> cached;
    for (int64_t v : slots) {
      if (v != kFreeSlot) cached.insert(v);
    }
    std::vector<int64_t> missed;
    for (int64_t v : ids) {
      if (!cached.count(v)) missed.push_back(v);
    }
    std::set<int64_t> blocks;
    for (int64_t v : missed) {
      for (int64_t byte = v * row_bytes; byte < (v + 1) * row_bytes; ++byte) blocks.insert(byte / block_bytes);
    }
    if (block_reads != nullptr) block_reads->push_back(static_cast<int64_t>(blocks.size()));
    std::set<int64_t> free_rows;
    for (int64_t r = 0; r < num_rows; ++r) {
      if (cached.count(r) || std::find(ids.begin(), ids.end(), r) != ids.end() || next_use(r, i) < 0) continue;
      bool inside = true;
      for (int64_t byte = r * row_bytes; byte < (r + 1) * row_bytes && inside; ++byte) {
        inside = blocks.count(byte / block_bytes) != 0;
      }
      if (inside) free_rows.insert(r);
    }
    std::set<int64_t> candidates = cached;
    candidates.insert(ids.begin(), ids.end());
    candidates.insert(free_rows.begin(), free_rows.end());
    std::vector<std::tuple<int, int64_t, int, int64_t>> keys;
    for (int64_t v : candidates) {
      const int64_t next = next_use(v, i);
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
    cs.num_misses = static_cast<int64_t>(missed.size());
    for (size_t s = 0; s < capacity; ++s) {
      if (slots[s] != kFreeSlot && !kept.count(slots[s])) {
        cs.out_slots.push_back(static_cast<int32_t>(s));
        cs.out_ids.push_back(slots[s]);
        slots[s] = kFreeSlot;
      }
    }
    auto take_slot = [&](int64_t v) -> int32_t {
      const auto free_slot = std::find(slots.begin(), slots.end(), kFreeSlot);
      EXPECT_NE(free_slot, slots.end()) << "oracle: no free slot";
      if (free_slot == slots.end()) return -1;
      *free_slot = v;
      return static_cast<int32_t>(free_slot - slots.begin());
    };
    for (size_t p = 0; p < ids.size(); ++p) {
      if (cached.count(ids[p]) || !kept.count(ids[p])) continue;
      cs.in_ids.push_back(ids[p]);
      cs.in_positions.push_back(static_cast<int32_t>(p));
      cs.in_slots.push_back(take_slot(ids[p]));
    }
    for (int64_t r : free_rows) {  // ascending id
      if (!kept.count(r)) continue;
      cs.block_ids.push_back(r);
      cs.block_slots.push_back(take_slot(r));
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
  if (!c.block_ids.empty()) s += " block:";
  for (size_t k = 0; k < c.block_ids.size(); ++k) {
    s += " " + std::to_string(c.block_ids[k]) + "->" + std::to_string(c.block_slots[k]);
  }
  return s;
}

}  // namespace seer::testing
