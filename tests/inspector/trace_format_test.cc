// The .sbt trace format (inspector/trace_format.h): whole superbatches round-trip
// through bytes and files, the raw layout is what docs/formats.md describes, and corrupt
// bytes are refused naming the file and the byte offset.
#include "inspector/trace_format.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "random_trace.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

TEST(TraceFileTest, RoundTripsThroughBytes) {
  for (uint64_t seed : {1, 2, 3}) {
    const SuperbatchTrace t = testing::RandomTrace(seed, 3, 7, 5);
    const std::string bytes = SerializeTrace(t);
    EXPECT_EQ(static_cast<int64_t>(bytes.size()), SerializedTraceBytes(t));
    EXPECT_EQ(bytes.size() % 8, 0u);
    auto back = ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()), "mem");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(testing::Same(*back, t)) << "seed " << seed;
  }
  SuperbatchTrace empty;
  const std::string bytes = SerializeTrace(empty);
  EXPECT_EQ(bytes.size(), 64u);
  ASSERT_TRUE(ParseTrace(bytes.data(), 64, "mem").ok());
}

TEST(TraceFileTest, LayoutIsReadableWithoutSeer) {
  // Walks the raw little-endian words exactly as docs/formats.md tells a numpy user.
  const SuperbatchTrace t = testing::RandomTrace(9, 1, 2, 4);
  const std::string dir = testing::MakeTempDir("layout");
  const std::string path = dir + "/x.sbt";
  ASSERT_TRUE(WriteTraceFile(path, t).ok());
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(raw.size() % 8, 0u);
  std::vector<int64_t> w(raw.size() / 8);
  std::memcpy(w.data(), raw.data(), raw.size());
  EXPECT_EQ(std::string(raw.data(), 8), "SEERSBT1");
  EXPECT_EQ(w[1], 1);
  EXPECT_EQ(w[2], 1);
  EXPECT_EQ(w[3], 2);
  ASSERT_EQ(w[4], 4);
  EXPECT_EQ(w[5], static_cast<int64_t>(raw.size()));
  size_t pos = 8;
  for (int64_t b = 0; b < w[4]; ++b) {
    const int64_t record_words = w[pos] / 8, num_seeds = w[pos + 3], num_nodes = w[pos + 4],
                  layers = w[pos + 5];
    EXPECT_EQ(w[pos + 2], t.batches[b].batch_index);
    EXPECT_EQ(num_seeds, t.batches[b].num_seeds);
    ASSERT_EQ(layers, 3);
    const std::vector<int64_t> ids(w.begin() + pos + 6 + 3 * layers,
                                   w.begin() + pos + 6 + 3 * layers + num_nodes);
    EXPECT_EQ(ids, t.batches[b].node_ids);
    // The first layer's row_ptr follows the node ids.
    const int64_t num_dst0 = w[pos + 6];
    EXPECT_EQ(num_dst0, t.batches[b].blocks[0].num_dst);
    const size_t rp = pos + 6 + 3 * layers + num_nodes;
    EXPECT_EQ(std::vector<int64_t>(w.begin() + rp, w.begin() + rp + num_dst0 + 1),
              t.batches[b].blocks[0].row_ptr);
    pos += record_words;
  }
  EXPECT_EQ(pos, w.size());
}

TEST(TraceFileTest, CorruptFilesAreRejectedWithPathAndOffset) {
  const SuperbatchTrace t = testing::RandomTrace(4, 0, 0, 3);
  std::string bytes = SerializeTrace(t);
  auto truncated = ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()) - 8, "/x/t.sbt");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(truncated.status().message().find("/x/t.sbt"), std::string::npos);
  EXPECT_NE(truncated.status().message().find("offset"), std::string::npos);
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_FALSE(ParseTrace(bad_magic.data(), static_cast<int64_t>(bad_magic.size()), "m").ok());
  // A col_idx entry pointing past num_src.
  std::string bad_col = bytes;
  int32_t huge = 1 << 30;
  std::memcpy(&bad_col[bad_col.size() - 8], &huge, 4);
  auto r = ParseTrace(bad_col.data(), static_cast<int64_t>(bad_col.size()), "m");
  if (t.batches.back().blocks.back().col_idx.empty()) GTEST_SKIP() << "no edges in last layer";
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(ReadTraceFile("/nonexistent/seer.sbt").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace seer
