// The two-level (device over host) feature-cache plan against two independent oracles:
//  * a brute-force two-level Belady that applies the rule of cache/belady_planner.h
//    literally (forward scans for next use, a full sort of C_i ∪ ids_i per iteration) to
//    the device tier on ids_i, derives the device misses D_i from its own state, and then
//    applies the same rule to the host tier on D_i — every changeset of both tiers must
//    be equal;
//  * an exhaustive search (dynamic programming over every cache content, bypass allowed)
//    that gives the fewest misses any plan can have: the device tier must reach it on
//    ids_i, and the host tier on the device's miss stream.
// Plus previous-batch reuse (FastGL Match) against its definition, and the simulator's
// accounting against the single-tier simulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cache/device_tier.h"
#include "cache/hit_simulator.h"
#include "cache/policies.h"

namespace seer {
namespace {

using Batches = std::vector<std::vector<int64_t>>;

struct OracleTier {
  std::vector<Changeset> changesets;
  Batches misses;  // per batch: the ids not held before the batch, ascending position
  std::vector<int64_t> final_slots;
};

// The rule, literally: C_{i+1} = K smallest of C_i ∪ ids_i under (next use, v ∉ C_i, v).
OracleTier BruteForceTier(std::vector<int64_t> slots, const Batches& batches) {
  const size_t capacity = slots.size();
  OracleTier out;
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto& ids = batches[i];
    std::set<int64_t> cached;
    for (int64_t v : slots) {
      if (v != kFreeSlot) cached.insert(v);
    }
    auto next_use = [&](int64_t v) {
      for (size_t j = i + 1; j < batches.size(); ++j) {
        if (std::find(batches[j].begin(), batches[j].end(), v) != batches[j].end()) return static_cast<int64_t>(j);
      }
      return std::numeric_limits<int64_t>::max();
    };
    std::set<int64_t> candidates = cached;
    candidates.insert(ids.begin(), ids.end());
    std::vector<std::tuple<int64_t, int, int64_t>> keys;
    for (int64_t v : candidates) keys.emplace_back(next_use(v), cached.count(v) ? 0 : 1, v);
    std::sort(keys.begin(), keys.end());
    std::set<int64_t> kept;
    for (size_t k = 0; k < std::min(capacity, keys.size()); ++k) kept.insert(std::get<2>(keys[k]));

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
      const size_t slot = static_cast<size_t>(std::find(slots.begin(), slots.end(), kFreeSlot) - slots.begin());
      cs.in_ids.push_back(ids[p]);
      cs.in_positions.push_back(static_cast<int32_t>(p));
      cs.in_slots.push_back(static_cast<int32_t>(slot));
      slots[slot] = ids[p];
    }
    out.changesets.push_back(cs);
    out.misses.push_back(missed);
  }
  out.final_slots = slots;
  return out;
}

// Fewest misses of any plan over node ids < 16: C_{i+1} ⊆ C_i ∪ ids_i, |C_{i+1}| <= K,
// misses_i = |ids_i \ C_i|. Exhaustive over contents (bit masks).
int64_t OptimalMisses(const std::vector<int64_t>& c0, const Batches& batches) {
  const int capacity = static_cast<int>(c0.size());
  uint32_t start = 0;
  for (int64_t v : c0) {
    if (v != kFreeSlot) start |= 1u << v;
  }
  std::map<uint32_t, int64_t> best = {{start, 0}};
  for (const auto& ids : batches) {
    uint32_t want = 0;
    for (int64_t v : ids) want |= 1u << v;
    std::map<uint32_t, int64_t> next;
    for (const auto& [held, cost] : best) {
      const int64_t c = cost + __builtin_popcount(want & ~held);
      const uint32_t pool = held | want;
      for (uint32_t sub = pool;; sub = (sub - 1) & pool) {  // every subset of the pool
        if (__builtin_popcount(sub) <= capacity) {
          auto it = next.find(sub);
          if (it == next.end() || c < it->second) next[sub] = c;
        }
        if (sub == 0) break;
      }
    }
    best = std::move(next);
  }
  int64_t m = std::numeric_limits<int64_t>::max();
  for (const auto& entry : best) m = std::min(m, entry.second);
  return m;
}

