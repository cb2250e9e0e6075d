// The Thrust Belady planner (kernels/belady_thrust.inl) in both of its builds — the host
// build (Thrust's TBB system, every CI run) and the CUDA build (only with a device) —
// against the CPU planner, byte for byte, and against a brute-force oracle of the rule with
// node scores (tie_rule: among nodes with no further use, higher score, then cached, then
// lower id). Only the CUDA instances need a device; they skip without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cache/belady_gpu_plan_internal.h"
#include "cache/belady_planner.h"
#include "cache/read_blocks.h"
#include "kernels/belady_gpu.h"
#include "kernels/belady_gpu_batches.h"
#include "kernels/device.h"
#include "support/belady_oracle.h"
#include "support/random_seed.h"

namespace seer {
namespace {

using testing::Batches;
using testing::BruteForceBelady;
using testing::DescribeChangeset;
using Plan = testing::OraclePlan;
using ScoreFn = testing::ScoreOf;  // null = every score 0

// `score` as the planner's batch-wise node scores (null stays null).
NodeScoreFn NodeScoresOf(const ScoreFn& score) {
  if (!score) return {};
  return [score](const int64_t* ids, int64_t n, uint32_t* scores) {
    for (int64_t k = 0; k < n; ++k) scores[k] = score(ids[k]);
  };
}

// ---- the Thrust planner through its plain C++ entry points ---------------------------------

enum class Backend { kThrustHost, kCuda };
std::string BackendName(Backend b) { return b == Backend::kThrustHost ? "ThrustHost" : "Cuda"; }
void PrintTo(Backend b, std::ostream* os) { *os << BackendName(b); }

struct ThrustResult {
  kernels::GpuPlanCode code = kernels::GpuPlanCode::kError;
  std::string message;
  Plan plan;
};

// The block rule's geometry (BeladyGpuInput::block_*; cache/read_blocks.h): off when
// block_bytes is 0.
struct BlockShape {
  int64_t row_bytes = 0;
  int64_t block_bytes = 0;
  int64_t num_rows = 0;
};
std::string DescribeShape(const BlockShape& g) {
  return "row " + std::to_string(g.row_bytes) + " block " + std::to_string(g.block_bytes) + " rows " +
         std::to_string(g.num_rows);
}

// changeset_chunk: BeladyGpuInput's (0 = the planner's default). `raw`, when set, gets the
// planner's output as it came (diagnostics: host_syncs).
ThrustResult RunThrust(Backend backend, const std::vector<int64_t>& c0, const Batches& batches,
                       const ScoreFn& score, int64_t changeset_chunk = 0, const BlockShape& blocks = {},
                       kernels::BeladyGpuOutput* raw = nullptr) {
  kernels::FlatBatches flat;
  for (const auto& b : batches) flat.Add(b.data(), static_cast<int64_t>(b.size()));
  kernels::BeladyGpuInput in = flat.Input(c0, NodeScoresOf(score));
  in.changeset_chunk = changeset_chunk;
  in.block_row_bytes = blocks.row_bytes;
  in.block_bytes = blocks.block_bytes;
  in.block_num_rows = blocks.num_rows;
  kernels::BeladyGpuOutput out;
  ThrustResult r;
  r.code = backend == Backend::kThrustHost ? kernels::PlanBeladyThrustHost(in, &out, &r.message)
                                           : kernels::PlanBeladyGpu(in, &out, &r.message);
  if (r.code != kernels::GpuPlanCode::kOk) return r;
  EXPECT_EQ(out.in_offsets.size(), batches.size() + 1);
  EXPECT_EQ(out.out_offsets.size(), batches.size() + 1);
  const bool block_rule = blocks.block_bytes > 0 && blocks.row_bytes > 0;
  // The block rule's arrays: one offset per batch + 1 when it is on, all empty when off.
  EXPECT_EQ(out.block_offsets.size(), block_rule ? batches.size() + 1 : 0);
  EXPECT_EQ(out.block_ids.size(), out.block_slots.size());
  if (block_rule && out.block_offsets.size() == batches.size() + 1) {
    EXPECT_EQ(out.block_offsets.front(), 0);
    EXPECT_EQ(out.block_offsets.back(), static_cast<int64_t>(out.block_ids.size()));
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    Changeset cs;
    cs.num_accesses = static_cast<int64_t>(batches[i].size());
    kernels::CopyBatchChanges(out, i, &cs);  // block_ids/block_slots too
    r.plan.num_misses += cs.num_misses;
    r.plan.changesets.push_back(std::move(cs));
  }
  r.plan.final_slots = std::move(out.final_slots);
  if (raw != nullptr) *raw = std::move(out);
  return r;
}

// The CPU planner; with `blocks`, its block rule (cache/belady_block_planner.cc: PlanBelady
// with read_blocks).
Plan CpuPlan(const std::vector<int64_t>& c0, const Batches& batches, const ScoreFn& score,
             const BlockShape* blocks = nullptr) {
  BeladyPlannerOptions options = testing::CpuPlannerOptions();
  options.node_scores = NodeScoresOf(score);
  if (blocks != nullptr) options.read_blocks = ReadBlocks{blocks->row_bytes, blocks->block_bytes, blocks->num_rows};
  auto plan = PlanBelady(c0, MakeIdSpans(batches), options);
  Plan out;
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return out;
  for (int64_t i = 0; i < plan->changesets.size(); ++i) {
    auto c = plan->changesets.Get(i);
    EXPECT_TRUE(c.ok());
    if (c.ok()) out.changesets.push_back(*c);
  }
  out.final_slots = plan->final_slots;
  out.num_misses = plan->num_misses;
  return out;
}

Plan CpuBlockPlan(const std::vector<int64_t>& c0, const Batches& batches, const ScoreFn& score,
                  const BlockShape& g) {
  return CpuPlan(c0, batches, score, &g);
}

void ExpectSame(const Plan& want, const Plan& got, const std::string& label) {
  ASSERT_EQ(want.changesets.size(), got.changesets.size()) << label;
  for (size_t i = 0; i < want.changesets.size(); ++i) {
    ASSERT_TRUE(want.changesets[i] == got.changesets[i])
        << label << " iteration " << i << "\n want: " << DescribeChangeset(want.changesets[i])
        << "\n got:  " << DescribeChangeset(got.changesets[i]);
  }
  EXPECT_EQ(want.final_slots, got.final_slots) << label;
  EXPECT_EQ(want.num_misses, got.num_misses) << label;
}

Batches RandomTrace(std::mt19937_64& rng, int num_batches, int max_size, int64_t num_nodes,
                    bool skewed, int64_t id_offset = 0) {
  Batches batches(static_cast<size_t>(num_batches));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& b : batches) {
    const int size = static_cast<int>(rng() % static_cast<uint64_t>(max_size + 1));
    std::set<int64_t> seen;
    for (int t = 0; t < size * 3 && static_cast<int>(seen.size()) < size; ++t) {
      const int64_t v =
          skewed ? std::min<int64_t>(num_nodes - 1, static_cast<int64_t>(static_cast<double>(num_nodes) *
                                                                         std::pow(u(rng), 3.0)))
                 : static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes));
      if (seen.insert(v + id_offset).second) b.push_back(v + id_offset);
    }
  }
  return batches;
}

