// The planner against a brute-force Belady oracle that implements the rule of
// cache/belady_planner.h literally (O(S^2) next-use scan, full sort of C_i ∪ ids_i under
// the key (0, next use, v ∉ C_i, v) / (1, -score(v), v ∉ C_i, v) per iteration).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cache/belady_planner.h"
#include "kernels/belady_gpu.h"
#include "kernels/belady_gpu_batches.h"
#include "support/belady_oracle.h"
#include "support/random_seed.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using testing::Batches;
using testing::BruteForceBelady;
using testing::DescribeChangeset;
using testing::OraclePlan;
using testing::ScoreOf;

// Scores from a table (ids past its end score 0), as the planner's node_scores.
std::function<void(const int64_t*, int64_t, uint32_t*)> TableScores(std::vector<uint32_t> table) {
  return [table = std::move(table)](const int64_t* ids, int64_t n, uint32_t* out) {
    for (int64_t k = 0; k < n; ++k) {
      out[k] = ids[k] >= 0 && ids[k] < static_cast<int64_t>(table.size()) ? table[ids[k]] : 0u;
    }
  };
}

// Compares a plan with the oracle's: every changeset and the final state.
void ExpectSamePlan(const BeladyPlan& plan, const OraclePlan& want, const std::string& label) {
  ASSERT_EQ(plan.changesets.size(), static_cast<int64_t>(want.changesets.size())) << label;
  for (size_t i = 0; i < want.changesets.size(); ++i) {
    auto got = plan.changesets.Get(static_cast<int64_t>(i));
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE(*got == want.changesets[i])
        << label << " iteration " << i << "\n planner: " << DescribeChangeset(*got)
        << "\n oracle:  " << DescribeChangeset(want.changesets[i]);
  }
  EXPECT_EQ(plan.num_misses, want.num_misses) << label;
  EXPECT_EQ(plan.final_slots, want.final_slots) << label;
}

// Plans with the CPU planner (and, when `streaming_dir` is given, with the streaming
// planner under a tiny working memory, forcing many runs and ranges) and compares every
// changeset and the final state with the oracle's. `scores` empty = no node scores.
void ExpectMatchesOracle(const std::vector<int64_t>& c0, const Batches& batches,
                         const std::string& label, const std::vector<uint32_t>& scores = {},
                         const std::string& streaming_dir = "", int64_t working_memory = 0) {
  ScoreOf score_of;
  BeladyPlannerOptions options = testing::CpuPlannerOptions();
  if (!scores.empty()) {
    score_of = [&scores](int64_t v) { return v < static_cast<int64_t>(scores.size()) ? scores[v] : 0u; };
    options.node_scores = TableScores(scores);
  }
  OraclePlan want = BruteForceBelady(c0, batches, score_of);
  auto plan = PlanBelady(c0, MakeIdSpans(batches), options);
  ASSERT_TRUE(plan.ok()) << label << ": " << plan.status().ToString();
  ExpectSamePlan(*plan, want, label);
  if (streaming_dir.empty()) return;
  options.runtime_dir = streaming_dir;
  options.working_memory_bytes = working_memory;
  VectorBatchIdSource source(MakeIdSpans(batches));
  auto streamed = PlanBeladyStreaming(c0, source, options);
  ASSERT_TRUE(streamed.ok()) << label << " streaming: " << streamed.status().ToString();
  ExpectSamePlan(*streamed, want, label + " streaming");
}

