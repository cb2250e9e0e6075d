// ComputeOutDegrees against a brute-force count over hand-made graphs.
#include "cache/degrees.h"

#include <cmath>
#include <limits>
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


// The streaming Belady pass (out-degrees counted range by range) against its definition:
// RankNodesByScore over ComputeOutDegrees and DegreeBucket of every node.
TEST(DegreesTest, StreamingBeladyScoresEqualTheInRamDefinition) {
  // Node v's in-neighbors are 0 .. v % 50: out-degrees from 200 (node 0) down to 0 (nodes
  // >= 50), many >= 32 (exact ranking kept aside) and many ties.
  std::vector<std::vector<int64_t>> lists(200);
  for (int64_t v = 0; v < 200; ++v) {
    for (int64_t u = 0; u <= v % 50; ++u) {
      if (u != v) lists[static_cast<size_t>(v)].push_back(u);
    }
  }
  const std::string dir = testing::MakeTempDir("degrees");
  testing::WriteGraph(dir, lists, {0});
  const Dataset ds = testing::OpenWrittenDataset(dir);
  auto degrees = ComputeOutDegrees(ds);
  ASSERT_TRUE(degrees.ok()) << degrees.status().ToString();
  std::vector<int64_t> ids(200);
  for (int64_t v = 0; v < 200; ++v) ids[static_cast<size_t>(v)] = v;
  for (int64_t scan_memory : {int64_t{4} * 7, int64_t{4} * 64, int64_t{1} << 20}) {
    for (int64_t rows : {0, 10, 45, 60, 199, 200, 1000}) {
      DegreeScanOptions scan;
      scan.scan_memory_bytes = scan_memory;
      scan.chunk_bytes = 40;
      PolicyOptions got;
      ASSERT_TRUE(MakeBeladyNodeScores(ds, rows, &got, scan).ok());
      EXPECT_EQ(got.ranking, RankNodesByScore(*degrees, rows)) << "rows " << rows << ", scan " << scan_memory;
      // Ranked ranges (a typed cache by bytes ranks only nodes that own cache units): the
      // definition over the other nodes' degrees set below every real one.
      scan.ranked_ranges = {{3, 40}, {40, 77}, {150, 180}};
      PolicyOptions ranged;
      ASSERT_TRUE(MakeBeladyNodeScores(ds, rows, &ranged, scan).ok());
      std::vector<int64_t> only = *degrees;
      for (int64_t v = 0; v < 200; ++v) {
        if (!((v >= 3 && v < 77) || (v >= 150 && v < 180))) only[static_cast<size_t>(v)] = -1;
      }
      std::vector<int64_t> want = RankNodesByScore(only, std::min<int64_t>(rows, 104));
      EXPECT_EQ(ranged.ranking, want) << "rows " << rows << ", ranged";
      std::vector<uint32_t> scores(200);
      got.planner.node_scores(ids.data(), 200, scores.data());
      for (int64_t v = 0; v < 200; ++v) {
        ASSERT_EQ(scores[static_cast<size_t>(v)], DegreeBucket((*degrees)[static_cast<size_t>(v)])) << "node " << v;
      }
    }
  }
}

// The tie rule's one-byte buckets: exact below 32, non-decreasing, each bucket a contiguous
// degree range of at most a quarter octave (oracle: the definition by floating point log2).
TEST(DegreesTest, DegreeBucketsAreExactBelow32AndQuarterOctavesAbove) {
  for (int64_t d = 0; d < 32; ++d) EXPECT_EQ(DegreeBucket(d), d);
  EXPECT_EQ(DegreeBucket(-5), 0);
  int prev = 0;
  for (int64_t d = 1; d < (int64_t{1} << 20); d += 1 + d / 1000) {
    const int b = DegreeBucket(d);
    EXPECT_GE(b, prev) << d;
    prev = b;
    if (d >= 32) {
      const double octave = std::floor(std::log2(static_cast<double>(d)));
      const double quarter = std::floor(4 * (static_cast<double>(d) / std::exp2(octave) - 1));
      EXPECT_EQ(b, 32 + 4 * (octave - 5) + quarter) << d;
    }
  }
  EXPECT_EQ(DegreeBucket(32), 32);
  EXPECT_EQ(DegreeBucket(39), 32);
  EXPECT_EQ(DegreeBucket(40), 33);
  EXPECT_EQ(DegreeBucket(64), 36);
  EXPECT_EQ(DegreeBucket(int64_t{1} << 40), 32 + 4 * 35);
  EXPECT_EQ(DegreeBucket(std::numeric_limits<int64_t>::max()), 255);
  // Scores from the table, 0 beyond it.
  const NodeScoreFn scores = NodeScoresFromBuckets({DegreeBucket(3), DegreeBucket(100), 0});
  const int64_t ids[] = {1, 0, 2, 7};
  uint32_t out[4];
  scores(ids, 4, out);
  EXPECT_EQ(out[0], DegreeBucket(100));
  EXPECT_EQ(out[1], 3u);
  EXPECT_EQ(out[2], 0u);
  EXPECT_EQ(out[3], 0u);
}

}  // namespace
}  // namespace seer