// A C0 of k slots holding distinct random nodes (some from the trace's range, some not),
// with free slots scattered.
std::vector<int64_t> RandomInitialState(std::mt19937_64& rng, int64_t k, int64_t num_nodes,
                                        int64_t id_offset = 0) {
  std::vector<int64_t> slots = EmptyCacheState(k);
  std::set<int64_t> used;
  for (auto& s : slots) {
    if (rng() % 4 == 0) continue;
    const int64_t v = id_offset + static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * num_nodes + 1));
    if (used.insert(v).second) s = v;
  }
  return slots;
}

// Scores with many ties (range 3), or spread over all of uint32.
ScoreFn MakeScore(uint64_t salt, uint32_t range) {
  return [salt, range](int64_t v) {
    uint64_t x = (static_cast<uint64_t>(v) + salt) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return range == 0 ? static_cast<uint32_t>(x >> 16) : static_cast<uint32_t>((x >> 16) % range);
  };
}

// The size of the random rounds: 1 + rng() % max_nodes nodes, up to max_batches batches of
// up to max_size ids, scores of range score_range (spread over uint32 every third round),
// and a last capacity extra_capacity above the distinct ids.
struct RoundShape {
  int64_t max_nodes;
  int max_batches;
  int max_size;
  uint32_t score_range;
  int64_t extra_capacity;
};

// One random round: its trace (skewed on odd rounds), scores, and the capacities to plan
// it at: 0, 1, a random one, and shape.extra_capacity more than its distinct ids.
struct RandomRound {
  int64_t num_nodes = 0;
  Batches batches;
  ScoreFn score;
  std::vector<int64_t> capacities;
};

RandomRound MakeRandomRound(std::mt19937_64& rng, int round, const RoundShape& shape) {
  RandomRound r;
  r.num_nodes = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(shape.max_nodes));
  const int num_batches = 1 + static_cast<int>(rng() % static_cast<uint64_t>(shape.max_batches));
  const int size =
      static_cast<int>(std::min<int64_t>(r.num_nodes, 1 + rng() % static_cast<uint64_t>(shape.max_size)));
  r.batches = RandomTrace(rng, num_batches, size, r.num_nodes, round % 2 == 1);
  r.score = MakeScore(rng(), round % 3 == 0 ? 0u : shape.score_range);
  std::set<int64_t> distinct;
  for (const auto& b : r.batches) distinct.insert(b.begin(), b.end());
  r.capacities = {0, 1, static_cast<int64_t>(rng() % static_cast<uint64_t>(r.num_nodes + 1)),
                  static_cast<int64_t>(distinct.size()) + shape.extra_capacity};
  return r;
}

// ---- tests, once per backend ---------------------------------------------------------------

class BeladyThrustTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kCuda && kernels::CudaDeviceCount() == 0) {
      GTEST_SKIP() << "CUDA backend needs a device: " << kernels::DescribeDevice();
    }
  }
  // `rounds` random rounds of `shape`: check(round, k, label) at each capacity k of each;
  // stops at the first fatal failure.
  void ForEachRandomCapacity(
      int rounds, const RoundShape& shape,
      const std::function<void(const RandomRound& r, int64_t k, const std::string& label)>& check) {
    for (int round = 0; round < rounds; ++round) {
      const RandomRound r = MakeRandomRound(seed_.rng, round, shape);
      for (int64_t k : r.capacities) {
        check(r, k, "round " + std::to_string(round) + " K " + std::to_string(k));
        if (HasFatalFailure()) return;
      }
    }
  }
  // The Thrust plan must succeed and equal `want` byte for byte.
  void ExpectPlan(const Plan& want, const std::vector<int64_t>& c0, const Batches& batches,
                  const ScoreFn& score, const std::string& label) {
    ThrustResult got = RunThrust(GetParam(), c0, batches, score);
    ASSERT_EQ(got.code, kernels::GpuPlanCode::kOk) << label << ": " << got.message;
    ExpectSame(want, got.plan, label);
  }

  testing::RandomTestSeed seed_;
};

