// Seeds for randomized tests: a fresh one per run, printed ("seed N") so that a failing
// run can be replayed with it. RandomTestSeed also names it in every failure message of
// its scope (a gtest ScopedTrace) and seeds an engine with it:
//   testing::RandomTestSeed seed;  // then seed.rng, seed.value
// Header-only; one object per test body (the trace stack is gtest's, per thread).
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace seer::testing {

inline uint64_t PrintedRandomSeed() {
  const uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

class RandomTestSeed {
 public:
  RandomTestSeed() : value(PrintedRandomSeed()), rng(value), trace_(__FILE__, __LINE__, "seed " + std::to_string(value)) {}
  RandomTestSeed(const RandomTestSeed&) = delete;
  RandomTestSeed& operator=(const RandomTestSeed&) = delete;

  const uint64_t value;
  std::mt19937_64 rng;

 private:
  ::testing::ScopedTrace trace_;
};

}  // namespace seer::testing
