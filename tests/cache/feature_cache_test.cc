// FeatureCache replaying planner (and LRU) changesets must serve, for every batch,
// exactly the bytes a direct read of the features file gives.
#include <fcntl.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/feature_cache.h"
#include "cache/policies.h"
#include "cache/read_blocks.h"
#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "support/random_seed.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

constexpr int64_t kNumNodes = 4111;
constexpr int64_t kDim = 47;
constexpr int64_t kRowBytes = kDim * 4;

class FeatureCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("feature_cache");
    path_ = dir_ + "/features.bin";
    std::vector<float> rows(kNumNodes * kDim);
    for (int64_t v = 0; v < kNumNodes; ++v) {
      for (int64_t d = 0; d < kDim; ++d) rows[v * kDim + d] = static_cast<float>(v) * 0.5f + d;
    }
    auto fd = UniqueFd::Open(path_, O_CREAT | O_TRUNC | O_RDWR);
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    ASSERT_TRUE(PwriteFull(fd->get(), rows.data(), kNumNodes * kRowBytes, 0, path_).ok());
    fd_ = std::move(fd).value();
  }

  // An empty cache of `capacity` rows of this file's width (the test fails if refused).
  static FeatureCache MakeCache(int64_t capacity, int64_t num_nodes = kNumNodes,
                                int64_t row_bytes = kRowBytes) {
    FeatureCacheOptions options;
    options.num_nodes = num_nodes;
    options.capacity_rows = capacity;
    options.row_bytes = row_bytes;
    auto cache = FeatureCache::Create(options);
    EXPECT_TRUE(cache.ok()) << cache.status().ToString();
    return std::move(cache).value();
  }

  // What the file holds for node v.
  std::vector<char> DirectRow(int64_t v) {
    std::vector<char> row(kRowBytes);
    EXPECT_TRUE(PreadFull(fd_.get(), row.data(), kRowBytes, v * kRowBytes, path_).ok());
    return row;
  }

  std::vector<std::vector<int64_t>> RandomBatches(std::mt19937_64& rng, int count, int max_size) {
    std::vector<std::vector<int64_t>> batches(count);
    for (auto& b : batches) {
      std::set<int64_t> seen;
      const int size = static_cast<int>(rng() % (max_size + 1));
      while (static_cast<int>(seen.size()) < size) {
        // Skewed: half the draws from a hot set of 200 nodes.
        int64_t v = (rng() % 2) ? static_cast<int64_t>(rng() % 200) : static_cast<int64_t>(rng() % kNumNodes);
        if (seen.insert(v).second) b.push_back(v);
      }
    }
    return batches;
  }

  // Gathers every batch (hits from the cache, misses from the file), compares with direct
  // reads, then applies the changeset. Returns the number of hits served.
  int64_t Replay(FeatureCache& cache, const std::vector<std::vector<int64_t>>& batches,
                 const ChangesetStore& changesets) {
    int64_t hits = 0;
    for (size_t i = 0; i < batches.size(); ++i) {
      const auto& ids = batches[i];
      std::vector<char> buffer(ids.size() * kRowBytes, 0x5a);
      std::vector<int32_t> misses;
      hits += cache.Gather(ids.data(), static_cast<int64_t>(ids.size()), buffer.data(), &misses);
      for (int32_t p : misses) {
        EXPECT_TRUE(PreadFull(fd_.get(), buffer.data() + p * kRowBytes, kRowBytes, ids[p] * kRowBytes, path_).ok());
      }
      for (size_t p = 0; p < ids.size(); ++p) {
        std::vector<char> want = DirectRow(ids[p]);
        EXPECT_EQ(std::memcmp(buffer.data() + p * kRowBytes, want.data(), kRowBytes), 0)
            << "batch " << i << " position " << p << " node " << ids[p];
      }
      auto cs = changesets.Get(static_cast<int64_t>(i));
      EXPECT_TRUE(cs.ok());
      EXPECT_EQ(cs->num_misses, static_cast<int64_t>(misses.size())) << "batch " << i;
      cache.Apply(*cs, ids.data(), static_cast<int64_t>(ids.size()), buffer.data());
    }
    return hits;
  }

  std::string dir_;
  std::string path_;
  UniqueFd fd_;
};