// The acceptance test of the GPU planner: same output as the CPU planner on random traces.
TEST_P(BeladyThrustTest, MatchesCpuPlannerByteForByte) {
  ForEachRandomCapacity(20, {/*max_nodes=*/3000, /*max_batches=*/120, /*max_size=*/300, /*score_range=*/4,
                              /*extra_capacity=*/2},
                        [&](const RandomRound& r, int64_t k, const std::string& label) {
                          for (const auto& [name, c0] :
                               {std::make_pair(std::string("cold"), EmptyCacheState(k)),
                                std::make_pair(std::string("prefetched"), BeladyInitialFill(MakeIdSpans(r.batches), k)),
                                std::make_pair(std::string("carried C0"), RandomInitialState(seed_.rng, k, r.num_nodes))}) {
                            // No scores (the old rule), then scores with many ties.
                            ExpectPlan(CpuPlan(c0, r.batches, nullptr), c0, r.batches, nullptr, label + " " + name);
                            ExpectPlan(CpuPlan(c0, r.batches, r.score), c0, r.batches, r.score,
                                       label + " " + name + " scores");
                            if (HasFatalFailure()) return;
                          }
                        });
  if (HasFatalFailure()) return;
  ExpectPlan(CpuPlan(EmptyCacheState(3), {}, nullptr), EmptyCacheState(3), {}, nullptr, "no batches");
  ExpectPlan(CpuPlan({10, 11, 12}, {{10, 11, 12}, {11, 10, 20}, {20, 10, 11}}, nullptr), {10, 11, 12},
             {{10, 11, 12}, {11, 10, 20}, {20, 10, 11}}, nullptr, "single insert");
  ExpectPlan(CpuPlan(EmptyCacheState(4), {{}, {1, 2}, {}, {2, 3}}, nullptr), EmptyCacheState(4),
             {{}, {1, 2}, {}, {2, 3}}, nullptr, "empty batches");
}

// The tie rule with scores, against the oracle: many ties (range 3) and spread scores;
// cold, carried and over-sized caches.
TEST_P(BeladyThrustTest, MatchesOracleWithScores) {
  ForEachRandomCapacity(40, {/*max_nodes=*/60, /*max_batches=*/12, /*max_size=*/15, /*score_range=*/3,
                              /*extra_capacity=*/3},
                        [&](const RandomRound& r, int64_t k, const std::string& label) {
                          for (const auto& c0 : {EmptyCacheState(k), RandomInitialState(seed_.rng, k, r.num_nodes)}) {
                            ExpectPlan(BruteForceBelady(c0, r.batches, r.score), c0, r.batches, r.score, label);
                            if (HasFatalFailure()) return;
                          }
                        });
}

// Dense traces, where the candidates' keys tie on hi and differ only in lo: batches that
// touch most of a small node set (so many nodes share each next-use batch), and a last
// stretch where most nodes have no further use and two score values (so the "cached, then
// id" part of lo decides). The radix passes and the merge of kept hits and misses must
// give the comparator's order exactly. Plus one batch of 6000 ids, larger than one sort
// tile on CUDA.
TEST_P(BeladyThrustTest, DenseTiesMatchCpuPlanner) {
  std::mt19937_64& rng = seed_.rng;
  for (int round = 0; round < 12; ++round) {
    const int64_t num_nodes = 16 + static_cast<int64_t>(rng() % 80);
    const int size = static_cast<int>(num_nodes * (6 + static_cast<int64_t>(rng() % 4)) / 10);
    const Batches batches = RandomTrace(rng, 10 + static_cast<int>(rng() % 30), size, num_nodes, round % 2 == 1);
    const ScoreFn score = round % 3 == 0 ? nullptr : MakeScore(rng(), 2u);
    for (int64_t k : {int64_t{1}, num_nodes / 4, num_nodes / 2, num_nodes - 3}) {
      for (const auto& c0 : {EmptyCacheState(k), RandomInitialState(rng, k, num_nodes)}) {
        ExpectPlan(CpuPlan(c0, batches, score), c0, batches, score,
                   "round " + std::to_string(round) + " K " + std::to_string(k));
        if (HasFatalFailure()) return;
      }
    }
  }
  const Batches big = RandomTrace(rng, 6, 6000, 8000, /*skewed=*/false);
  const ScoreFn score = MakeScore(rng(), 3u);
  for (int64_t k : {int64_t{500}, int64_t{4000}}) {
    const auto c0 = RandomInitialState(rng, k, 8000);
    ExpectPlan(CpuPlan(c0, big, score), c0, big, score, "6000-id batches, K " + std::to_string(k));
    if (HasFatalFailure()) return;
  }
}

// A score can only matter among nodes with no further use: with a full cache at the last
// batch, the high-score newcomer displaces the low-score cached node, and the equal-score
// one does not.
TEST_P(BeladyThrustTest, ScoreDecidesAmongNodesWithNoFurtherUse) {
  const Batches batches = {{1, 2}, {3}};
  const ScoreFn score = [](int64_t v) -> uint32_t { return v == 3 ? 5 : (v == 1 ? 5 : 0); };
  const Plan want = BruteForceBelady(EmptyCacheState(2), batches, score);
  ASSERT_EQ(want.changesets[1].out_ids, std::vector<int64_t>{2});  // the oracle agrees
  ASSERT_EQ(want.changesets[1].in_ids, std::vector<int64_t>{3});
  ExpectPlan(want, EmptyCacheState(2), batches, score, "score 5 beats score 0");
  const Plan plain = BruteForceBelady(EmptyCacheState(2), batches, nullptr);
  ASSERT_TRUE(plain.changesets[1].in_ids.empty());  // no scores: cached nodes stay
  ExpectPlan(plain, EmptyCacheState(2), batches, nullptr, "no scores");
}