Batches RandomBatches(std::mt19937_64& rng, int num_batches, int max_size, int64_t num_nodes) {
  Batches batches(static_cast<size_t>(num_batches));
  std::uniform_int_distribution<int> size_dist(0, max_size);
  // Skewed ids so that reuse happens: half the draws from the first quarter of the ids.
  std::uniform_int_distribution<int64_t> any(0, num_nodes - 1), hot(0, std::max<int64_t>(0, num_nodes / 4 - 1));
  std::bernoulli_distribution pick_hot(0.5);
  for (auto& b : batches) {
    const int size = size_dist(rng);
    std::set<int64_t> seen;
    for (int t = 0; t < size * 4 && static_cast<int>(seen.size()) < size; ++t) {
      const int64_t v = pick_hot(rng) ? hot(rng) : any(rng);
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  return batches;
}

std::vector<int64_t> RandomState(std::mt19937_64& rng, int64_t capacity, int64_t num_nodes) {
  std::vector<int64_t> nodes(static_cast<size_t>(num_nodes));
  for (int64_t v = 0; v < num_nodes; ++v) nodes[static_cast<size_t>(v)] = v;
  std::shuffle(nodes.begin(), nodes.end(), rng);
  std::vector<int64_t> slots = EmptyCacheState(capacity);
  std::bernoulli_distribution occupied(0.6);
  for (int64_t s = 0; s < capacity && s < num_nodes; ++s) {
    if (occupied(rng)) slots[static_cast<size_t>(s)] = nodes[static_cast<size_t>(s)];
  }
  return slots;
}

void ExpectSameChangesets(const ChangesetStore& got, const std::vector<Changeset>& want, const std::string& label) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << label;
  for (size_t i = 0; i < want.size(); ++i) {
    auto cs = got.Get(static_cast<int64_t>(i));
    ASSERT_TRUE(cs.ok()) << cs.status().ToString();
    EXPECT_TRUE(*cs == want[i]) << label << " batch " << i << ": misses " << cs->num_misses << " vs "
                                << want[i].num_misses << ", in " << cs->in_ids.size() << " vs "
                                << want[i].in_ids.size() << ", out " << cs->out_ids.size() << " vs "
                                << want[i].out_ids.size();
  }
}

TEST(DeviceTierTest, TwoLevelPlanMatchesBruteForceOracle) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  BeladyPlannerOptions options;
  options.device = PlannerDevice::kCpu;
  for (int round = 0; round < 300; ++round) {
    const int64_t num_nodes = 4 + static_cast<int64_t>(rng() % 40);
    const int64_t device_k = static_cast<int64_t>(rng() % 9);
    const int64_t host_k = static_cast<int64_t>(rng() % 17);
    const Batches batches = RandomBatches(rng, 1 + static_cast<int>(rng() % 10), 1 + static_cast<int>(rng() % 10), num_nodes);
    const bool carried = rng() % 2 == 0;
    const std::vector<int64_t> d0 = carried ? RandomState(rng, device_k, num_nodes) : EmptyCacheState(device_k);
    const std::vector<int64_t> h0 = carried ? RandomState(rng, host_k, num_nodes) : EmptyCacheState(host_k);
    const std::string label = "round " + std::to_string(round) + " Kd " + std::to_string(device_k) + " Kh " +
                              std::to_string(host_k) + (carried ? " carried" : " cold");

    const OracleTier device = BruteForceTier(d0, batches);
    const OracleTier host = BruteForceTier(h0, device.misses);
    auto plan = PlanTwoTierBelady(d0, h0, MakeIdSpans(batches), options);
    ASSERT_TRUE(plan.ok()) << label << ": " << plan.status().ToString();
    ExpectSameChangesets(plan->device.changesets, device.changesets, label + " device");
    EXPECT_EQ(plan->misses.ids, device.misses) << label;
    ExpectSameChangesets(plan->host.changesets, host.changesets, label + " host");
    EXPECT_EQ(plan->device.final_slots, device.final_slots) << label;
    EXPECT_EQ(plan->host.final_slots, host.final_slots) << label;
    int64_t host_misses = 0;
    for (const Changeset& cs : host.changesets) host_misses += cs.num_misses;
    EXPECT_EQ(plan->host.num_misses, host_misses) << label;
    if (HasFailure()) return;
  }
}

