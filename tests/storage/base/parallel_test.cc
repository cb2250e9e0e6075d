#include "storage/base/parallel.h"

#include <atomic>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace seer {
namespace {

// Every index is visited exactly once, by both forms, and what the bodies wrote is
// visible to the caller afterwards (under ThreadSanitizer this test also checks that the
// annotations leave no report for a race-free loop: tools/test.sh --tsan).
TEST(ParallelForTest, RangeFormVisitsEveryIndexOnceAndPublishesTheWrites) {
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    std::vector<int64_t> out(static_cast<size_t>(n), -1);
    std::vector<int64_t> in(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) in[static_cast<size_t>(i)] = 3 * i + 1;  // written before
    std::atomic<int64_t> visits{0};
    ParallelFor(tbb::blocked_range<int64_t>(0, n, 16), [&](const tbb::blocked_range<int64_t>& r) {
      for (int64_t i = r.begin(); i < r.end(); ++i) out[static_cast<size_t>(i)] = in[static_cast<size_t>(i)] * 2;
      visits.fetch_add(r.end() - r.begin());
    });
    EXPECT_EQ(visits.load(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], (3 * i + 1) * 2) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelForTest, IndexFormVisitsEveryIndexOnce) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{64}, size_t{5000}}) {
    std::vector<int> hits(n, 0);
    ParallelFor(size_t{0}, n, [&](size_t i) { ++hits[i]; });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "n=" << n << " i=" << i;
  }
  std::vector<int64_t> squares(10);
  ParallelFor(int64_t{3}, int64_t{10}, [&](int64_t i) { squares[static_cast<size_t>(i)] = i * i; });
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(squares[static_cast<size_t>(i)], i < 3 ? 0 : i * i);
}

}  // namespace
}  // namespace seer