// Node ids near 2^40 (and one near 2^62): no packing limit, same plans as the oracle.
TEST_P(BeladyThrustTest, LargeNodeIds) {
  std::mt19937_64& rng = seed_.rng;
  for (int64_t offset : {(int64_t{1} << 40) - 50, (int64_t{1} << 62) + 12345}) {
    for (int round = 0; round < 10; ++round) {
      const int64_t num_nodes = 1 + static_cast<int64_t>(rng() % 100);
      const Batches batches = RandomTrace(rng, 1 + static_cast<int>(rng() % 10),
                                          static_cast<int>(std::min<int64_t>(num_nodes, 20)), num_nodes,
                                          round % 2 == 0, offset);
      const ScoreFn score = round % 2 == 0 ? nullptr : MakeScore(rng(), 4u);
      const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes + 1));
      const auto c0 = RandomInitialState(rng, k, num_nodes, offset);
      ExpectPlan(BruteForceBelady(c0, batches, score), c0, batches, score,
                 "offset " + std::to_string(offset) + " round " + std::to_string(round));
      if (HasFatalFailure()) return;
    }
  }
}

// Superbatch after superbatch, C_S carried into the next one; the cached ids of the carried
// state keep their slots (the oracle's slot rule).
TEST_P(BeladyThrustTest, CarriesFinalStateAcrossSuperbatches) {
  std::mt19937_64& rng = seed_.rng;
  const int64_t num_nodes = 400;
  const ScoreFn score = MakeScore(7, 5u);
  for (int64_t k : {int64_t{0}, int64_t{37}, int64_t{500}}) {
    std::vector<int64_t> want_state = EmptyCacheState(k), got_state = EmptyCacheState(k);
    for (int sb = 0; sb < 4; ++sb) {
      const Batches batches = RandomTrace(rng, 20, 60, num_nodes, sb % 2 == 0);
      const Plan want = BruteForceBelady(want_state, batches, score);
      ThrustResult got = RunThrust(GetParam(), got_state, batches, score);
      ASSERT_EQ(got.code, kernels::GpuPlanCode::kOk) << got.message;
      ExpectSame(want, got.plan, "K " + std::to_string(k) + " superbatch " + std::to_string(sb));
      want_state = want.final_slots;
      got_state = got.plan.final_slots;
    }
  }
}

TEST_P(BeladyThrustTest, RejectsDuplicatesLikeCpu) {
  const Batches batches = {{1, 2}, {3, 4, 3}};
  ThrustResult got = RunThrust(GetParam(), EmptyCacheState(2), batches, nullptr);
  EXPECT_EQ(got.code, kernels::GpuPlanCode::kInvalidArgument);
  EXPECT_NE(got.message.find("node 3 appears twice in batch 1"), std::string::npos) << got.message;
  BeladyPlannerOptions cpu = testing::CpuPlannerOptions();
  EXPECT_EQ(PlanBelady(EmptyCacheState(2), MakeIdSpans(batches), cpu).status().code(),
            StatusCode::kInvalidArgument);
}

// The algorithms' temporary storage is pooled for the whole call (each cudaFree
// synchronizes the device): a superbatch 8x longer with batches of the same sizes makes no
// more device allocations than a short one, and both make far fewer than one per batch.
TEST_P(BeladyThrustTest, TemporaryStorageIsPooledAcrossBatches) {
  std::mt19937_64& rng = seed_.rng;
  auto allocations = [&](int num_batches) -> int64_t {
    Batches batches(static_cast<size_t>(num_batches));
    for (auto& b : batches) {  // 2000 distinct ids per batch out of 20000
      std::set<int64_t> seen;
      while (seen.size() < 2000) seen.insert(static_cast<int64_t>(rng() % 20000));
      b.assign(seen.begin(), seen.end());
      std::shuffle(b.begin(), b.end(), rng);
    }
    kernels::FlatBatches flat;
    for (const auto& b : batches) flat.Add(b.data(), static_cast<int64_t>(b.size()));
    const std::vector<int64_t> c0 = EmptyCacheState(5000);
    const kernels::BeladyGpuInput in = flat.Input(c0, {});
    kernels::BeladyGpuOutput out;
    std::string message;
    const auto code = GetParam() == Backend::kThrustHost ? kernels::PlanBeladyThrustHost(in, &out, &message)
                                                         : kernels::PlanBeladyGpu(in, &out, &message);
    if (code == kernels::GpuPlanCode::kUnsupported) return -1;
    EXPECT_EQ(code, kernels::GpuPlanCode::kOk) << message;
    EXPECT_GT(out.temp_bytes, 0);
    std::printf("%d batches: %lld temporary requests, %lld device allocations\n", num_batches,
                static_cast<long long>(out.temp_requests), static_cast<long long>(out.temp_allocations));
    EXPECT_GE(out.temp_requests, num_batches);  // the algorithms ask per batch...
    return out.temp_allocations;                // ...the pool answers from what it holds
  };
  const int64_t short_run = allocations(16);
  if (short_run < 0) GTEST_SKIP() << "no CUDA device: " << kernels::DescribeDevice();
  const int64_t long_run = allocations(128);
  EXPECT_LE(long_run, short_run + 4);  // a size class or two may be new, never per batch
  EXPECT_LT(long_run, 128);
}