TEST_F(FeatureCacheTest, BeladyReplayServesTheFileBytes) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  for (int64_t capacity : {int64_t{0}, int64_t{1}, int64_t{97}, int64_t{1000}, kNumNodes}) {
    SCOPED_TRACE("capacity " + std::to_string(capacity));
    FeatureCache cache = MakeCache(capacity);
    // Two superbatches; the second starts from the state the first left (carried C0).
    auto sb0 = RandomBatches(rng, 23, 300);
    auto sb1 = RandomBatches(rng, 17, 300);
    std::vector<int64_t> fill = BeladyInitialFill(MakeIdSpans(sb0), capacity);
    for (size_t s = 0; s < fill.size(); ++s) {
      if (fill[s] != kFreeSlot) cache.Install(static_cast<int32_t>(s), fill[s], DirectRow(fill[s]).data());
    }
    BeladyPlannerOptions planner;
    planner.device = PlannerDevice::kCpu;
    planner.changeset_budget_bytes = 4096;  // spill most changesets
    planner.spill_dir = dir_;
    auto plan0 = PlanBelady(cache.SlotContents(), MakeIdSpans(sb0), planner);
    ASSERT_TRUE(plan0.ok()) << plan0.status().ToString();
    Replay(cache, sb0, plan0->changesets);
    EXPECT_EQ(cache.SlotContents(), plan0->final_slots);
    auto plan1 = PlanBelady(cache.SlotContents(), MakeIdSpans(sb1), planner);
    ASSERT_TRUE(plan1.ok()) << plan1.status().ToString();
    Replay(cache, sb1, plan1->changesets);
    EXPECT_EQ(cache.SlotContents(), plan1->final_slots);
  }
}

TEST_F(FeatureCacheTest, LruReplayServesTheFileBytes) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  auto batches = RandomBatches(rng, 30, 200);
  PolicyOptions policy_options;
  policy_options.capacity_rows = 150;
  auto policy = MakeCachePolicy(PolicyKind::kLru, policy_options);
  ASSERT_TRUE(policy.ok());
  FeatureCache cache = MakeCache(150);
  auto changesets = (*policy)->Plan(cache.SlotContents(), MakeIdSpans(batches));
  ASSERT_TRUE(changesets.ok());
  EXPECT_GT(Replay(cache, batches, *changesets), 0);
}

// A single inserted row lands in its slot with the bytes of its own batch position
// (Ginex's reference code wrote position -1 here).
TEST_F(FeatureCacheTest, SingleInsertCopiesTheRightRow) {
  std::vector<std::vector<int64_t>> batches = {{10, 11, 12}, {11, 10, 20}, {20, 10, 11}};
  FeatureCache cache = MakeCache(3);
  for (int32_t s = 0; s < 3; ++s) cache.Install(s, 10 + s, DirectRow(10 + s).data());
  auto plan = PlanBelady(cache.SlotContents(), MakeIdSpans(batches));
  ASSERT_TRUE(plan.ok());
  Replay(cache, batches, plan->changesets);
  ASSERT_GE(cache.SlotOf(20), 0);
  EXPECT_EQ(std::memcmp(cache.Row(cache.SlotOf(20)), DirectRow(20).data(), kRowBytes), 0);
}

TEST_F(FeatureCacheTest, RejectsContradictingChangesets) {
  FeatureCache cache = MakeCache(/*capacity=*/2, /*num_nodes=*/100, /*row_bytes=*/8);
  const int64_t ids[] = {5, 6};
  const char buffer[16] = {};
  cache.Install(0, 7, buffer);
  Changeset wrong_evict;
  wrong_evict.out_ids = {8};
  wrong_evict.out_slots = {0};
  EXPECT_THROW(cache.Apply(wrong_evict, ids, 2, buffer), std::logic_error);
  Changeset occupied;
  occupied.in_ids = {5};
  occupied.in_positions = {0};
  occupied.in_slots = {0};
  EXPECT_THROW(cache.Apply(occupied, ids, 2, buffer), std::logic_error);
  Changeset wrong_position;
  wrong_position.in_ids = {5};
  wrong_position.in_positions = {1};
  wrong_position.in_slots = {1};
  EXPECT_THROW(cache.Apply(wrong_position, ids, 2, buffer), std::logic_error);
  EXPECT_EQ(cache.num_cached(), 1);
  EXPECT_EQ(cache.SlotOf(7), 0);
  EXPECT_EQ(cache.SlotOf(5), -1);
}

