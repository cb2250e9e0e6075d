// GPU planner vs CPU planner: byte-identical changesets and final states on the same
// traces (the CPU planner is itself checked against a brute-force oracle in
// tests/cache/belady_planner_test.cc). Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "kernels/device.h"

namespace seer {
namespace {

using Batches = std::vector<std::vector<int64_t>>;

Batches RandomTrace(std::mt19937_64& rng, int num_batches, int max_size, int64_t num_nodes, bool skewed) {
  Batches batches(num_batches);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& b : batches) {
    const int size = static_cast<int>(rng() % (max_size + 1));
    std::set<int64_t> seen;
    for (int t = 0; t < size * 3 && static_cast<int>(seen.size()) < size; ++t) {
      int64_t v = skewed ? std::min<int64_t>(num_nodes - 1, static_cast<int64_t>(num_nodes * std::pow(u(rng), 3.0)))
                         : static_cast<int64_t>(rng() % num_nodes);
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  return batches;
}

void ExpectSamePlans(const std::vector<int64_t>& c0, const Batches& batches, const std::string& label) {
  BeladyPlannerOptions cpu, gpu;
  cpu.device = PlannerDevice::kCpu;
  gpu.device = PlannerDevice::kGpu;
  auto a = PlanBelady(c0, MakeIdSpans(batches), cpu);
  auto b = PlanBelady(c0, MakeIdSpans(batches), gpu);
  ASSERT_TRUE(a.ok()) << label << ": " << a.status().ToString();
  ASSERT_TRUE(b.ok()) << label << ": " << b.status().ToString();
  EXPECT_EQ(b->device_used, PlannerDevice::kGpu);
  ASSERT_EQ(a->changesets.size(), b->changesets.size()) << label;
  for (int64_t i = 0; i < a->changesets.size(); ++i) {
    auto x = a->changesets.Get(i);
    auto y = b->changesets.Get(i);
    ASSERT_TRUE(x.ok() && y.ok());
    ASSERT_TRUE(*x == *y) << label << " iteration " << i << ": cpu misses " << x->num_misses
                          << " in " << x->in_ids.size() << " out " << x->out_ids.size()
                          << "; gpu misses " << y->num_misses << " in " << y->in_ids.size()
                          << " out " << y->out_ids.size();
  }
  EXPECT_EQ(a->final_slots, b->final_slots) << label;
  EXPECT_EQ(a->num_misses, b->num_misses) << label;
}

TEST(BeladyGpuTest, MatchesCpuPlannerByteForByte) {
  if (kernels::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << kernels::DescribeDevice();
  const uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 40; ++round) {
    const int64_t num_nodes = 1 + static_cast<int64_t>(rng() % 5000);
    const int num_batches = 1 + static_cast<int>(rng() % 200);
    const int max_size = static_cast<int>(std::min<int64_t>(num_nodes, 1 + rng() % 400));
    Batches batches = RandomTrace(rng, num_batches, max_size, num_nodes, round % 2 == 1);
    std::set<int64_t> distinct;
    for (auto& b : batches) distinct.insert(b.begin(), b.end());
    for (int64_t k : {int64_t{0}, int64_t{1}, static_cast<int64_t>(rng() % (num_nodes + 1)),
                      static_cast<int64_t>(distinct.size()) + 2}) {
      const std::string label = "round " + std::to_string(round) + " K " + std::to_string(k);
      ExpectSamePlans(EmptyCacheState(k), batches, label + " cold");
      ExpectSamePlans(BeladyInitialFill(MakeIdSpans(batches), k), batches, label + " prefetched");
      if (HasFatalFailure()) return;
    }
  }
  ExpectSamePlans(EmptyCacheState(3), {}, "no batches");
  ExpectSamePlans({10, 11, 12}, {{10, 11, 12}, {11, 10, 20}, {20, 10, 11}}, "single insert");
  ExpectSamePlans(EmptyCacheState(4), {{}, {1, 2}, {}, {2, 3}}, "empty batches");
}

TEST(BeladyGpuTest, GpuRejectsDuplicatesLikeCpu) {
  if (kernels::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  BeladyPlannerOptions gpu;
  gpu.device = PlannerDevice::kGpu;
  auto plan = PlanBelady(EmptyCacheState(2), MakeIdSpans({{1, 2}, {3, 4, 3}}), gpu);
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace seer
