// The Thrust Belady planner (kernels/belady_thrust.inl) in both of its builds — the host
// build (Thrust's TBB system, every CI run) and the CUDA build (only with a device) —
// against the CPU planner, byte for byte, and against a brute-force oracle of the rule with
// node scores (tie_rule: among nodes with no further use, higher score, then cached, then
// lower id). Only the CUDA instances need a device; they skip without one.
#include <gtest/gtest.h>

#include <algorithm>
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

#include "cache/belady_planner.h"
#include "kernels/belady_gpu.h"
#include "kernels/device.h"

namespace seer {
namespace {

using Batches = std::vector<std::vector<int64_t>>;
using ScoreFn = std::function<uint32_t(int64_t)>;  // null = every score 0

struct Plan {
  std::vector<Changeset> changesets;
  std::vector<int64_t> final_slots;
  int64_t num_misses = 0;
};

std::string Describe(const Changeset& c) {
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

// ---- the oracle: the rule written literally ----------------------------------------------

// No sorting of accesses, no sorted cache: next use by scanning forward, a full sort of
// C_i ∪ ids_i by the rule's key per iteration, slots by scanning.
Plan BruteForce(std::vector<int64_t> slots, const Batches& batches, const ScoreFn& score) {
  const int64_t capacity = static_cast<int64_t>(slots.size());
  const int64_t num_batches = static_cast<int64_t>(batches.size());
  Plan out;
  for (int64_t i = 0; i < num_batches; ++i) {
    const auto& ids = batches[static_cast<size_t>(i)];
    std::set<int64_t> cached;
    for (int64_t v : slots) {
      if (v != kFreeSlot) cached.insert(v);
    }
    std::set<int64_t> candidates = cached;
    candidates.insert(ids.begin(), ids.end());
    // (finite? 0 : 1, next use or -score, not cached, id)
    std::vector<std::tuple<int, int64_t, int, int64_t>> keys;
    for (int64_t v : candidates) {
      int64_t next = -1;
      for (int64_t j = i + 1; j < num_batches && next < 0; ++j) {
        const auto& b = batches[static_cast<size_t>(j)];
        if (std::find(b.begin(), b.end(), v) != b.end()) next = j;
      }
      const int not_cached = cached.count(v) ? 0 : 1;
      if (next >= 0) {
        keys.emplace_back(0, next, not_cached, v);
      } else {
        keys.emplace_back(1, -static_cast<int64_t>(score ? score(v) : 0), not_cached, v);
      }
    }
    std::sort(keys.begin(), keys.end());
    std::set<int64_t> kept;
    for (size_t k = 0; k < keys.size() && static_cast<int64_t>(k) < capacity; ++k) {
      kept.insert(std::get<3>(keys[k]));
    }
    Changeset cs;
    cs.num_accesses = static_cast<int64_t>(ids.size());
    for (int64_t v : ids) cs.num_misses += cached.count(v) ? 0 : 1;
    for (int64_t s = 0; s < capacity; ++s) {
      if (slots[static_cast<size_t>(s)] != kFreeSlot && !kept.count(slots[static_cast<size_t>(s)])) {
        cs.out_slots.push_back(static_cast<int32_t>(s));
        cs.out_ids.push_back(slots[static_cast<size_t>(s)]);
        slots[static_cast<size_t>(s)] = kFreeSlot;
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
    out.changesets.push_back(cs);
  }
  out.final_slots = slots;
  return out;
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

ThrustResult RunThrust(Backend backend, const std::vector<int64_t>& c0, const Batches& batches,
                       const ScoreFn& score) {
  std::vector<int64_t> flat, offsets{0};
  for (const auto& b : batches) {
    flat.insert(flat.end(), b.begin(), b.end());
    offsets.push_back(static_cast<int64_t>(flat.size()));
  }
  std::vector<uint32_t> scores, initial_scores;
  kernels::BeladyGpuInput in;
  in.initial_slots = c0.data();
  in.capacity = static_cast<int64_t>(c0.size());
  in.ids = flat.data();
  in.batch_offsets = offsets.data();
  in.num_batches = static_cast<int64_t>(batches.size());
  if (score) {
    for (int64_t v : flat) scores.push_back(score(v));
    for (int64_t v : c0) initial_scores.push_back(v == kFreeSlot ? 0 : score(v));
    in.scores = scores.data();
    in.initial_scores = initial_scores.data();
  }
  kernels::BeladyGpuOutput out;
  ThrustResult r;
  r.code = backend == Backend::kThrustHost ? kernels::PlanBeladyThrustHost(in, &out, &r.message)
                                           : kernels::PlanBeladyGpu(in, &out, &r.message);
  if (r.code != kernels::GpuPlanCode::kOk) return r;
  EXPECT_EQ(out.in_offsets.size(), batches.size() + 1);
  EXPECT_EQ(out.out_offsets.size(), batches.size() + 1);
  for (size_t i = 0; i < batches.size(); ++i) {
    Changeset cs;
    cs.num_accesses = static_cast<int64_t>(batches[i].size());
    cs.num_misses = out.num_misses[i];
    const auto ib = out.in_offsets[i], ie = out.in_offsets[i + 1];
    const auto ob = out.out_offsets[i], oe = out.out_offsets[i + 1];
    cs.in_ids.assign(out.in_ids.begin() + ib, out.in_ids.begin() + ie);
    cs.in_positions.assign(out.in_positions.begin() + ib, out.in_positions.begin() + ie);
    cs.in_slots.assign(out.in_slots.begin() + ib, out.in_slots.begin() + ie);
    cs.out_ids.assign(out.out_ids.begin() + ob, out.out_ids.begin() + oe);
    cs.out_slots.assign(out.out_slots.begin() + ob, out.out_slots.begin() + oe);
    r.plan.num_misses += cs.num_misses;
    r.plan.changesets.push_back(std::move(cs));
  }
  r.plan.final_slots = std::move(out.final_slots);
  return r;
}

Plan CpuPlan(const std::vector<int64_t>& c0, const Batches& batches, const ScoreFn& score) {
  BeladyPlannerOptions options;
  options.device = PlannerDevice::kCpu;
  if (score) {
    options.node_scores = [score](const int64_t* ids, int64_t n, uint32_t* scores) {
      for (int64_t k = 0; k < n; ++k) scores[k] = score(ids[k]);
    };
  }
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

void ExpectSame(const Plan& want, const Plan& got, const std::string& label) {
  ASSERT_EQ(want.changesets.size(), got.changesets.size()) << label;
  for (size_t i = 0; i < want.changesets.size(); ++i) {
    ASSERT_TRUE(want.changesets[i] == got.changesets[i])
        << label << " iteration " << i << "\n want: " << Describe(want.changesets[i])
        << "\n got:  " << Describe(got.changesets[i]);
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

uint64_t Seed() {
  const uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

// ---- tests, once per backend ---------------------------------------------------------------

class BeladyThrustTest : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kCuda && kernels::CudaDeviceCount() == 0) {
      GTEST_SKIP() << "CUDA backend needs a device: " << kernels::DescribeDevice();
    }
  }
  // The Thrust plan must succeed and equal `want` byte for byte.
  void ExpectPlan(const Plan& want, const std::vector<int64_t>& c0, const Batches& batches,
                  const ScoreFn& score, const std::string& label) {
    ThrustResult got = RunThrust(GetParam(), c0, batches, score);
    ASSERT_EQ(got.code, kernels::GpuPlanCode::kOk) << label << ": " << got.message;
    ExpectSame(want, got.plan, label);
  }
};

// The acceptance test of the GPU planner: same output as the CPU planner on random traces.
TEST_P(BeladyThrustTest, MatchesCpuPlannerByteForByte) {
  std::mt19937_64 rng(Seed());
  for (int round = 0; round < 20; ++round) {
    const int64_t num_nodes = 1 + static_cast<int64_t>(rng() % 3000);
    const int num_batches = 1 + static_cast<int>(rng() % 120);
    const int max_size = static_cast<int>(std::min<int64_t>(num_nodes, 1 + rng() % 300));
    const Batches batches = RandomTrace(rng, num_batches, max_size, num_nodes, round % 2 == 1);
    const ScoreFn score = MakeScore(rng(), round % 3 == 0 ? 0u : 4u);
    std::set<int64_t> distinct;
    for (const auto& b : batches) distinct.insert(b.begin(), b.end());
    for (int64_t k : {int64_t{0}, int64_t{1}, static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes + 1)),
                      static_cast<int64_t>(distinct.size()) + 2}) {
      const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k);
      for (const auto& [name, c0] :
           {std::make_pair(std::string("cold"), EmptyCacheState(k)),
            std::make_pair(std::string("prefetched"), BeladyInitialFill(MakeIdSpans(batches), k)),
            std::make_pair(std::string("carried C0"), RandomInitialState(rng, k, num_nodes))}) {
        // No scores (the old rule), then scores with many ties.
        ExpectPlan(CpuPlan(c0, batches, nullptr), c0, batches, nullptr, label + " " + name);
        ExpectPlan(CpuPlan(c0, batches, score), c0, batches, score, label + " " + name + " scores");
        if (HasFatalFailure()) return;
      }
    }
  }
  ExpectPlan(CpuPlan(EmptyCacheState(3), {}, nullptr), EmptyCacheState(3), {}, nullptr, "no batches");
  ExpectPlan(CpuPlan({10, 11, 12}, {{10, 11, 12}, {11, 10, 20}, {20, 10, 11}}, nullptr), {10, 11, 12},
             {{10, 11, 12}, {11, 10, 20}, {20, 10, 11}}, nullptr, "single insert");
  ExpectPlan(CpuPlan(EmptyCacheState(4), {{}, {1, 2}, {}, {2, 3}}, nullptr), EmptyCacheState(4),
             {{}, {1, 2}, {}, {2, 3}}, nullptr, "empty batches");
}

// The tie rule with scores, against the oracle: many ties (range 3) and spread scores;
// cold, carried and over-sized caches.
TEST_P(BeladyThrustTest, MatchesOracleWithScores) {
  std::mt19937_64 rng(Seed());
  for (int round = 0; round < 40; ++round) {
    const int64_t num_nodes = 1 + static_cast<int64_t>(rng() % 60);
    const int num_batches = 1 + static_cast<int>(rng() % 12);
    const int max_size = static_cast<int>(std::min<int64_t>(num_nodes, 1 + rng() % 15));
    const Batches batches = RandomTrace(rng, num_batches, max_size, num_nodes, round % 2 == 1);
    std::set<int64_t> distinct;
    for (const auto& b : batches) distinct.insert(b.begin(), b.end());
    const ScoreFn score = MakeScore(rng(), round % 3 == 0 ? 0u : 3u);
    for (int64_t k : {int64_t{0}, int64_t{1}, static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes + 1)),
                      static_cast<int64_t>(distinct.size()) + 3}) {
      const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k);
      for (const auto& c0 : {EmptyCacheState(k), RandomInitialState(rng, k, num_nodes)}) {
        ExpectPlan(BruteForce(c0, batches, score), c0, batches, score, label);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// A score can only matter among nodes with no further use: with a full cache at the last
// batch, the high-score newcomer displaces the low-score cached node, and the equal-score
// one does not.
TEST_P(BeladyThrustTest, ScoreDecidesAmongNodesWithNoFurtherUse) {
  const Batches batches = {{1, 2}, {3}};
  const ScoreFn score = [](int64_t v) -> uint32_t { return v == 3 ? 5 : (v == 1 ? 5 : 0); };
  const Plan want = BruteForce(EmptyCacheState(2), batches, score);
  ASSERT_EQ(want.changesets[1].out_ids, std::vector<int64_t>{2});  // the oracle agrees
  ASSERT_EQ(want.changesets[1].in_ids, std::vector<int64_t>{3});
  ExpectPlan(want, EmptyCacheState(2), batches, score, "score 5 beats score 0");
  const Plan plain = BruteForce(EmptyCacheState(2), batches, nullptr);
  ASSERT_TRUE(plain.changesets[1].in_ids.empty());  // no scores: cached nodes stay
  ExpectPlan(plain, EmptyCacheState(2), batches, nullptr, "no scores");
}

// Node ids near 2^40 (and one near 2^62): no packing limit, same plans as the oracle.
TEST_P(BeladyThrustTest, LargeNodeIds) {
  std::mt19937_64 rng(Seed());
  for (int64_t offset : {(int64_t{1} << 40) - 50, (int64_t{1} << 62) + 12345}) {
    for (int round = 0; round < 10; ++round) {
      const int64_t num_nodes = 1 + static_cast<int64_t>(rng() % 100);
      const Batches batches = RandomTrace(rng, 1 + static_cast<int>(rng() % 10),
                                          static_cast<int>(std::min<int64_t>(num_nodes, 20)), num_nodes,
                                          round % 2 == 0, offset);
      const ScoreFn score = round % 2 == 0 ? nullptr : MakeScore(rng(), 4u);
      const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes + 1));
      const auto c0 = RandomInitialState(rng, k, num_nodes, offset);
      ExpectPlan(BruteForce(c0, batches, score), c0, batches, score,
                 "offset " + std::to_string(offset) + " round " + std::to_string(round));
      if (HasFatalFailure()) return;
    }
  }
}

// Superbatch after superbatch, C_S carried into the next one; the cached ids of the carried
// state keep their slots (the oracle's slot rule).
TEST_P(BeladyThrustTest, CarriesFinalStateAcrossSuperbatches) {
  std::mt19937_64 rng(Seed());
  const int64_t num_nodes = 400;
  const ScoreFn score = MakeScore(7, 5u);
  for (int64_t k : {int64_t{0}, int64_t{37}, int64_t{500}}) {
    std::vector<int64_t> want_state = EmptyCacheState(k), got_state = EmptyCacheState(k);
    for (int sb = 0; sb < 4; ++sb) {
      const Batches batches = RandomTrace(rng, 20, 60, num_nodes, sb % 2 == 0);
      const Plan want = BruteForce(want_state, batches, score);
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
  BeladyPlannerOptions cpu;
  cpu.device = PlannerDevice::kCpu;
  EXPECT_EQ(PlanBelady(EmptyCacheState(2), MakeIdSpans(batches), cpu).status().code(),
            StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Backends, BeladyThrustTest, testing::Values(Backend::kThrustHost, Backend::kCuda),
                         [](const testing::TestParamInfo<Backend>& info) { return BackendName(info.param); });

// ---- PlanBelady(kGpu): the planner's dispatch to the CUDA build --------------------------------

// Needs a device (CUDA-only behaviour: the dispatch picks the CUDA build).
TEST(BeladyGpuTest, PlanBeladyGpuMatchesCpuPlanner) {
  if (kernels::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << kernels::DescribeDevice();
  std::mt19937_64 rng(Seed());
  for (int round = 0; round < 10; ++round) {
    const int64_t num_nodes = 1 + static_cast<int64_t>(rng() % 5000);
    const Batches batches = RandomTrace(rng, 1 + static_cast<int>(rng() % 100), 300, num_nodes, true);
    const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes + 1));
    const ScoreFn score = round % 2 == 0 ? nullptr : MakeScore(rng(), 4u);
    BeladyPlannerOptions gpu;
    gpu.device = PlannerDevice::kGpu;
    if (score) {
      gpu.node_scores = [score](const int64_t* ids, int64_t n, uint32_t* scores) {
        for (int64_t k2 = 0; k2 < n; ++k2) scores[k2] = score(ids[k2]);
      };
    }
    const auto c0 = RandomInitialState(rng, k, num_nodes);
    auto plan = PlanBelady(c0, MakeIdSpans(batches), gpu);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->device_used, PlannerDevice::kGpu);
    Plan got;
    for (int64_t i = 0; i < plan->changesets.size(); ++i) got.changesets.push_back(*plan->changesets.Get(i));
    got.final_slots = plan->final_slots;
    got.num_misses = plan->num_misses;
    ExpectSame(CpuPlan(c0, batches, score), got, "round " + std::to_string(round));
  }
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