// Apply in steps (CheckChangeset, ApplyEvictions, WriteFreeSlot, ApplyInsertions: the
// gatherer's path for --read-block) against Apply: block-rule Belady changesets with
// admitted block rows, replayed in both caches, end in the same table, slot list and
// slot bytes; every row served is the file's.
TEST_F(FeatureCacheTest, StepsEndWhereApplyEnds) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  // Local batches (ids near a centre) so the 4 KiB blocks hold rows of later batches.
  std::vector<std::vector<int64_t>> batches(40);
  for (auto& b : batches) {
    std::set<int64_t> seen;
    const int64_t centre = static_cast<int64_t>(rng() % kNumNodes);
    const int size = 1 + static_cast<int>(rng() % 60);
    while (static_cast<int>(seen.size()) < size) {
      const int64_t v = (rng() % 4) ? (centre + static_cast<int64_t>(rng() % 120)) % kNumNodes
                                    : static_cast<int64_t>(rng() % kNumNodes);
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  BeladyPlannerOptions planner;
  planner.device = PlannerDevice::kCpu;
  planner.read_blocks = ReadBlocks{kRowBytes, 4096, kNumNodes};
  const int64_t capacity = 150;
  auto plan = PlanBelady(std::vector<int64_t>(capacity, kFreeSlot), MakeIdSpans(batches), planner);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_GT(plan->num_block_admits, 0);  // the steps write block rows
  FeatureCache whole = MakeCache(capacity), steps = MakeCache(capacity);
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto& ids = batches[i];
    const int64_t n = static_cast<int64_t>(ids.size());
    auto cs = plan->changesets.Get(static_cast<int64_t>(i));
    ASSERT_TRUE(cs.ok());
    std::vector<char> buffer(ids.size() * kRowBytes), other(ids.size() * kRowBytes);
    std::vector<int32_t> misses, other_misses;
    whole.Gather(ids.data(), n, buffer.data(), &misses);
    steps.Gather(ids.data(), n, other.data(), &other_misses);
    ASSERT_EQ(misses, other_misses) << "batch " << i;
    for (int32_t p : misses) {
      const std::vector<char> row = DirectRow(ids[p]);
      std::memcpy(buffer.data() + p * kRowBytes, row.data(), kRowBytes);
      std::memcpy(other.data() + p * kRowBytes, row.data(), kRowBytes);
    }
    ASSERT_EQ(buffer, other) << "batch " << i;
    std::vector<char> block_rows;
    for (int64_t v : cs->block_ids) {
      const std::vector<char> row = DirectRow(v);
      block_rows.insert(block_rows.end(), row.begin(), row.end());
    }
    whole.Apply(*cs, ids.data(), n, buffer.data(), block_rows.data());
    steps.CheckChangeset(*cs, ids.data(), n);
    steps.ApplyEvictions(*cs);
    for (size_t k = cs->block_ids.size(); k-- > 0;) {  // any order
      steps.WriteFreeSlot(cs->block_slots[k], DirectRow(cs->block_ids[k]).data());
    }
    steps.ApplyInsertions(*cs, other.data());
    ASSERT_EQ(whole.SlotContents(), steps.SlotContents()) << "batch " << i;
    ASSERT_EQ(whole.num_cached(), steps.num_cached()) << "batch " << i;
  }
  EXPECT_EQ(steps.SlotContents(), plan->final_slots);
  for (int32_t s = 0; s < capacity; ++s) {
    const int64_t v = steps.NodeInSlot(s);
    if (v == kFreeSlot) continue;
    EXPECT_EQ(steps.SlotOf(v), s);
    EXPECT_EQ(whole.SlotOf(v), s);
    EXPECT_EQ(std::memcmp(steps.Row(s), whole.Row(s), kRowBytes), 0) << "slot " << s;
    EXPECT_EQ(std::memcmp(steps.Row(s), DirectRow(v).data(), kRowBytes), 0) << "slot " << s;
  }
}

