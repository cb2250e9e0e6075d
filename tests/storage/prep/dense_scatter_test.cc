// DenseScatter (storage/prep/dense_scatter.h) against a plain array: a random
// permutation's inverse, in memory and through range buckets, unset slots, and the
// bucket files gone afterwards.
#include "storage/prep/dense_scatter.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace seer {
namespace {

std::vector<int64_t> Scatter(const std::vector<std::pair<int64_t, int64_t>>& sets, int64_t count, int64_t memory,
                             const std::string& dir, int64_t* buckets) {
  auto scatter = DenseScatter::Create(dir, "s", count, memory);
  EXPECT_TRUE(scatter.ok()) << scatter.status().ToString();
  if (!scatter.ok()) return {};
  *buckets = scatter->num_buckets();
  for (const auto& [index, value] : sets) EXPECT_TRUE(scatter->Set(index, value).ok());
  {
    auto out = SequentialWriter::Create(dir + "/out.bin");
    EXPECT_TRUE(out.ok());
    EXPECT_TRUE(scatter->WriteTo(*out).ok());
    EXPECT_TRUE(out->Close().ok());
  }
  auto values = testing::ReadArray<int64_t>(dir + "/out.bin");
  std::filesystem::remove(dir + "/out.bin");
  return values;
}

TEST(DenseScatterTest, InvertsAPermutationInMemoryAndInBuckets) {
  const int64_t n = 100000;
  std::mt19937_64 rng(4);
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<std::pair<int64_t, int64_t>> sets;
  std::vector<int64_t> expected(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    if (i % 10 == 3) continue;  // some slots never set
    sets.emplace_back(perm[i], i);
    expected[perm[i]] = i;
  }
  const std::string dir = testing::MakeTempDir("dense_scatter");
  int64_t buckets = 0;
  EXPECT_EQ(Scatter(sets, n, 8 * n, dir, &buckets), expected);
  EXPECT_EQ(buckets, 0);
  // 512 KiB: ranges of 32768 slots, four buckets.
  EXPECT_EQ(Scatter(sets, n, 512 << 10, dir, &buckets), expected);
  EXPECT_EQ(buckets, 4);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_FALSE(DenseScatter::Create(dir, "s", n, 8 * n).value().Set(n, 0).ok());
  // Too many buckets for the memory: refused, naming the budget.
  auto refused = DenseScatter::Create(dir, "s", int64_t{1} << 30, 1 << 20);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("raise --memory-budget"), std::string::npos);
}

}  // namespace
}  // namespace seer
