// Block-granular Belady (cache/belady_planner.h "Block-granular reads") against the
// brute-force oracle BruteForceBeladyBlocks (tests/support/belady_oracle.h: blocks found
// byte by byte, free rows by scanning every row, a full sort per batch), the geometry of
// cache/read_blocks.h against byte-level counting, hand-made cases of the rule, and the
// changeset spill of admitted block rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/changeset_store.h"
#include "cache/read_blocks.h"
#include "support/belady_oracle.h"
#include "support/random_seed.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using testing::Batches;
using testing::BruteForceBelady;
using testing::BruteForceBeladyBlocks;
using testing::DescribeChangeset;
using testing::OraclePlan;

BeladyPlannerOptions BlockOptions(int64_t row_bytes, int64_t block_bytes, int64_t num_rows) {
  BeladyPlannerOptions options = testing::CpuPlannerOptions();
  options.read_blocks = ReadBlocks{row_bytes, block_bytes, num_rows};
  return options;
}

void ExpectSamePlan(const BeladyPlan& plan, const OraclePlan& want, const std::string& label) {
  ASSERT_EQ(plan.changesets.size(), static_cast<int64_t>(want.changesets.size())) << label;
  int64_t admits = 0;
  for (size_t i = 0; i < want.changesets.size(); ++i) {
    auto got = plan.changesets.Get(static_cast<int64_t>(i));
    ASSERT_TRUE(got.ok());
    admits += static_cast<int64_t>(want.changesets[i].block_ids.size());
    ASSERT_TRUE(*got == want.changesets[i])
        << label << " iteration " << i << "\n planner: " << DescribeChangeset(*got)
        << "\n oracle:  " << DescribeChangeset(want.changesets[i]);
  }
  EXPECT_EQ(plan.num_misses, want.num_misses) << label;
  EXPECT_EQ(plan.num_block_admits, admits) << label;
  EXPECT_EQ(plan.final_slots, want.final_slots) << label;
}

Batches RandomBatches(std::mt19937_64& rng, int num_batches, int64_t num_nodes, int max_size, bool local) {
  Batches batches(static_cast<size_t>(num_batches));
  for (auto& b : batches) {
    const int size = static_cast<int>(rng() % static_cast<uint64_t>(max_size + 1));
    std::set<int64_t> seen;
    // Local: ids near a random centre, so blocks hold several rows of later batches.
    const int64_t centre = static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes));
    for (int t = 0; t < size * 3 && static_cast<int>(seen.size()) < size; ++t) {
      int64_t v = local ? (centre + static_cast<int64_t>(rng() % 9)) % num_nodes
                        : static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes));
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  return batches;
}

TEST(ReadBlocksTest, BlocksAndInsideRowsMatchByteCounting) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  for (int round = 0; round < 300; ++round) {
    const int64_t row_bytes = 1 + static_cast<int64_t>(rng() % 40);
    const int64_t block_bytes = 1 + static_cast<int64_t>(rng() % 64);
    const int64_t num_rows = 1 + static_cast<int64_t>(rng() % 50);
    const ReadBlocks g{row_bytes, block_bytes, num_rows};
    std::vector<int64_t> rows;
    for (int k = static_cast<int>(rng() % 6); k > 0; --k) rows.push_back(static_cast<int64_t>(rng() % num_rows));
    std::set<int64_t> want_blocks;
    for (int64_t v : rows) {
      for (int64_t byte = v * row_bytes; byte < (v + 1) * row_bytes; ++byte) want_blocks.insert(byte / block_bytes);
    }
    const std::vector<int64_t> blocks = BlocksOfRows(rows.data(), static_cast<int64_t>(rows.size()), g);
    ASSERT_EQ(blocks, std::vector<int64_t>(want_blocks.begin(), want_blocks.end()));
    std::vector<int64_t> want_rows;
    for (int64_t r = 0; r < num_rows; ++r) {
      bool inside = true;
      for (int64_t byte = r * row_bytes; byte < (r + 1) * row_bytes && inside; ++byte) {
        inside = want_blocks.count(byte / block_bytes) != 0;
      }
      if (inside) want_rows.push_back(r);
    }
    ASSERT_EQ(RowsInsideBlocks(blocks, g), want_rows) << "row " << row_bytes << " block " << block_bytes;
  }
  // A row straddling a boundary needs both blocks: 12-byte rows, 16-byte blocks, row 1
  // is bytes [12, 24).
  const ReadBlocks g{12, 16, 10};
  const int64_t row1 = 1;
  EXPECT_EQ(BlocksOfRows(&row1, 1, g), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(RowsInsideBlocks({0, 1}, g), (std::vector<int64_t>{0, 1}));  // row 2 = [24, 36) is not inside
  EXPECT_TRUE(BlocksOfRows(&row1, 1, ReadBlocks{12, 0, 10}).empty());   // off
}