TEST(DeviceTierTest, BothTiersReachTheExhaustiveOptimum) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  BeladyPlannerOptions options;
  options.device = PlannerDevice::kCpu;
  for (int round = 0; round < 150; ++round) {
    const int64_t num_nodes = 3 + static_cast<int64_t>(rng() % 8);  // <= 10 ids: exhaustive is cheap
    const int64_t device_k = static_cast<int64_t>(rng() % 4);
    const int64_t host_k = static_cast<int64_t>(rng() % 5);
    const Batches batches = RandomBatches(rng, 1 + static_cast<int>(rng() % 7), 1 + static_cast<int>(rng() % 5), num_nodes);
    const std::vector<int64_t> d0 = RandomState(rng, device_k, num_nodes);
    const std::vector<int64_t> h0 = RandomState(rng, host_k, num_nodes);
    auto plan = PlanTwoTierBelady(d0, h0, MakeIdSpans(batches), options);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->device.num_misses, OptimalMisses(d0, batches)) << "round " << round << " device";
    EXPECT_EQ(plan->host.num_misses, OptimalMisses(h0, plan->misses.ids)) << "round " << round << " host";
    if (HasFailure()) return;
  }
}

TEST(DeviceTierTest, PreviousBatchReuseHoldsOnlyThePreviousBatch) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 200; ++round) {
    const int64_t num_nodes = 5 + static_cast<int64_t>(rng() % 30);
    const int64_t k = static_cast<int64_t>(rng() % 12);
    const Batches batches = RandomBatches(rng, 1 + static_cast<int>(rng() % 8), 1 + static_cast<int>(rng() % 10), num_nodes);
    const std::vector<int64_t> c0 = RandomState(rng, k, num_nodes);
    auto store = PlanPreviousBatchReuse(c0, MakeIdSpans(batches));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    // Replays and checks every changeset; then compares the content with the definition.
    auto stream = ReplayDeviceTier(c0, MakeIdSpans(batches), *store);
    ASSERT_TRUE(stream.ok());
    std::set<int64_t> held;
    for (int64_t v : c0) {
      if (v != kFreeSlot) held.insert(v);
    }
    TierState state(c0);
    for (size_t i = 0; i < batches.size(); ++i) {
      const auto& ids = batches[i];
      std::vector<int64_t> hits, misses;
      for (int64_t v : ids) (held.count(v) ? hits : misses).push_back(v);
      EXPECT_EQ(stream->ids[i], misses) << "round " << round << " batch " << i;
      // Definition: hits first, then misses, each in batch order; the first K stay.
      std::set<int64_t> want;
      for (int64_t v : hits) {
        if (static_cast<int64_t>(want.size()) < k) want.insert(v);
      }
      for (int64_t v : misses) {
        if (static_cast<int64_t>(want.size()) < k) want.insert(v);
      }
      state.Apply(*store->Get(static_cast<int64_t>(i)), IdSpan{ids.data(), static_cast<int64_t>(ids.size())});
      std::set<int64_t> got;
      for (int64_t v : state.slots()) {
        if (v != kFreeSlot) got.insert(v);
      }
      ASSERT_EQ(got, want) << "round " << round << " batch " << i;
      held = got;
    }
  }
}