// The phase split (time_phases) is diagnostics only: the plan is the same with and without
// it, every phase is charged only when asked, and the charged time lies within the call's.
// The host waits for the device a bounded number of times per batch.
TEST_P(BeladyThrustTest, PhaseTimesLeaveThePlanAlone) {
  std::mt19937_64& rng = seed_.rng;
  const int num_batches = 64;
  const Batches batches = RandomTrace(rng, num_batches, 400, 3000, /*skewed=*/true);
  kernels::FlatBatches flat;
  for (const auto& b : batches) flat.Add(b.data(), static_cast<int64_t>(b.size()));
  const std::vector<int64_t> c0 = EmptyCacheState(500);
  auto run = [&](bool timed, kernels::BeladyGpuOutput* out) {
    kernels::BeladyGpuInput in = flat.Input(c0, {});
    in.time_phases = timed;
    std::string message;
    const auto code = GetParam() == Backend::kThrustHost ? kernels::PlanBeladyThrustHost(in, out, &message)
                                                         : kernels::PlanBeladyGpu(in, out, &message);
    ASSERT_EQ(code, kernels::GpuPlanCode::kOk) << message;
  };
  kernels::BeladyGpuOutput plain, timed;
  run(false, &plain);
  const auto start = std::chrono::steady_clock::now();
  run(true, &timed);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (HasFatalFailure()) return;
  EXPECT_EQ(plain.num_misses, timed.num_misses);
  EXPECT_EQ(plain.in_offsets, timed.in_offsets);
  EXPECT_EQ(plain.in_ids, timed.in_ids);
  EXPECT_EQ(plain.in_positions, timed.in_positions);
  EXPECT_EQ(plain.in_slots, timed.in_slots);
  EXPECT_EQ(plain.out_offsets, timed.out_offsets);
  EXPECT_EQ(plain.out_ids, timed.out_ids);
  EXPECT_EQ(plain.out_slots, timed.out_slots);
  EXPECT_EQ(plain.final_slots, timed.final_slots);
  double sum = 0;
  for (int p = 0; p < kernels::kNumPlanPhases; ++p) {
    EXPECT_EQ(plain.phase_seconds[static_cast<size_t>(p)], 0.0) << kernels::PlanPhaseName(p);
    EXPECT_GE(timed.phase_seconds[static_cast<size_t>(p)], 0.0) << kernels::PlanPhaseName(p);
    sum += timed.phase_seconds[static_cast<size_t>(p)];
  }
  EXPECT_GT(sum, 0.0);
  EXPECT_LE(sum, wall);
  EXPECT_GT(timed.phase_seconds[kernels::kPhaseCandidates], 0.0);  // 64 sorts of up to 400
  EXPECT_EQ(plain.host_syncs, timed.host_syncs);                   // timing waits are not counted
  EXPECT_GT(plain.host_syncs, 0);
  // One wait per batch (the cut), plus a constant: the duplicate check, C0's two counts,
  // the changesets (one copy per array: the trace fits one chunk) and the final slots.
  EXPECT_LE(plain.host_syncs, num_batches + 10);
}

// The changesets leave the device in chunks; a chunk smaller than the superbatch's
// changesets (here: about one batch) copies out mid-plan, with the same plan.
TEST_P(BeladyThrustTest, ChangesetsCopiedOutInChunks) {
  ForEachRandomCapacity(6, {/*max_nodes=*/2000, /*max_batches=*/60, /*max_size=*/200, /*score_range=*/4,
                             /*extra_capacity=*/2},
                        [&](const RandomRound& r, int64_t k, const std::string& label) {
                          const auto c0 = RandomInitialState(seed_.rng, k, r.num_nodes);
                          const Plan want = CpuPlan(c0, r.batches, r.score);
                          for (int64_t chunk : {int64_t{1}, int64_t{250}, int64_t{1000}}) {
                            ThrustResult got = RunThrust(GetParam(), c0, r.batches, r.score, chunk);
                            ASSERT_EQ(got.code, kernels::GpuPlanCode::kOk) << label << ": " << got.message;
                            ExpectSame(want, got.plan, label + " chunk " + std::to_string(chunk));
                            if (HasFatalFailure()) return;
                          }
                        });
}

// ---- the block rule (BeladyGpuInput::block_*) ------------------------------------------------