// Two 4-byte rows per 8-byte block: a miss of row 0 brings row 1 for free.
TEST(BeladyBlockPlannerTest, FreeRowUsedLaterIsAdmittedAndHits) {
  const Batches batches = {{0}, {1}};
  auto plan = PlanBelady(EmptyCacheState(2), MakeIdSpans(batches), BlockOptions(4, 8, 4));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->num_misses, 1);  // per-row reads: 2
  auto cs0 = plan->changesets.Get(0);
  ASSERT_TRUE(cs0.ok());
  EXPECT_EQ(cs0->in_ids, (std::vector<int64_t>{0}));
  EXPECT_EQ(cs0->in_slots, (std::vector<int32_t>{0}));
  EXPECT_EQ(cs0->block_ids, (std::vector<int64_t>{1}));
  EXPECT_EQ(cs0->block_slots, (std::vector<int32_t>{1}));
  auto per_row = PlanBelady(EmptyCacheState(2), MakeIdSpans(batches), testing::CpuPlannerOptions());
  ASSERT_TRUE(per_row.ok());
  EXPECT_EQ(per_row->num_misses, 2);
}

TEST(BeladyBlockPlannerTest, RowNeverUsedAgainIsNotAdmitted) {
  // Row 1 shares row 0's block but no later batch uses it; free capacity stays free.
  const Batches batches = {{0}, {2}};
  auto plan = PlanBelady(EmptyCacheState(3), MakeIdSpans(batches), BlockOptions(4, 8, 4));
  ASSERT_TRUE(plan.ok());
  auto cs0 = plan->changesets.Get(0);
  ASSERT_TRUE(cs0.ok());
  EXPECT_TRUE(cs0->block_ids.empty());
  EXPECT_EQ(plan->final_slots, (std::vector<int64_t>{0, 2, kFreeSlot}));
}

TEST(BeladyBlockPlannerTest, FreeRowDoesNotEvictASoonerRow) {
  // K = 1 holding row 5, used by batch 1; the free row 1 (of row 0's block) is next used
  // by batch 2: it must not displace row 5. Row 0 itself is never used again: it loses
  // to row 5 too.
  const Batches batches = {{0}, {5}, {1}};
  auto plan = PlanBelady(std::vector<int64_t>{5}, MakeIdSpans(batches), BlockOptions(4, 8, 8));
  ASSERT_TRUE(plan.ok());
  auto cs0 = plan->changesets.Get(0);
  ASSERT_TRUE(cs0.ok());
  EXPECT_TRUE(cs0->block_ids.empty());
  EXPECT_TRUE(cs0->out_ids.empty());
  // Batch 0 of {1}, {0}, {5} with C0 = {5}: row 0 (free, next use batch 1) beats row 5
  // (next use batch 2).
  const Batches sooner = {{1}, {0}, {5}};
  auto plan2 = PlanBelady(std::vector<int64_t>{5}, MakeIdSpans(sooner), BlockOptions(4, 8, 8));
  ASSERT_TRUE(plan2.ok());
  auto cs = plan2->changesets.Get(0);
  ASSERT_TRUE(cs.ok());
  EXPECT_EQ(cs->block_ids, (std::vector<int64_t>{0}));
  EXPECT_EQ(cs->out_ids, (std::vector<int64_t>{5}));
}