// Batches of unique ids: sizes in [0, max_size], ids drawn by `draw`.
template <typename Draw>
Batches MakeBatches(std::mt19937_64& rng, int num_batches, int max_size, Draw draw) {
  Batches batches(num_batches);
  std::uniform_int_distribution<int> size_dist(0, max_size);
  for (auto& b : batches) {
    const int size = size_dist(rng);
    std::set<int64_t> seen;
    for (int t = 0; t < size * 3 && static_cast<int>(seen.size()) < size; ++t) {
      int64_t v = draw(rng);
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  return batches;
}

// Power-law ids: v = floor(num_nodes * u^alpha) concentrates on small ids, then shuffled
// through a fixed permutation-like map so hot ids are not all small.
int64_t PowerLaw(std::mt19937_64& rng, int64_t num_nodes, double alpha) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int64_t v = static_cast<int64_t>(num_nodes * std::pow(u(rng), alpha));
  v = std::min(v, num_nodes - 1);
  return (v * 7919) % num_nodes;
}

std::vector<int64_t> RandomInitialState(std::mt19937_64& rng, int64_t capacity, int64_t num_nodes) {
  std::vector<int64_t> slots(capacity, kFreeSlot);
  std::vector<int64_t> nodes(num_nodes);
  for (int64_t v = 0; v < num_nodes; ++v) nodes[v] = v;
  std::shuffle(nodes.begin(), nodes.end(), rng);
  std::bernoulli_distribution occupied(0.7);
  for (int64_t s = 0; s < capacity && s < num_nodes; ++s) {
    if (occupied(rng)) slots[s] = nodes[s];
  }
  return slots;
}

TEST(BeladyPlannerTest, MatchesBruteForceOracle) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  const std::string dir = testing::MakeTempDir("belady_oracle");
  for (int round = 0; round < 120; ++round) {
    const int num_batches = 1 + static_cast<int>(rng() % (round < 100 ? 30 : 200));
    const int64_t num_nodes = 1 + static_cast<int64_t>(rng() % 80);
    const int max_size = static_cast<int>(std::min<int64_t>(num_nodes, 1 + rng() % 25));
    const int kind = round % 3;
    Batches batches;
    if (kind == 0) {
      batches = MakeBatches(rng, num_batches, max_size, [&](std::mt19937_64& r) {
        return static_cast<int64_t>(r() % num_nodes);
      });
    } else if (kind == 1) {
      batches = MakeBatches(rng, num_batches, max_size,
                            [&](std::mt19937_64& r) { return PowerLaw(r, num_nodes, 3.0); });
    } else {
      // Duplicate-heavy: a small pool shared by every batch.
      const int64_t pool = 1 + num_nodes / 8;
      batches = MakeBatches(rng, num_batches, static_cast<int>(std::min<int64_t>(pool, max_size)),
                            [&](std::mt19937_64& r) { return static_cast<int64_t>(r() % pool); });
    }
    std::set<int64_t> distinct;
    for (auto& b : batches) distinct.insert(b.begin(), b.end());
    const int64_t capacities[] = {0, 1, 2, static_cast<int64_t>(rng() % (num_nodes + 1)),
                                  static_cast<int64_t>(distinct.size()),
                                  static_cast<int64_t>(distinct.size()) + 3};
    // Scores: none (the old id tie), few distinct values (many ties), or wide.
    std::vector<uint32_t> scores;
    const int score_kind = (round / 3) % 3;
    if (score_kind > 0) {
      scores.resize(static_cast<size_t>(num_nodes));
      const uint32_t range = score_kind == 1 ? 3 : 1000000;
      for (auto& x : scores) x = static_cast<uint32_t>(rng() % range);
    }
    const int64_t working_memory = 24 * static_cast<int64_t>(1 + rng() % 40);
    for (int64_t k : capacities) {
      const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k) +
                                " scores " + std::to_string(score_kind);
      ExpectMatchesOracle(EmptyCacheState(k), batches, label + " cold", scores, dir, working_memory);
      ExpectMatchesOracle(RandomInitialState(rng, k, num_nodes), batches, label + " carried C0",
                          scores, dir, working_memory);
      if (HasFatalFailure()) return;
    }
  }
}

// The tie rule decides which never-reused rows survive: the higher score, then a cached
// row, then the lower id; and free capacity is filled.
TEST(BeladyPlannerTest, TieRuleKeepsHigherScores) {
  // K = 2, C0 = {1, 2}. Batch 0 reads 3 and 4; nothing is used again. Keys (all ∞):
  // scores 1:5, 2:1, 3:9, 4:1 -> keep 3 (9) and 1 (5); 2 and 4 tie at 1, but both lose.
  std::vector<uint32_t> scores = {0, 5, 1, 9, 1};
  BeladyPlannerOptions options = testing::CpuPlannerOptions();
  options.node_scores = TableScores(scores);
  auto plan = PlanBelady({1, 2}, MakeIdSpans({{3, 4}}), options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->final_slots, std::vector<int64_t>({1, 3}));
  // Equal scores: the cached row stays (no copy) — C0 {2 (1), 3 (9)}, batch {4 (1)}:
  // 2 and 4 tie at score 1, the cached 2 wins.
  auto tie = PlanBelady({2, 3}, MakeIdSpans({{4}}), options);
  ASSERT_TRUE(tie.ok());
  EXPECT_EQ(tie->final_slots, std::vector<int64_t>({2, 3}));
  // Free capacity is filled: K = 4 keeps everything.
  auto fill = PlanBelady({2, kFreeSlot, 3, kFreeSlot}, MakeIdSpans({{4}, {1}}), options);
  ASSERT_TRUE(fill.ok());
  EXPECT_EQ(fill->final_slots, std::vector<int64_t>({2, 4, 3, 1}));
  ExpectMatchesOracle({1, 2}, {{3, 4}}, "scores", scores);
  ExpectMatchesOracle({2, 3}, {{4}}, "cached tie", scores);
  // Without scores the old rule: cached first, then lower id.
  auto old = PlanBelady({1, 2}, MakeIdSpans({{3, 4}}));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->final_slots, std::vector<int64_t>({1, 2}));
}