// Batches of rows < num_rows; `local` ones cluster around a centre, so a batch's blocks hold
// rows that later batches use (free rows that matter).
Batches RandomBlockTrace(std::mt19937_64& rng, int num_batches, int max_size, int64_t num_rows, bool local) {
  Batches batches(static_cast<size_t>(num_batches));
  for (auto& b : batches) {
    const int size = static_cast<int>(rng() % static_cast<uint64_t>(max_size + 1));
    const int64_t centre = static_cast<int64_t>(rng() % static_cast<uint64_t>(num_rows));
    std::set<int64_t> seen;
    for (int t = 0; t < size * 3 && static_cast<int>(seen.size()) < size; ++t) {
      const int64_t v = local ? (centre + static_cast<int64_t>(rng() % 9)) % num_rows
                              : static_cast<int64_t>(rng() % static_cast<uint64_t>(num_rows));
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  return batches;
}

// A C0 of k slots holding distinct rows < num_rows (the CPU block planner's requirement),
// free slots scattered.
std::vector<int64_t> RandomRowState(std::mt19937_64& rng, int64_t k, int64_t num_rows) {
  std::vector<int64_t> slots = EmptyCacheState(k);
  std::set<int64_t> used;
  for (auto& s : slots) {
    if (rng() % 3 == 0) continue;
    const int64_t v = static_cast<int64_t>(rng() % static_cast<uint64_t>(num_rows));
    if (used.insert(v).second) s = v;
  }
  return slots;
}

// Geometries: rows smaller than blocks (several per block), rows straddling block
// boundaries (48 B rows in 64 B blocks, 12 in 16, 20 in 64), rows as large as a block,
// rows larger than blocks (36 in 16, 100 in 32), huge blocks.
const BlockShape kShapes[] = {{4, 8, 0},   {12, 16, 0}, {48, 64, 0},  {20, 64, 0},
                              {16, 16, 0}, {36, 16, 0}, {100, 32, 0}, {4, 4096, 0}};

int64_t TotalFreeRows(const Plan& plan) {
  int64_t total = 0;
  for (const auto& c : plan.changesets) total += static_cast<int64_t>(c.block_ids.size());
  return total;
}

// The acceptance test of the block rule: random small traces against the brute-force
// oracle (blocks and free rows found byte by byte) and the CPU block planner, every
// changeset field (block_ids / block_slots included) and the final slots; every geometry,
// num_rows often leaving a partial last block, capacities from 0 to past the rows, with
// and without scores, cold and carried caches.
TEST_P(BeladyThrustTest, BlockRuleMatchesOracleAndCpuBlockPlanner) {
  std::mt19937_64& rng = seed_.rng;
  int64_t admitted = 0, cut_free_rows = 0;  // the rule must both admit and refuse free rows
  for (int round = 0; round < 120; ++round) {
    BlockShape shape = kShapes[static_cast<size_t>(round) % (sizeof(kShapes) / sizeof(kShapes[0]))];
    shape.num_rows = 2 + static_cast<int64_t>(rng() % 70);
    const int num_batches = 1 + static_cast<int>(rng() % 20);
    const int max_size = static_cast<int>(std::min<int64_t>(shape.num_rows, 1 + static_cast<int64_t>(rng() % 9)));
    const Batches batches = RandomBlockTrace(rng, num_batches, max_size, shape.num_rows, round % 2 == 0);
    const ScoreFn score = round % 3 == 1 ? MakeScore(rng(), 4u) : nullptr;
    std::set<int64_t> distinct;
    for (const auto& b : batches) distinct.insert(b.begin(), b.end());
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, static_cast<int64_t>(rng() % (shape.num_rows + 1)),
                      static_cast<int64_t>(distinct.size()) + 1, shape.num_rows + 2}) {
      for (const auto& c0 : {EmptyCacheState(k), RandomRowState(rng, k, shape.num_rows)}) {
        const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k) + " " +
                                  DescribeShape(shape) + (score ? " scores" : "");
        const Plan want = testing::BruteForceBeladyBlocks(c0, batches, shape.row_bytes, shape.block_bytes,
                                                          shape.num_rows, score);
        ThrustResult got = RunThrust(GetParam(), c0, batches, score, 0, shape);
        ASSERT_EQ(got.code, kernels::GpuPlanCode::kOk) << label << ": " << got.message;
        ExpectSame(want, got.plan, label + " vs oracle");
        ExpectSame(CpuBlockPlan(c0, batches, score, shape), got.plan, label + " vs CPU block planner");
        if (HasFatalFailure()) return;
        admitted += TotalFreeRows(want);
        // Free rows the rule refused: F_i minus the admitted ones, counted by the plan
        // with unlimited capacity (where every free row is admitted).
        if (k > 0 && k < static_cast<int64_t>(distinct.size())) {
          const Plan roomy = testing::BruteForceBeladyBlocks(EmptyCacheState(shape.num_rows + 2), batches,
                                                             shape.row_bytes, shape.block_bytes, shape.num_rows,
                                                             score);
          cut_free_rows += TotalFreeRows(roomy) > TotalFreeRows(want) ? 1 : 0;
        }
      }
    }
  }
  // The random cases did exercise the rule: free rows admitted, and free rows refused.
  EXPECT_GT(admitted, 0);
  EXPECT_GT(cut_free_rows, 0);
}

