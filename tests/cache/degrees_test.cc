// ComputeOutDegrees against a brute-force count over hand-made graphs.
#include "cache/degrees.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/graph_writer.h"

namespace seer {
namespace {

TEST(DegreesTest, OutDegreesMatchBruteForce) {
  for (IndexDtype dtype : {IndexDtype::kUint32, IndexDtype::kInt64}) {
    const testing::RandomGraph g = testing::WriteRandomGraph(31, 1777, dtype);
    std::vector<int64_t> want(1777, 0);
    for (const auto& l : g.lists) for (int64_t u : l) ++want[u];
    DegreeScanOptions small_chunks;
    small_chunks.chunk_bytes = 4104;  // not a power of two: entries still never straddle
    for (const DegreeScanOptions& o : {DegreeScanOptions{}, small_chunks}) {
      auto got = ComputeOutDegrees(g.dataset, o);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(*got, want);
    }
  }
}

TEST(DegreesTest, NeighborIdOutsideTheGraphIsCorruptWithItsOffset) {
  // Node 0's in-neighbors are 1..5, the fourth (uint32 element 3, byte 12) replaced by 1000.
  std::vector<std::vector<int64_t>> lists(6);
  for (int64_t u = 1; u <= 5; ++u) lists[0].push_back(u);
  lists[0][3] = 1000;
  const std::string dir = testing::MakeTempDir("degrees");
  testing::WriteGraph(dir, lists, {0});
  auto got = ComputeOutDegrees(testing::OpenWrittenDataset(dir));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCorrupt);
  const std::string& message = got.status().message();
  EXPECT_NE(message.find(dir + "/indices.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("neighbor id 1000 at byte offset 12"), std::string::npos) << message;
}

}  // namespace
}  // namespace seer
