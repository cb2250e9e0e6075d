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

// Link pairs on every other batch: k negatives per pair, or k shared ones.
void AddLinkPairs(SuperbatchTrace* t, int64_t k) {
  for (size_t b = 0; b < t->batches.size(); b += 2) {
    BatchTrace& batch = t->batches[b];
    LinkPairs& link = batch.link;
    const int32_t n = static_cast<int32_t>(batch.num_seeds);
    if (n == 0) continue;
    link.shared_negatives = b % 4 == 2;
    for (int32_t i = 0; i == 0 || i + 1 < n; i += 2) {  // at least one pair
      link.src.push_back(i % n);
      link.dst.push_back((i + 1) % n);
    }
    link.negatives_per_pair = k;
    const int64_t negatives = link.shared_negatives ? k : link.num_pairs() * k;
    for (int64_t j = 0; j < negatives; ++j) link.neg.push_back(static_cast<int32_t>((j * 7) % n));
  }
}

TEST(TraceFileTest, LinkPairsRoundTripAndBadPositionsAreRejected) {
  SuperbatchTrace t = testing::RandomTrace(11, 2, 3, 6);
  AddLinkPairs(&t, 3);
  ASSERT_FALSE(t.batches[0].link.empty());
  const std::string bytes = SerializeTrace(t);
  auto back = ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()), "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->batches.size(), t.batches.size());
  for (size_t b = 0; b < t.batches.size(); ++b) EXPECT_TRUE(back->batches[b] == t.batches[b]) << "batch " << b;
  EXPECT_TRUE(back->batches[2].link.shared_negatives);
  // A pair position past the seeds: refused with the path and an offset.
  std::string bad = bytes;
  const int64_t record0 = kTraceFileHeaderBytes;
  int64_t record0_bytes = 0;
  std::memcpy(&record0_bytes, bad.data() + record0, 8);
  const int32_t huge = 1 << 30;
  std::memcpy(&bad[static_cast<size_t>(record0 + record0_bytes - 8)], &huge, 4);
  auto r = ParseTrace(bad.data(), static_cast<int64_t>(bad.size()), "/x/link.sbt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/x/link.sbt"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("link pair position"), std::string::npos) << r.status().ToString();
}

TEST(TraceFileTest, VersionOneFilesAreRefusedByTheirVersion) {
  std::string bytes = SerializeTrace(testing::RandomTrace(3, 0, 0, 2));
  const int64_t one = 1;
  std::memcpy(&bytes[8], &one, 8);
  auto r = ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()), "/x/old.sbt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("version 1"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("sample it again"), std::string::npos) << r.status().ToString();
}

TEST(TraceFileTest, LayoutIsReadableWithoutSeer) {
  // Walks the raw little-endian words exactly as docs/formats.md tells a numpy user.
  SuperbatchTrace t = testing::RandomTrace(9, 1, 2, 4);
  AddLinkPairs(&t, 2);
  const std::string dir = testing::MakeTempDir("layout");
  const std::string path = dir + "/x.sbt";
  ASSERT_TRUE(WriteTraceFile(path, t).ok());
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(raw.size() % 8, 0u);
  std::vector<int64_t> w(raw.size() / 8);
  std::memcpy(w.data(), raw.data(), raw.size());
  EXPECT_EQ(std::string(raw.data(), 8), "SEERSBT1");
  EXPECT_EQ(w[1], 2);
  EXPECT_EQ(w[2], 1);
  EXPECT_EQ(w[3], 2);
  ASSERT_EQ(w[4], 4);
  EXPECT_EQ(w[5], static_cast<int64_t>(raw.size()));
  size_t pos = 8;
  for (int64_t b = 0; b < w[4]; ++b) {
    const int64_t record_words = w[pos] / 8, num_seeds = w[pos + 3], num_nodes = w[pos + 4],
                  layers = w[pos + 5], num_pairs = w[pos + 6], k = w[pos + 7], shared = w[pos + 8];
    const BatchTrace& want = t.batches[b];
    EXPECT_EQ(w[pos + 2], want.batch_index);
    EXPECT_EQ(num_seeds, want.num_seeds);
    ASSERT_EQ(layers, 3);
    EXPECT_EQ(num_pairs, want.link.num_pairs());
    EXPECT_EQ(shared, want.link.shared_negatives ? 1 : 0);
    const size_t header = 9;
    const std::vector<int64_t> ids(w.begin() + pos + header + 3 * layers,
                                   w.begin() + pos + header + 3 * layers + num_nodes);
    EXPECT_EQ(ids, want.node_ids);
    // The first layer's row_ptr follows the node ids.
    const int64_t num_dst0 = w[pos + header];
    EXPECT_EQ(num_dst0, want.blocks[0].num_dst);
    const size_t rp = pos + header + 3 * layers + num_nodes;
    EXPECT_EQ(std::vector<int64_t>(w.begin() + rp, w.begin() + rp + num_dst0 + 1), want.blocks[0].row_ptr);
    if (num_pairs > 0) {
      // The link section closes the record: int32 src, dst, neg, zero-padded to 8 bytes.
      const int64_t negatives = shared ? k : num_pairs * k;
      const int64_t link_bytes = 4 * (2 * num_pairs + negatives);
      const size_t link_at = 8 * (pos + record_words) - static_cast<size_t>((link_bytes + 7) / 8 * 8);
      std::vector<int32_t> words(static_cast<size_t>(2 * num_pairs + negatives));
      std::memcpy(words.data(), raw.data() + link_at, static_cast<size_t>(link_bytes));
      EXPECT_EQ(std::vector<int32_t>(words.begin(), words.begin() + num_pairs), want.link.src);
      EXPECT_EQ(std::vector<int32_t>(words.begin() + num_pairs, words.begin() + 2 * num_pairs), want.link.dst);
      EXPECT_EQ(std::vector<int32_t>(words.begin() + 2 * num_pairs, words.end()), want.link.neg);
    }
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