// Hand-made cases where F_i is not empty and the rule admits only part of it; a plan that
// admitted every free row (or none) would fail.
TEST_P(BeladyThrustTest, BlockRuleAdmitsOnlyWhatTheRuleKeeps) {
  auto plan = [&](const std::vector<int64_t>& c0, const Batches& batches, const BlockShape& shape,
                  const std::string& label) -> Plan {
    ThrustResult got = RunThrust(GetParam(), c0, batches, nullptr, 0, shape);
    EXPECT_EQ(got.code, kernels::GpuPlanCode::kOk) << label << ": " << got.message;
    ExpectSame(testing::BruteForceBeladyBlocks(c0, batches, shape.row_bytes, shape.block_bytes, shape.num_rows),
               got.plan, label + " vs oracle");
    ExpectSame(CpuBlockPlan(c0, batches, nullptr, shape), got.plan, label + " vs CPU block planner");
    return got.plan;
  };
  // 4 rows per 16-byte block. Batch 0 misses row 0: F_0 = {1, 2, 3} (next uses 1, 2, 3),
  // row 0 is never used again. K = 2 keeps rows 1 and 2 (free, soonest), not row 3 nor the
  // miss; they take slots 0 and 1.
  {
    const Plan p = plan(EmptyCacheState(2), {{0}, {1}, {2}, {3}}, {4, 16, 8}, "K 2 of F = {1, 2, 3}");
    ASSERT_EQ(p.changesets.size(), 4u);
    EXPECT_TRUE(p.changesets[0].in_ids.empty());
    EXPECT_EQ(p.changesets[0].block_ids, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(p.changesets[0].block_slots, (std::vector<int32_t>{0, 1}));
    EXPECT_EQ(p.num_misses, 2);  // rows 0 and 3
  }
  // The misses take the first free slots, the free rows the next ones, ascending id: batch
  // 0 = {5, 0} (rows 5 and 0 used again in batch 2); F_0 = rows 1, 4, 6, 7 used later, row
  // 2 and 3 never: not admitted though there is room.
  {
    const Plan p = plan(EmptyCacheState(10), {{5, 0}, {7, 1, 4}, {0, 5, 6}}, {4, 16, 8}, "slot order");
    ASSERT_EQ(p.changesets.size(), 3u);
    EXPECT_EQ(p.changesets[0].in_ids, (std::vector<int64_t>{5, 0}));
    EXPECT_EQ(p.changesets[0].in_slots, (std::vector<int32_t>{0, 1}));
    EXPECT_EQ(p.changesets[0].block_ids, (std::vector<int64_t>{1, 4, 6, 7}));
    EXPECT_EQ(p.changesets[0].block_slots, (std::vector<int32_t>{2, 3, 4, 5}));
    EXPECT_EQ(p.num_misses, 2);
  }
  // A free row does not displace a cached row used sooner (C0 = {5}, used in batch 1; the
  // free row 1 is next used in batch 2), and at equal next use the cached row stays.
  {
    const Plan p = plan({5}, {{0}, {5}, {1}}, {4, 8, 8}, "sooner cached row stays");
    EXPECT_TRUE(p.changesets[0].block_ids.empty());
    EXPECT_TRUE(p.changesets[0].out_ids.empty());
    const Plan q = plan({5}, {{1}, {0}, {5}}, {4, 8, 8}, "sooner free row enters");
    EXPECT_EQ(q.changesets[0].block_ids, (std::vector<int64_t>{0}));
    EXPECT_EQ(q.changesets[0].out_ids, (std::vector<int64_t>{5}));
    const Plan r = plan({5}, {{0}, {1, 5}}, {4, 8, 8}, "equal next use: cached row stays");
    EXPECT_TRUE(r.changesets[0].block_ids.empty());
  }
  // Rows straddling blocks: 48-byte rows, 64-byte blocks. A miss of row 1 (bytes
  // [48, 96): blocks 0 and 1) reads bytes [0, 128): row 0 is inside, row 2 ([96, 144))
  // is not. Row 5 ([240, 288): blocks 3 and 4) with row 1: blocks 0, 1, 3, 4; row 4
  // ([192, 240)) lies in block 3 only: free; row 3 ([144, 192)) needs block 2: not.
  {
    const Plan p = plan(EmptyCacheState(8), {{1, 5}, {0, 2, 3, 4}}, {48, 64, 8}, "straddling rows");
    EXPECT_EQ(p.changesets[0].block_ids, (std::vector<int64_t>{0, 4}));
    // Runs of blocks are one byte range: misses 1 and 2 read blocks 0-2 = bytes [0, 192),
    // so row 3 ([144, 192)) is inside although no single block holds it.
    const Plan q = plan(EmptyCacheState(8), {{1, 2}, {0, 3, 4}}, {48, 64, 8}, "a run of blocks");
    EXPECT_EQ(q.changesets[0].block_ids, (std::vector<int64_t>{0, 3}));
  }
  // A partial last block: 5 rows of 12 bytes = 60 bytes, 32-byte blocks; the miss of row 4
  // ([48, 60)) reads block 1 = bytes [32, 64): row 3 ([36, 48)) is inside, no row 5 exists.
  {
    const Plan p = plan(EmptyCacheState(4), {{4}, {3, 4}}, {12, 32, 5}, "partial last block");
    EXPECT_EQ(p.changesets[0].block_ids, (std::vector<int64_t>{3}));
  }
  // Rows larger than blocks: 40-byte rows, 16-byte blocks. A miss of row 0 reads blocks
  // 0-2 ([0, 48)): row 1 ([40, 80)) is not inside; a miss of row 1 reads blocks 2-4
  // ([32, 80)), of row 2 ([80, 120)) blocks 5-7 ([80, 128)): only the missed row inside.
  {
    const Plan p = plan(EmptyCacheState(4), {{0}, {1}, {0, 2}, {1}}, {40, 16, 4}, "rows larger than blocks");
    for (const auto& c : p.changesets) EXPECT_TRUE(c.block_ids.empty());
  }
  // Cached and requested rows of a batch's blocks are not free rows: batch 0 misses row 0
  // and hits row 2; row 1 is cached; of block 0 only row 3 is free.
  {
    const Plan p = plan({2, 1, -1, -1}, {{0, 2}, {2, 3}, {1, 3}}, {4, 16, 4}, "cached and hit rows");
    EXPECT_EQ(p.changesets[0].block_ids, (std::vector<int64_t>{3}));
  }
}

// One row per block: no row is ever free, so the block rule's plan is the plain rule's, and
// the block arrays are all empty (offsets zero) — while the plain rule's are absent.
TEST_P(BeladyThrustTest, BlockRuleWithoutFreeRowsEqualsPlainRule) {
  std::mt19937_64& rng = seed_.rng;
  for (int round = 0; round < 10; ++round) {
    const int64_t num_rows = 50 + static_cast<int64_t>(rng() % 400);
    const Batches batches = RandomBlockTrace(rng, 30, 40, num_rows, round % 2 == 0);
    const ScoreFn score = round % 2 == 0 ? nullptr : MakeScore(rng(), 3u);
    for (int64_t k : {int64_t{0}, int64_t{5}, num_rows / 4, num_rows}) {
      const auto c0 = RandomRowState(rng, k, num_rows);
      const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k);
      ThrustResult plain = RunThrust(GetParam(), c0, batches, score);
      ASSERT_EQ(plain.code, kernels::GpuPlanCode::kOk) << plain.message;
      kernels::BeladyGpuOutput raw;
      ThrustResult blocks = RunThrust(GetParam(), c0, batches, score, 0, {16, 16, num_rows}, &raw);
      ASSERT_EQ(blocks.code, kernels::GpuPlanCode::kOk) << blocks.message;
      ExpectSame(plain.plan, blocks.plan, label);
      EXPECT_TRUE(raw.block_ids.empty()) << label;
      EXPECT_EQ(raw.block_offsets, std::vector<int64_t>(batches.size() + 1, 0)) << label;
      if (HasFatalFailure()) return;
    }
  }
}

// Larger traces against the CPU block planner (the oracle is too slow there), with the
// changesets copied out in chunks smaller than one batch's rows (the buffers grow) and the
// host's waits: at most two per batch (the rows' count, the cut) plus a constant.
TEST_P(BeladyThrustTest, BlockRuleMatchesCpuBlockPlannerOnLargerTraces) {
  std::mt19937_64& rng = seed_.rng;
  for (int round = 0; round < 8; ++round) {
    BlockShape shape = kShapes[static_cast<size_t>(round)];
    shape.num_rows = 500 + static_cast<int64_t>(rng() % 3000);
    const int num_batches = 20 + static_cast<int>(rng() % 40);
    const Batches batches = RandomBlockTrace(rng, num_batches, 200, shape.num_rows, round % 2 == 0);
    const ScoreFn score = round % 2 == 1 ? MakeScore(rng(), 4u) : nullptr;
    for (int64_t k : {int64_t{7}, shape.num_rows / 10, shape.num_rows / 2}) {
      const auto c0 = RandomRowState(rng, k, shape.num_rows);
      const Plan want = CpuBlockPlan(c0, batches, score, shape);
      for (int64_t chunk : {int64_t{0}, int64_t{1}, int64_t{300}}) {
        const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k) + " " +
                                  DescribeShape(shape) + " chunk " + std::to_string(chunk);
        kernels::BeladyGpuOutput raw;
        ThrustResult got = RunThrust(GetParam(), c0, batches, score, chunk, shape, &raw);
        ASSERT_EQ(got.code, kernels::GpuPlanCode::kOk) << label << ": " << got.message;
        ExpectSame(want, got.plan, label);
        if (chunk == 0) {
          EXPECT_LE(raw.host_syncs, 2 * num_batches + 12) << label;
        }
        if (HasFatalFailure()) return;
      }
    }
  }
}