TEST(BeladyPlannerTest, StreamingMatchesInRamOnLargerTraces) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  const std::string dir = testing::MakeTempDir("belady_streaming");
  Batches batches = MakeBatches(rng, 150, 400, [](std::mt19937_64& r) { return PowerLaw(r, 5000, 2.0); });
  std::vector<uint32_t> scores(5000);
  for (auto& x : scores) x = static_cast<uint32_t>(rng() % 50);
  for (int64_t k : {int64_t{0}, int64_t{100}, int64_t{700}, int64_t{6000}}) {
    BeladyPlannerOptions options = testing::CpuPlannerOptions();
    options.node_scores = TableScores(scores);
    const auto c0 = RandomInitialState(rng, k, 5000);
    auto ram = PlanBelady(c0, MakeIdSpans(batches), options);
    ASSERT_TRUE(ram.ok()) << ram.status().ToString();
    for (int64_t wm : {int64_t{100}, int64_t{4096}, int64_t{200000}, int64_t{1} << 30}) {
      options.runtime_dir = dir;
      options.working_memory_bytes = wm;
      VectorBatchIdSource source(MakeIdSpans(batches));
      auto streamed = PlanBeladyStreaming(c0, source, options);
      ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
      ASSERT_EQ(streamed->changesets.size(), ram->changesets.size());
      for (int64_t i = 0; i < ram->changesets.size(); ++i) {
        ASSERT_TRUE(*streamed->changesets.Get(i) == *ram->changesets.Get(i))
            << "K " << k << " working memory " << wm << " iteration " << i;
      }
      EXPECT_EQ(streamed->final_slots, ram->final_slots);
      EXPECT_EQ(streamed->num_misses, ram->num_misses);
    }
  }
}

// Batches of thousands of ids, so the forward pass's large-input paths run (radix sorts
// of the evicted slots and of the rows with no further use, the cut reaching the finite
// miss groups or not), against the Thrust planner's host build: an independent
// implementation (the cache as one array sorted by key, each batch merged into it) of the
// same rule.
TEST(BeladyPlannerTest, MatchesThrustPlannerOnLargeBatches) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  const int64_t num_nodes = 20000;
  for (int round = 0; round < 4; ++round) {
    const Batches batches = MakeBatches(rng, 10, 5000, [&](std::mt19937_64& r) {
      return round % 2 == 0 ? PowerLaw(r, num_nodes, 3.0) : static_cast<int64_t>(r() % num_nodes);
    });
    kernels::FlatBatches flat;
    for (const auto& b : batches) flat.Add(b.data(), static_cast<int64_t>(b.size()));
    // Scores: none, few values (many ties), spread.
    std::vector<uint32_t> table(static_cast<size_t>(num_nodes));
    const int score_kind = round % 3;
    for (auto& x : table) x = static_cast<uint32_t>(score_kind == 1 ? rng() % 3 : rng() % 1000000);
    for (int64_t k : {int64_t{1500}, int64_t{6000}}) {
      const std::vector<int64_t> c0s[] = {EmptyCacheState(k), RandomInitialState(rng, k, num_nodes)};
      for (const auto& c0 : c0s) {
        const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k);
        BeladyPlannerOptions options = testing::CpuPlannerOptions();
        if (score_kind > 0) options.node_scores = TableScores(table);
        const kernels::BeladyGpuInput in = flat.Input(c0, options.node_scores);
        auto plan = PlanBelady(c0, MakeIdSpans(batches), options);
        ASSERT_TRUE(plan.ok()) << plan.status().ToString();
        kernels::BeladyGpuOutput out;
        std::string message;
        ASSERT_EQ(kernels::PlanBeladyThrustHost(in, &out, &message), kernels::GpuPlanCode::kOk) << message;
        ASSERT_EQ(plan->changesets.size(), static_cast<int64_t>(batches.size()));
        for (size_t i = 0; i < batches.size(); ++i) {
          auto got = plan->changesets.Get(static_cast<int64_t>(i));
          ASSERT_TRUE(got.ok());
          Changeset thrust;
          thrust.num_accesses = static_cast<int64_t>(batches[i].size());
          kernels::CopyBatchChanges(out, i, &thrust);
          ASSERT_TRUE(*got == thrust) << label << " iteration " << i << "\n planner: " << DescribeChangeset(*got)
                                      << "\n thrust:  " << DescribeChangeset(thrust);
        }
        EXPECT_EQ(plan->final_slots, out.final_slots) << label;
      }
    }
  }
}