TEST(DeviceTierTest, TierStateRefusesContradictingChangesets) {
  TierState state({4, kFreeSlot, 9});
  const std::vector<int64_t> ids = {7, 4};
  const IdSpan batch{ids.data(), 2};
  Changeset wrong_out;
  wrong_out.out_ids = {9};
  wrong_out.out_slots = {0};
  EXPECT_THROW(state.Apply(wrong_out, batch), std::logic_error);
  Changeset occupied;
  occupied.in_ids = {7};
  occupied.in_positions = {0};
  occupied.in_slots = {2};
  EXPECT_THROW(state.Apply(occupied, batch), std::logic_error);
  Changeset wrong_position;
  wrong_position.in_ids = {7};
  wrong_position.in_positions = {1};
  wrong_position.in_slots = {1};
  EXPECT_THROW(state.Apply(wrong_position, batch), std::logic_error);
  EXPECT_EQ(state.slots(), (std::vector<int64_t>{4, kFreeSlot, 9}));
}

// The simulator's accounting: off is the single-tier simulator; device hits + transfers
// = accesses; host accesses = transfers; Belady transfers the fewest rows.
TEST(DeviceTierTest, SimulationAccountsBothTiers) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t num_nodes = 3001;
  std::vector<Batches> trace;
  for (int k = 0; k < 3; ++k) trace.push_back(RandomBatches(rng, 6, 120, num_nodes));
  std::vector<std::vector<IdSpan>> superbatches;
  for (const Batches& b : trace) superbatches.push_back(MakeIdSpans(b));
  TwoTierOptions options;
  options.sim.num_nodes = num_nodes;
  options.sim.row_bytes = 94;  // disk rows (float16 x 47)
  options.sim.block_bytes = 512;
  options.transfer_row_bytes = 188;
  options.planner.device = PlannerDevice::kCpu;
  std::vector<IdSpan> all;
  for (const auto& sb : superbatches) all.insert(all.end(), sb.begin(), sb.end());
  const std::vector<int64_t> ranking = RankNodesByScore(CountVisits(all, num_nodes), num_nodes);
  const int64_t host_rows = 150;

  PolicyOptions single;
  single.capacity_rows = host_rows;
  single.planner.device = PlannerDevice::kCpu;
  auto belady = MakeCachePolicy(PolicyKind::kBelady, single);
  ASSERT_TRUE(belady.ok());
  auto one_tier = SimulatePolicy(**belady, superbatches, options.sim);
  ASSERT_TRUE(one_tier.ok());

  for (int64_t device_rows : {int64_t{0}, int64_t{60}, int64_t{200}}) {
    std::map<std::string, TwoTierStats> by_policy;
    for (DeviceTierPolicy policy : AllDeviceTierPolicies()) {
      auto s = SimulateTwoTier(policy, device_rows, host_rows, ranking, superbatches, options);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ(s->device_hits + s->h2d_rows, s->accesses);
      EXPECT_EQ(s->h2d_bytes, s->h2d_rows * 188);
      EXPECT_EQ(s->accesses, one_tier->accesses);
      EXPECT_LE(s->host_misses, s->h2d_rows);
      by_policy[s->device_policy] = *s;
    }
    const TwoTierStats& off = by_policy["off"];
    EXPECT_EQ(off.h2d_rows, off.accesses);
    EXPECT_EQ(off.host_misses, one_tier->misses);
    EXPECT_EQ(off.ssd_bytes, one_tier->bytes_read);
    EXPECT_EQ(off.ssd_fill_bytes, one_tier->fill_bytes);
    // Over the whole trace as one superbatch (optimal prefetch + Belady) no device policy
    // transfers fewer rows.
    std::map<std::string, int64_t> whole_h2d;
    for (DeviceTierPolicy policy : AllDeviceTierPolicies()) {
      auto s = SimulateTwoTier(policy, device_rows, host_rows, ranking, {all}, options);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      whole_h2d[s->device_policy] = s->h2d_rows;
    }
    for (const char* other : {"off", "previous-batch", "presc"}) {
      EXPECT_LE(whole_h2d["belady"], whole_h2d[other]) << other << " at " << device_rows;
    }
    if (device_rows == 0) {
      for (const auto& [name, s] : by_policy) EXPECT_EQ(s.h2d_rows, s.accesses) << name;
    }
  }
}

}  // namespace
}  // namespace seer