// A batch whose blocks hold 2^31 rows or more is refused (positions are int32), before
// anything of that size is allocated.
TEST_P(BeladyThrustTest, BlockRuleRefusesBlocksOfTooManyRows) {
  ThrustResult got = RunThrust(GetParam(), EmptyCacheState(2), {{0}, {1}}, nullptr, 0,
                               {1, int64_t{1} << 31, int64_t{1} << 32});
  EXPECT_EQ(got.code, kernels::GpuPlanCode::kError);
  EXPECT_NE(got.message.find("below 2^31"), std::string::npos) << got.message;
}

INSTANTIATE_TEST_SUITE_P(Backends, BeladyThrustTest, ::testing::Values(Backend::kThrustHost, Backend::kCuda),
                         [](const ::testing::TestParamInfo<Backend>& info) { return BackendName(info.param); });

// ---- PlanBelady(kGpu): the planner's dispatch to the CUDA build --------------------------------

// 10 random superbatches (scores on every other) planned by `plan` with `options`: the
// CPU planner's plans, byte for byte.
void ExpectPlansMatchCpu(const std::function<Result<BeladyPlan>(const std::vector<int64_t>&, const std::vector<IdSpan>&,
                                                                const BeladyPlannerOptions&)>& plan,
                         BeladyPlannerOptions options, PlannerDevice expected_device) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  for (int round = 0; round < 10; ++round) {
    const int64_t num_nodes = 1 + static_cast<int64_t>(rng() % 5000);
    const Batches batches = RandomTrace(rng, 1 + static_cast<int>(rng() % 100), 300, num_nodes, true);
    const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes + 1));
    const ScoreFn score = round % 2 == 0 ? nullptr : MakeScore(rng(), 4u);
    options.node_scores = NodeScoresOf(score);
    const auto c0 = RandomInitialState(rng, k, num_nodes);
    auto result = plan(c0, MakeIdSpans(batches), options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->device_used, expected_device);
    Plan got;
    for (int64_t i = 0; i < result->changesets.size(); ++i) got.changesets.push_back(*result->changesets.Get(i));
    got.final_slots = result->final_slots;
    got.num_misses = result->num_misses;
    ExpectSame(CpuPlan(c0, batches, score), got, "round " + std::to_string(round));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Needs a device (CUDA-only behaviour: the dispatch picks the CUDA build).
TEST(BeladyGpuTest, PlanBeladyGpuMatchesCpuPlanner) {
  if (kernels::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << kernels::DescribeDevice();
  BeladyPlannerOptions gpu;
  gpu.device = PlannerDevice::kGpu;
  ExpectPlansMatchCpu(
      [](const std::vector<int64_t>& c0, const std::vector<IdSpan>& spans, const BeladyPlannerOptions& o) {
        return PlanBelady(c0, spans, o);
      },
      gpu, PlannerDevice::kGpu);
}

// The dispatch's host steps (parallel flattening and id check, parallel scores, per-batch
// changesets built in parallel and appended in order) around the host backend: the same
// plan as the CPU planner, on every machine; a negative id is refused.
TEST(BeladyGpuTest, DispatchHostStepsMatchCpuPlanner) {
  ExpectPlansMatchCpu(
      [](const std::vector<int64_t>& c0, const std::vector<IdSpan>& spans, const BeladyPlannerOptions& o) {
        return belady_internal::PlanBeladyWithBackend(c0, spans, o, kernels::PlanBeladyThrustHost);
      },
      {}, PlannerDevice::kGpu);
  if (HasFatalFailure()) return;
  auto negative = belady_internal::PlanBeladyWithBackend(EmptyCacheState(2), MakeIdSpans({{1, 2}, {3, -4}}), {},
                                                         kernels::PlanBeladyThrustHost);
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("negative node id"), std::string::npos) << negative.status().ToString();
}

// Without CUDA (or without a device) kGpu is refused, and kAuto plans on the CPU.
TEST(BeladyGpuTest, GpuUnavailableWithoutDevice) {
  if (kernels::CudaDeviceCount() > 0) GTEST_SKIP() << "a device is present";
  BeladyPlannerOptions gpu;
  gpu.device = PlannerDevice::kGpu;
  EXPECT_EQ(PlanBelady(EmptyCacheState(2), MakeIdSpans({{1, 2}}), gpu).status().code(),
            StatusCode::kUnsupported);
  kernels::BeladyGpuOutput out;
  std::string message;
  const int64_t offsets[] = {0};
  kernels::BeladyGpuInput in;
  in.batch_offsets = offsets;
  EXPECT_EQ(kernels::PlanBeladyGpu(in, &out, &message), kernels::GpuPlanCode::kUnsupported);
  EXPECT_FALSE(message.empty());
  BeladyPlannerOptions automatic;
  auto plan = PlanBelady(EmptyCacheState(2), MakeIdSpans({{1, 2}}), automatic);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->device_used, PlannerDevice::kCpu);
}

}  // namespace
}  // namespace seer