TEST(BeladyBlockPlannerTest, MatchesBruteForceBlockOracle) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  const std::string dir = testing::MakeTempDir("belady_block_oracle");
  const int64_t row_sizes[] = {4, 12, 20, 36};      // odd dims x 4 B: rows straddle blocks
  const int64_t block_sizes[] = {8, 16, 64, 4096};
  for (int round = 0; round < 160; ++round) {
    const int64_t num_nodes = 2 + static_cast<int64_t>(rng() % 60);
    const int num_batches = 1 + static_cast<int>(rng() % 25);
    const int max_size = static_cast<int>(std::min<int64_t>(num_nodes, 1 + static_cast<int64_t>(rng() % 8)));
    const Batches batches = RandomBatches(rng, num_batches, num_nodes, max_size, round % 2 == 0);
    const int64_t row_bytes = row_sizes[rng() % 4];
    const int64_t block_bytes = block_sizes[rng() % 4];
    std::vector<uint32_t> scores;
    testing::ScoreOf score_of;
    BeladyPlannerOptions options = BlockOptions(row_bytes, block_bytes, num_nodes);
    if (round % 3 == 1) {
      scores.resize(static_cast<size_t>(num_nodes));
      for (auto& x : scores) x = static_cast<uint32_t>(rng() % 4);
      score_of = [&scores](int64_t v) { return scores[static_cast<size_t>(v)]; };
      options.node_scores = [&scores](const int64_t* ids, int64_t n, uint32_t* out) {
        for (int64_t k = 0; k < n; ++k) out[k] = scores[static_cast<size_t>(ids[k])];
      };
    }
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, static_cast<int64_t>(rng() % (num_nodes + 1)), num_nodes}) {
      std::vector<int64_t> c0 = EmptyCacheState(k);
      if (round % 4 == 3) {  // a carried state: distinct rows in some slots
        for (int64_t s = 0; s < k; ++s) {
          if (rng() % 3 != 0) c0[static_cast<size_t>(s)] = (s * 7 + round) % num_nodes;
        }
        std::set<int64_t> seen;
        for (int64_t& v : c0) {
          if (v != kFreeSlot && !seen.insert(v).second) v = kFreeSlot;
        }
      }
      const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k) + " row " +
                                std::to_string(row_bytes) + " block " + std::to_string(block_bytes);
      const OraclePlan want = BruteForceBeladyBlocks(c0, batches, row_bytes, block_bytes, num_nodes, score_of);
      auto plan = PlanBelady(c0, MakeIdSpans(batches), options);
      ASSERT_TRUE(plan.ok()) << label << ": " << plan.status().ToString();
      ExpectSamePlan(*plan, want, label);
      // The streaming entry point and a spilling changeset store give the same plan.
      BeladyPlannerOptions streaming = options;
      streaming.runtime_dir = dir;
      streaming.spill_dir = dir;
      streaming.changeset_budget_bytes = 0;
      VectorBatchIdSource source(MakeIdSpans(batches));
      auto streamed = PlanBeladyStreaming(c0, source, streaming);
      ASSERT_TRUE(streamed.ok()) << label << ": " << streamed.status().ToString();
      ExpectSamePlan(*streamed, want, label + " streaming");
      if (HasFatalFailure()) return;
    }
  }
}

// With one row per block nothing is free: the block planner's plan equals the per-row
// planner's (and the per-row oracle's) on larger traces, byte for byte.
TEST(BeladyBlockPlannerTest, NoFreeRowsEqualsPerRowPlanner) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  for (int round = 0; round < 20; ++round) {
    const int64_t num_nodes = 50 + static_cast<int64_t>(rng() % 400);
    const Batches batches = RandomBatches(rng, 40, num_nodes, 30, round % 2 == 0);
    for (int64_t k : {int64_t{0}, int64_t{5}, num_nodes / 4, num_nodes}) {
      auto per_row = PlanBelady(EmptyCacheState(k), MakeIdSpans(batches), testing::CpuPlannerOptions());
      auto blocks = PlanBelady(EmptyCacheState(k), MakeIdSpans(batches), BlockOptions(16, 16, num_nodes));
      ASSERT_TRUE(per_row.ok() && blocks.ok());
      ASSERT_EQ(per_row->changesets.size(), blocks->changesets.size());
      for (int64_t i = 0; i < per_row->changesets.size(); ++i) {
        auto a = per_row->changesets.Get(i);
        auto b = blocks->changesets.Get(i);
        ASSERT_TRUE(a.ok() && b.ok());
        ASSERT_TRUE(*a == *b) << "round " << round << " K " << k << " batch " << i << "\n per-row: "
                              << DescribeChangeset(*a) << "\n blocks:  " << DescribeChangeset(*b);
      }
      EXPECT_EQ(per_row->final_slots, blocks->final_slots);
      EXPECT_EQ(blocks->num_block_admits, 0);
    }
  }
}

TEST(BeladyBlockPlannerTest, RejectsIdsOutsideTheRows) {
  const Batches batches = {{0, 9}};
  auto plan = PlanBelady(EmptyCacheState(2), MakeIdSpans(batches), BlockOptions(4, 8, 4));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("node 9 outside [0, 4)"), std::string::npos) << plan.status().ToString();
  const Batches dup = {{1, 1}};
  EXPECT_FALSE(PlanBelady(EmptyCacheState(2), MakeIdSpans(dup), BlockOptions(4, 8, 4)).ok());
}

TEST(ChangesetStoreBlockTest, SpilledBlockRowsRoundTrip) {
  const std::string dir = testing::MakeTempDir("changeset_block_spill");
  ChangesetStore store(0, dir);
  Changeset c;
  c.num_accesses = 3;
  c.num_misses = 2;
  c.in_ids = {4};
  c.in_positions = {1};
  c.in_slots = {0};
  c.out_ids = {7};
  c.out_slots = {2};
  c.block_ids = {5, 9};
  c.block_slots = {1, 2};
  ASSERT_TRUE(store.Append(c).ok());
  ASSERT_EQ(store.num_spilled(), 1);
  auto back = store.Get(0);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == c) << DescribeChangeset(*back);
}

}  // namespace
}  // namespace seer