// The steps keep Apply's contract: a contradicting changeset is refused by CheckChangeset
// before anything changes, and a write or insert into an occupied slot throws unchanged.
TEST_F(FeatureCacheTest, StepsRejectContradictingChangesetsUnchanged) {
  FeatureCache cache = MakeCache(/*capacity=*/3, /*num_nodes=*/100, /*row_bytes=*/8);
  const int64_t ids[] = {5, 6};
  const char buffer[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const char seven[8] = {7, 7, 7, 7, 7, 7, 7, 7};
  cache.Install(0, 7, seven);
  cache.Install(1, 8, seven);
  auto unchanged = [&] {
    EXPECT_EQ(cache.num_cached(), 2);
    EXPECT_EQ(cache.SlotOf(7), 0);
    EXPECT_EQ(cache.SlotOf(8), 1);
    EXPECT_EQ(cache.SlotOf(5), -1);
    EXPECT_EQ(cache.SlotOf(40), -1);
    EXPECT_EQ(cache.SlotContents(), (std::vector<int64_t>{7, 8, kFreeSlot}));
    EXPECT_EQ(std::memcmp(cache.Row(0), seven, 8), 0);
    EXPECT_EQ(std::memcmp(cache.Row(1), seven, 8), 0);
  };
  // Admits a block row into slot 1, which it does not evict.
  Changeset block_into_occupied;
  block_into_occupied.out_ids = {7};
  block_into_occupied.out_slots = {0};
  block_into_occupied.block_ids = {40};
  block_into_occupied.block_slots = {1};
  EXPECT_THROW(cache.CheckChangeset(block_into_occupied, ids, 2), std::logic_error);
  unchanged();
  // Admits a cached node as a block row.
  Changeset block_cached;
  block_cached.block_ids = {8};
  block_cached.block_slots = {2};
  EXPECT_THROW(cache.CheckChangeset(block_cached, ids, 2), std::logic_error);
  unchanged();
  // Inserts a miss and a block row into the same slot.
  Changeset twice;
  twice.in_ids = {5};
  twice.in_positions = {0};
  twice.in_slots = {2};
  twice.block_ids = {40};
  twice.block_slots = {2};
  EXPECT_THROW(cache.CheckChangeset(twice, ids, 2), std::logic_error);
  unchanged();
  // Evicts a node from a slot that holds another.
  Changeset wrong_evict;
  wrong_evict.out_ids = {8};
  wrong_evict.out_slots = {0};
  wrong_evict.block_ids = {40};
  wrong_evict.block_slots = {0};
  EXPECT_THROW(cache.CheckChangeset(wrong_evict, ids, 2), std::logic_error);
  unchanged();
  // Steps out of order: writing or inserting into a slot still occupied throws, unchanged.
  EXPECT_THROW(cache.WriteFreeSlot(0, buffer), std::logic_error);
  EXPECT_THROW(cache.WriteFreeSlot(3, buffer), std::logic_error);
  Changeset evict_then_insert;
  evict_then_insert.out_ids = {7};
  evict_then_insert.out_slots = {0};
  evict_then_insert.in_ids = {6};
  evict_then_insert.in_positions = {1};
  evict_then_insert.in_slots = {0};
  evict_then_insert.block_ids = {40};
  evict_then_insert.block_slots = {2};
  EXPECT_NO_THROW(cache.CheckChangeset(evict_then_insert, ids, 2));
  EXPECT_THROW(cache.ApplyInsertions(evict_then_insert, buffer), std::logic_error);  // slot 0 not evicted yet
  unchanged();
  // The same changeset through the steps: what Apply does.
  cache.ApplyEvictions(evict_then_insert);
  EXPECT_EQ(cache.SlotOf(7), -1);
  EXPECT_EQ(cache.num_cached(), 1);
  const char forty[8] = {40, 40, 40, 40, 40, 40, 40, 40};
  cache.WriteFreeSlot(2, forty);
  EXPECT_EQ(cache.SlotOf(40), -1);  // written, not yet inserted
  cache.ApplyInsertions(evict_then_insert, buffer);
  EXPECT_EQ(cache.SlotContents(), (std::vector<int64_t>{6, 8, 40}));
  EXPECT_EQ(cache.num_cached(), 3);
  EXPECT_EQ(cache.SlotOf(6), 0);
  EXPECT_EQ(cache.SlotOf(40), 2);
  EXPECT_EQ(std::memcmp(cache.Row(0), buffer + 8, 8), 0);
  EXPECT_EQ(std::memcmp(cache.Row(2), forty, 8), 0);
}

TEST(FeatureCacheSizingTest, CapacityFromBudgetAndAllocatorHook) {
  EXPECT_EQ(CapacityRowsForBudget(1000, 188), 5);
  EXPECT_EQ(CapacityRowsForBudget(187, 188), 0);
  EXPECT_EQ(CapacityRowsForBudget(1000, 0), 0);
  int allocations = 0, releases = 0;
  {
    FeatureCacheOptions options;
    options.num_nodes = 10;
    options.capacity_rows = 3;
    options.row_bytes = 12;
    options.allocate = [&](size_t bytes) { ++allocations; return std::malloc(bytes); };
    options.release = [&](void* p) { ++releases; std::free(p); };
    auto cache = FeatureCache::Create(options);
    ASSERT_TRUE(cache.ok());
    options.allocate = [](size_t) -> void* { return nullptr; };
    auto refused = FeatureCache::Create(options);
    EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  }
  EXPECT_EQ(allocations, 1);
  EXPECT_EQ(releases, 1);
}


// NodeSlotIndex against a std::unordered_map oracle: random inserts and erases (the
// backward-shift erase must keep every other key findable), node ids beyond 2^32.
TEST(NodeSlotIndexTest, MatchesAMapUnderChurn) {
  for (int64_t capacity : {1, 2, 3, 17, 1000}) {
    const int64_t num_nodes = (int64_t{1} << 33) + 5;
    auto index = NodeSlotIndex::Create(num_nodes, capacity);
    ASSERT_TRUE(index.ok()) << index.status().message();
    EXPECT_EQ(index->bytes(), NodeSlotIndex::BytesFor(capacity));
    std::unordered_map<int64_t, int32_t> oracle;
    std::vector<int32_t> free_slots;
    for (int32_t s = 0; s < capacity; ++s) free_slots.push_back(s);
    std::mt19937_64 rng(static_cast<uint64_t>(capacity));
    // Few distinct ids (collisions and re-inserts) spread over the whole id range.
    std::vector<int64_t> pool;
    for (int64_t k = 0; k < 3 * capacity + 5; ++k) pool.push_back(static_cast<int64_t>(rng() % num_nodes));
    pool.push_back(num_nodes - 1);
    pool.push_back(0);
    for (int step = 0; step < 20000; ++step) {
      const int64_t node = pool[rng() % pool.size()];
      auto it = oracle.find(node);
      if (it != oracle.end()) {
        index->Erase(node);
        free_slots.push_back(it->second);
        oracle.erase(it);
      } else if (!free_slots.empty()) {
        const size_t pick = rng() % free_slots.size();
        const int32_t slot = free_slots[pick];
        free_slots.erase(free_slots.begin() + static_cast<std::ptrdiff_t>(pick));
        index->Insert(node, slot);
        oracle[node] = slot;
      }
      if (step % 97 == 0) {
        for (int64_t v : pool) {
          auto o = oracle.find(v);
          ASSERT_EQ(index->Find(v), o == oracle.end() ? -1 : o->second) << "capacity " << capacity << " step " << step;
        }
      }
    }
    index->Erase(pool[0] + 1);  // absent: no-op
    index->Clear();
    for (int64_t v : pool) EXPECT_EQ(index->Find(v), -1);
  }
}

TEST(NodeSlotIndexTest, RefusesIdsThatDoNotFitNextToTheSlots) {
  // 2^31 - 1 slots take 31 bits, leaving 33 for node + 1.
  EXPECT_EQ(NodeSlotIndex::Create(int64_t{1} << 34, (int64_t{1} << 31) - 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(NodeSlotIndex::Create(10, -1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(NodeSlotIndex::Create(int64_t{1} << 40, 1000).ok());
}

// The index's memory follows the rows, not the nodes: a cache of 1000 rows over 2^40 nodes.
TEST(FeatureCacheSizingTest, IndexScalesWithRowsNotNodes) {
  FeatureCacheOptions options;
  options.num_nodes = int64_t{1} << 40;
  options.capacity_rows = 1000;
  options.row_bytes = 0;
  auto cache = FeatureCache::Create(options);
  ASSERT_TRUE(cache.ok()) << cache.status().message();
  EXPECT_EQ(cache->index_bytes(), 8 * 1000 + 8 * (1000 + 500 + 1));
  const int64_t big = (int64_t{1} << 40) - 3;
  cache->Install(999, big, nullptr);
  cache->Install(0, int64_t{1} << 35, nullptr);
  EXPECT_EQ(cache->SlotOf(big), 999);
  EXPECT_EQ(cache->SlotOf(int64_t{1} << 35), 0);
  EXPECT_EQ(cache->SlotOf(1), -1);
  cache->Install(0, 1, nullptr);  // evicts 2^35
  EXPECT_EQ(cache->SlotOf(int64_t{1} << 35), -1);
  EXPECT_EQ(cache->SlotOf(1), 0);
  cache->Install(0, 1, nullptr);  // same node, same slot: stays
  EXPECT_EQ(cache->SlotOf(1), 0);
  EXPECT_EQ(cache->num_cached(), 2);
  const int64_t ids[] = {big, 5, 1};
  std::vector<int32_t> misses;
  EXPECT_EQ(cache->Gather(ids, 3, nullptr, &misses), 2);
  EXPECT_EQ(misses, std::vector<int32_t>{1});
}

}  // namespace
}  // namespace seer
