// The executor's feature-cache policies (executor/superbatch_cache_planner.h): the LRU adapter's
// changesets against a brute-force LRU, applied to a real FeatureCache; the static
// policies' one-time top-K fill.
#include "executor/superbatch_cache_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "cache/feature_cache.h"
#include "kernels/device.h"

namespace seer {
namespace {

// Brute-force LRU over whole batches: the K most recent of C ∪ ids, recency = (batch,
// position in the batch) — cache/policies.h's definition.
std::set<int64_t> BruteLru(std::map<int64_t, std::pair<int64_t, int64_t>>& last_use,
                           const std::vector<int64_t>& ids, int64_t batch, int64_t k) {
  for (size_t p = 0; p < ids.size(); ++p) last_use[ids[p]] = {batch, static_cast<int64_t>(p)};
  std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> order;
  for (auto& [v, t] : last_use) order.push_back({t, v});
  std::sort(order.rbegin(), order.rend());
  std::set<int64_t> keep;
  for (int64_t i = 0; i < std::min<int64_t>(k, static_cast<int64_t>(order.size())); ++i) keep.insert(order[i].second);
  for (auto it = last_use.begin(); it != last_use.end();) it = keep.count(it->first) ? std::next(it) : last_use.erase(it);
  return keep;
}

// The executor's adapter over cache/policies.h's LRU: the first superbatch installs the
// first K distinct nodes (fill), then the carried state and the changesets follow a
// brute-force LRU across superbatches and apply cleanly to a FeatureCache.
TEST(CachePolicyTest, LruChangesetsMatchBruteForceAndApplyCleanly) {
  const uint64_t seed = 20240611;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int64_t capacity : {1, 7, 40}) {
    PolicyOptions po;
    po.capacity_rows = capacity;
    auto made = MakeCachePolicy(PolicyKind::kLru, po);
    ASSERT_TRUE(made.ok());
    SuperbatchCachePlanner policy(std::move(made).value());
    FeatureCacheOptions co;
    co.num_nodes = 100;
    co.capacity_rows = capacity;
    co.row_bytes = 0;
    auto cache = FeatureCache::Create(co);
    ASSERT_TRUE(cache.ok());
    std::map<int64_t, std::pair<int64_t, int64_t>> last_use;
    int64_t batch_no = 0;
    for (int sb = 0; sb < 3; ++sb) {
      SuperbatchTrace trace;
      for (int b = 0; b < 5; ++b) {
        BatchTrace bt;
        std::set<int64_t> seen;
        const int n = static_cast<int>(rng() % 25);  // includes empty batches
        while (static_cast<int>(seen.size()) < n) {
          const int64_t v = static_cast<int64_t>(rng() % 100);
          if (seen.insert(v).second) bt.node_ids.push_back(v);
        }
        trace.batches.push_back(bt);
      }
      auto plan = policy.Plan(trace);
      ASSERT_TRUE(plan.ok());
      ASSERT_TRUE(plan->changesets);
      if (sb == 0) {
        // Initial fill: the first K distinct nodes of the superbatch, first-seen = least recent.
        std::vector<int64_t> expected_fill;
        for (const BatchTrace& bt : trace.batches) {
          for (int64_t v : bt.node_ids) {
            if (static_cast<int64_t>(expected_fill.size()) < capacity &&
                std::find(expected_fill.begin(), expected_fill.end(), v) == expected_fill.end()) {
              expected_fill.push_back(v);
            }
          }
        }
        expected_fill.resize(static_cast<size_t>(capacity), kFreeSlot);
        ASSERT_EQ(plan->fill_slots, expected_fill);
        for (size_t s = 0; s < expected_fill.size(); ++s) {
          if (expected_fill[s] == kFreeSlot) continue;
          cache->Install(static_cast<int32_t>(s), expected_fill[s], nullptr);
          last_use[expected_fill[s]] = {0, static_cast<int64_t>(s)};
        }
      } else {
        EXPECT_TRUE(plan->fill_slots.empty());
      }
      for (size_t i = 0; i < trace.batches.size(); ++i) {
        const auto& ids = trace.batches[i].node_ids;
        auto cs = plan->changesets->Get(static_cast<int64_t>(i));
        ASSERT_TRUE(cs.ok());
        int64_t misses = 0;
        for (int64_t v : ids) misses += cache->SlotOf(v) < 0;
        EXPECT_EQ(cs->num_misses, misses);
        ASSERT_NO_THROW(cache->Apply(*cs, ids.data(), static_cast<int64_t>(ids.size()), nullptr));
        const std::set<int64_t> expected = BruteLru(last_use, ids, ++batch_no, capacity);
        std::set<int64_t> actual;
        for (int64_t v : cache->SlotContents()) if (v != kFreeSlot) actual.insert(v);
        EXPECT_EQ(actual, expected) << "capacity " << capacity << " batch " << batch_no;
      }
      // The adapter's carried state is the cache's content.
      EXPECT_EQ(policy.slots(), cache->SlotContents());
    }
  }
}

// Block-granular Belady (--read-block) across superbatches: its changesets admit a read
// block's free rows besides the misses, and the carried content must include them. The
// CPU streams it; `--planner gpu` (or `auto` on a CUDA machine) plans it with the Thrust
// planner's block rule in RAM, whose carried content once lacked the admits, so the next
// superbatch's plan admitted rows into occupied slots ("bad changeset" in the gather).
// Every device gives the CPU's changesets; kGpu without a device is kUnsupported.
TEST(CachePolicyTest, BlockBeladyCarriesAdmittedRowsOnEveryPlannerDevice) {
  const uint64_t seed = 20261127;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  constexpr int64_t kNodes = 400;
  std::vector<std::vector<std::vector<int64_t>>> superbatches;  // [sb][batch] ids
  std::mt19937_64 rng(seed);
  for (int sb = 0; sb < 4; ++sb) {
    std::vector<std::vector<int64_t>> batches;
    for (int b = 0; b < 6; ++b) {
      std::set<int64_t> seen;
      std::vector<int64_t> ids;
      const int n = 5 + static_cast<int>(rng() % 40);
      while (static_cast<int>(seen.size()) < n) {
        const int64_t v = static_cast<int64_t>(rng() % kNodes);
        if (seen.insert(v).second) ids.push_back(v);
      }
      batches.push_back(std::move(ids));
    }
    superbatches.push_back(std::move(batches));
  }
  std::vector<std::vector<Changeset>> reference;  // the CPU planner's, per superbatch
  for (PlannerDevice device : {PlannerDevice::kCpu, PlannerDevice::kGpu, PlannerDevice::kAuto}) {
    SCOPED_TRACE(static_cast<int>(device));
    PolicyOptions po;
    po.capacity_rows = 24;
    po.planner.device = device;
    po.planner.read_blocks = ReadBlocks{/*row_bytes=*/512, /*block_bytes=*/4096, kNodes};
    BeladyPlannerOptions belady = po.planner;
    auto made = MakeCachePolicy(PolicyKind::kBelady, po);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    SuperbatchCachePlanner policy(std::move(made).value(), belady);
    FeatureCacheOptions co;
    co.num_nodes = kNodes;
    co.capacity_rows = po.capacity_rows;
    co.row_bytes = 0;
    auto cache = FeatureCache::Create(co);
    ASSERT_TRUE(cache.ok());
    int64_t admitted = 0;
    for (size_t sb = 0; sb < superbatches.size(); ++sb) {
      SuperbatchTrace trace;
      for (const auto& ids : superbatches[sb]) {
        BatchTrace bt;
        bt.node_ids = ids;
        trace.batches.push_back(std::move(bt));
      }
      auto plan = policy.Plan(trace);
      if (device == PlannerDevice::kGpu && kernels::CudaDeviceCount() == 0) {
        ASSERT_FALSE(plan.ok());
        EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported) << plan.status().ToString();
        break;
      }
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      ASSERT_TRUE(plan->changesets);
      for (size_t s = 0; s < plan->fill_slots.size(); ++s) {
        if (plan->fill_slots[s] != kFreeSlot) cache->Install(static_cast<int32_t>(s), plan->fill_slots[s], nullptr);
      }
      if (device == PlannerDevice::kCpu) reference.emplace_back();
      for (size_t i = 0; i < trace.batches.size(); ++i) {
        const auto& ids = trace.batches[i].node_ids;
        auto cs = plan->changesets->Get(static_cast<int64_t>(i));
        ASSERT_TRUE(cs.ok());
        admitted += static_cast<int64_t>(cs->block_ids.size());
        // FeatureCache::Apply checks every slot it fills is free and every id absent.
        ASSERT_NO_THROW(cache->Apply(*cs, ids.data(), static_cast<int64_t>(ids.size()), nullptr))
            << "superbatch " << sb << " batch " << i;
        if (device == PlannerDevice::kCpu) {
          reference[sb].push_back(*cs);
        } else {
          EXPECT_TRUE(*cs == reference[sb][i]) << "superbatch " << sb << " batch " << i;
        }
      }
      EXPECT_EQ(policy.slots(), cache->SlotContents()) << "superbatch " << sb;
    }
    if (device == PlannerDevice::kGpu && kernels::CudaDeviceCount() == 0) continue;
    EXPECT_GT(admitted, 0);  // the block rule admitted rows (else the test shows nothing)
  }
}

TEST(CachePolicyTest, StaticPoliciesFillTopKOnceAndNeverChange) {
  PolicyOptions po;
  po.capacity_rows = 3;
  po.ranking = RankNodesByScore({5, 9, 9, 1, 7}, 3);
  EXPECT_EQ(po.ranking, (std::vector<int64_t>{1, 2, 4}));  // by score, ties by lower id
  EXPECT_EQ(RankNodesByScore({5, 9}, 10), (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(RankNodesByScore({}, 3).empty());
  EXPECT_FALSE(ParsePolicyKind("belady-ish").ok());
  auto made = MakeCachePolicy(PolicyKind::kStaticDegree, po);
  ASSERT_TRUE(made.ok());
  SuperbatchCachePlanner policy(std::move(made).value());
  SuperbatchTrace trace;
  trace.batches.resize(2);
  trace.batches[0].node_ids = {0, 3};
  auto first = policy.Plan(trace);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->fill_slots, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_FALSE(first->changesets);
  auto second = policy.Plan(trace);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->fill_slots.empty());
  EXPECT_EQ(policy.slots(), (std::vector<int64_t>{1, 2, 4}));
}

}  // namespace
}  // namespace seer
