// The two-level (device over host) feature-cache plan against two independent oracles:
//  * a brute-force two-level Belady that applies the rule of cache/belady_planner.h
//    literally (tests/support/belady_oracle.h, without scores) to the device tier on ids_i, derives the device misses D_i from its own state, and then
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
#include "support/belady_oracle.h"
#include "support/random_seed.h"

namespace seer {
namespace {

using testing::Batches;
using testing::BruteForceBelady;
using testing::OraclePlan;

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

// A random two-tier case: num_nodes = min_nodes + rng() % node_span, tier capacities
// rng() % device_span and rng() % host_span, 1 + rng() % max_batches batches of up to
// 1 + rng() % max_size ids; initial states random (carried) or empty (cold).
struct TwoTierCase {
  int64_t num_nodes = 0, device_k = 0, host_k = 0;
  Batches batches;
  std::vector<int64_t> d0, h0;
};

TwoTierCase RandomTwoTierCase(std::mt19937_64& rng, int64_t min_nodes, int64_t node_span, int64_t device_span,
                              int64_t host_span, int max_batches, int max_size, bool carried) {
  TwoTierCase c;
  c.num_nodes = min_nodes + static_cast<int64_t>(rng() % static_cast<uint64_t>(node_span));
  c.device_k = static_cast<int64_t>(rng() % static_cast<uint64_t>(device_span));
  c.host_k = static_cast<int64_t>(rng() % static_cast<uint64_t>(host_span));
  const int num_batches = 1 + static_cast<int>(rng() % static_cast<uint64_t>(max_batches));
  c.batches = RandomBatches(rng, num_batches, 1 + static_cast<int>(rng() % static_cast<uint64_t>(max_size)),
                            c.num_nodes);
  c.d0 = carried ? RandomState(rng, c.device_k, c.num_nodes) : EmptyCacheState(c.device_k);
  c.h0 = carried ? RandomState(rng, c.host_k, c.num_nodes) : EmptyCacheState(c.host_k);
  return c;
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
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  for (int round = 0; round < 300; ++round) {
    const bool carried = rng() % 2 == 0;
    const TwoTierCase c = RandomTwoTierCase(rng, /*min_nodes=*/4, /*node_span=*/40, /*device_span=*/9,
                                            /*host_span=*/17, /*max_batches=*/10, /*max_size=*/10, carried);
    const std::string label = "round " + std::to_string(round) + " Kd " + std::to_string(c.device_k) + " Kh " +
                              std::to_string(c.host_k) + (carried ? " carried" : " cold");

    const OraclePlan device = BruteForceBelady(c.d0, c.batches);
    const OraclePlan host = BruteForceBelady(c.h0, device.misses);
    auto plan = PlanTwoTierBelady(c.d0, c.h0, MakeIdSpans(c.batches), testing::CpuPlannerOptions());
    ASSERT_TRUE(plan.ok()) << label << ": " << plan.status().ToString();
    ExpectSameChangesets(plan->device.changesets, device.changesets, label + " device");
    EXPECT_EQ(plan->misses.ids, device.misses) << label;
    ExpectSameChangesets(plan->host.changesets, host.changesets, label + " host");
    EXPECT_EQ(plan->device.final_slots, device.final_slots) << label;
    EXPECT_EQ(plan->host.final_slots, host.final_slots) << label;
    EXPECT_EQ(plan->host.num_misses, host.num_misses) << label;
    if (HasFailure()) return;
  }
}

TEST(DeviceTierTest, BothTiersReachTheExhaustiveOptimum) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  for (int round = 0; round < 150; ++round) {
    // At most 10 ids: the exhaustive search is cheap.
    const TwoTierCase c = RandomTwoTierCase(rng, /*min_nodes=*/3, /*node_span=*/8, /*device_span=*/4,
                                            /*host_span=*/5, /*max_batches=*/7, /*max_size=*/5, /*carried=*/true);
    auto plan = PlanTwoTierBelady(c.d0, c.h0, MakeIdSpans(c.batches), testing::CpuPlannerOptions());
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->device.num_misses, OptimalMisses(c.d0, c.batches)) << "round " << round << " device";
    EXPECT_EQ(plan->host.num_misses, OptimalMisses(c.h0, plan->misses.ids)) << "round " << round << " host";
    if (HasFailure()) return;
  }
}

TEST(DeviceTierTest, PreviousBatchReuseHoldsOnlyThePreviousBatch) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
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
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
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