TEST(BeladyPlannerTest, HandlesEmptyInputs) {
  ExpectMatchesOracle(EmptyCacheState(4), {}, "no batches");
  ExpectMatchesOracle(EmptyCacheState(4), {{}, {}, {}}, "empty batches");
  ExpectMatchesOracle({7, kFreeSlot, 3}, {{}, {3}, {}, {7, 3}}, "empty batches between");
  ExpectMatchesOracle(EmptyCacheState(0), {{1, 2}, {2, 3}}, "K = 0");
}

TEST(BeladyPlannerTest, LargeIdsAreFine) {
  // Ids near 2^62 force the unpacked sort path.
  const int64_t big = int64_t{1} << 62;
  Batches batches = {{big, 5, big + 9}, {5, big + 1}, {big + 9, big}, {big + 1, 6}};
  ExpectMatchesOracle(EmptyCacheState(2), batches, "big ids");
  ExpectMatchesOracle({big + 1, kFreeSlot, 5}, batches, "big ids carried");
}

// Ginex's reference implementation writes position -1 when exactly one node is inserted
// in an iteration: check the single insert gets its true position and slot.
TEST(BeladyPlannerTest, SingleInsertHasItsRealPosition) {
  // K = 3 full of {10, 11, 12}; batch 1 misses only node 20 (position 2), which is used
  // again in batch 2, while 12 is never used again: 20 replaces 12 in slot 2.
  std::vector<int64_t> c0 = {10, 11, 12};
  Batches batches = {{10, 11, 12}, {11, 10, 20}, {20, 10, 11}};
  BeladyPlannerOptions options = testing::CpuPlannerOptions();
  auto plan = PlanBelady(c0, MakeIdSpans(batches), options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto cs = plan->changesets.Get(1);
  ASSERT_TRUE(cs.ok());
  ASSERT_EQ(cs->in_ids, std::vector<int64_t>({20}));
  EXPECT_EQ(cs->in_positions, std::vector<int32_t>({2}));
  EXPECT_EQ(cs->in_slots, std::vector<int32_t>({2}));
  EXPECT_EQ(cs->out_ids, std::vector<int64_t>({12}));
  EXPECT_EQ(cs->out_slots, std::vector<int32_t>({2}));
  EXPECT_EQ(cs->num_misses, 1);
  auto last = plan->changesets.Get(2);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->num_misses, 0);
  ExpectMatchesOracle(c0, batches, "single insert");
}

TEST(BeladyPlannerTest, RejectsDuplicatesAndBadIds) {
  auto dup = PlanBelady(EmptyCacheState(2), MakeIdSpans({{1, 2}, {3, 4, 3}}));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dup.status().message().find("batch 1"), std::string::npos) << dup.status().message();
  auto neg = PlanBelady(EmptyCacheState(2), MakeIdSpans({{1, -5}}));
  EXPECT_EQ(neg.status().code(), StatusCode::kInvalidArgument);
  auto c0dup = PlanBelady({4, 4}, MakeIdSpans({{1}}));
  EXPECT_EQ(c0dup.status().code(), StatusCode::kInvalidArgument);
}

TEST(BeladyPlannerTest, GpuRequestWithoutDeviceIsUnsupported) {
  BeladyPlannerOptions options;
  options.device = PlannerDevice::kGpu;
  auto plan = PlanBelady(EmptyCacheState(2), MakeIdSpans({{1, 2}, {2}}), options);
  if (ResolvePlannerDevice(PlannerDevice::kAuto) == PlannerDevice::kGpu) {
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  } else {
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported) << plan.status().ToString();
  }
  EXPECT_FALSE(ParsePlannerDevice("tpu").ok());
  EXPECT_EQ(*ParsePlannerDevice("gpu"), PlannerDevice::kGpu);
}

TEST(BeladyPlannerTest, InitialFillTakesEarliestFirstUse) {
  Batches batches = {{9, 4}, {4, 1, 7}, {2, 8}};
  EXPECT_EQ(BeladyInitialFill(MakeIdSpans(batches), 3), std::vector<int64_t>({4, 9, 1}));
  EXPECT_EQ(BeladyInitialFill(MakeIdSpans(batches), 7),
            std::vector<int64_t>({4, 9, 1, 7, 2, 8, kFreeSlot}));
  EXPECT_EQ(BeladyInitialFill(MakeIdSpans(batches), 0), std::vector<int64_t>());
}

}  // namespace
}  // namespace seer
