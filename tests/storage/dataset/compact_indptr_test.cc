// CompactIndptr (storage/dataset/compact_indptr.h): every entry equals the plain int64 array
// it was built from (the oracle), including offsets >= 2^32, blocks whose span exceeds 2^32
// (the wide fallback), partial last blocks, and the streaming load from a file.
#include "storage/dataset/compact_indptr.h"

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/atomic_file.h"
#include "support/test_support.h"

namespace seer {
namespace {

// Non-decreasing values from 0 with random gaps; `big_every` > 0 adds a gap of `big_gap`
// every that many entries.
std::vector<int64_t> RandomIndptr(int64_t count, uint32_t seed, int64_t big_every = 0,
                                  int64_t big_gap = 0) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> v(static_cast<size_t>(count));
  int64_t at = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0) {
      at += static_cast<int64_t>(rng() % 7);
      if (big_every > 0 && i % big_every == 0) at += big_gap;
    }
    v[static_cast<size_t>(i)] = at;
  }
  return v;
}

void ExpectSame(const std::vector<int64_t>& want, const CompactIndptr& got) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[static_cast<int64_t>(i)], want[i]) << "entry " << i;
  }
  EXPECT_EQ(got.ToVector(), want);
}

TEST(CompactIndptrTest, SmallArraysOfEverySizeAroundABlock) {
  for (int64_t count : {1, 2, 63, 64, 65, 127, 128, 129, 1000}) {
    std::vector<int64_t> want = RandomIndptr(count, static_cast<uint32_t>(count));
    auto got = CompactIndptr::FromVector(want);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ExpectSame(want, *got);
    EXPECT_EQ(got->num_nodes(), count - 1);
    EXPECT_EQ(got->wide_blocks(), 0);
    if (count > 1) {
      EXPECT_EQ(got->Degree(count - 2), want.back() - want[want.size() - 2]);
    }
  }
}

TEST(CompactIndptrTest, OffsetsBeyondTwoToThe32AreExact) {
  // Gaps of 2^31 every 100 entries: values pass 2^32, 2^40, ... but no 64-entry block spans
  // 2^32, so every block stays narrow.
  std::vector<int64_t> want = RandomIndptr(20000, 7, 100, int64_t{1} << 31);
  ASSERT_GT(want.back(), int64_t{1} << 35);
  auto got = CompactIndptr::FromVector(want);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSame(want, *got);
  EXPECT_EQ(got->wide_blocks(), 0);
  EXPECT_LE(got->ResidentBytes(), CompactIndptr::EstimateBytes(20000) + 64);
  EXPECT_LT(got->ResidentBytes(), 20000 * 8 * 55 / 100);  // ~4.1 of 8 bytes per entry
}

TEST(CompactIndptrTest, BlockSpanningMoreThanTwoToThe32IsStoredWide) {
  // One node of in-degree 5e9 in block 1, another at the last (partial) block's end.
  std::vector<int64_t> want = RandomIndptr(300, 3);
  const int64_t huge = int64_t{5} << 30;
  for (size_t i = 70; i < want.size(); ++i) want[i] += huge;
  for (size_t i = 299; i < want.size(); ++i) want[i] += huge;
  auto got = CompactIndptr::FromVector(want);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSame(want, *got);
  EXPECT_EQ(got->wide_blocks(), 2);  // block 1 (entries 64..127) and block 4 (256..299)
  EXPECT_EQ(got->Degree(69), huge + (want[70] - huge - want[69]));
}

TEST(CompactIndptrTest, RejectsBadStartDecreaseAndWrongEnd) {
  EXPECT_EQ(CompactIndptr::FromVector({1, 2}).status().code(), StatusCode::kCorrupt);
  auto dec = CompactIndptr::FromVector({0, 5, 4}, "x/indptr.bin");
  ASSERT_FALSE(dec.ok());
  EXPECT_NE(dec.status().message().find("x/indptr.bin"), std::string::npos);
  EXPECT_NE(dec.status().message().find("entry 2"), std::string::npos);
  auto empty = CompactIndptr::FromVector({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(CompactIndptrTest, LoadFileStreamsAndChecksTheEnd) {
  const std::string dir = testing::MakeTempDir("compact_indptr");
  const std::string path = dir + "/indptr.bin";
  // More than one 1 MiB read chunk, with offsets beyond 2^32 and one wide block.
  std::vector<int64_t> want = RandomIndptr((1 << 17) * 2 + 77, 11, 1000, int64_t{3} << 30);
  for (size_t i = 200001; i < want.size(); ++i) want[i] += int64_t{1} << 33;  // mid-block
  {
    auto w = AtomicFileWriter::Create(path);
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_TRUE(w->AppendValues(want.data(), static_cast<int64_t>(want.size())).ok());
    ASSERT_TRUE(w->Close().ok());
  }
  const int64_t count = static_cast<int64_t>(want.size());
  auto got = CompactIndptr::LoadFile(path, count, want.back());
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSame(want, *got);
  EXPECT_EQ(got->wide_blocks(), 1);

  auto wrong_end = CompactIndptr::LoadFile(path, count, want.back() + 1);
  ASSERT_FALSE(wrong_end.ok());
  EXPECT_EQ(wrong_end.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(wrong_end.status().message().find("num_edges"), std::string::npos);
  auto too_short = CompactIndptr::LoadFile(path, count + 1, -1);
  EXPECT_EQ(too_short.status().code(), StatusCode::kUnexpectedEof);
}


TEST(CompactIndptrTest, ImplicitFromAVectorForTestsAndSmallGraphs) {
  const std::vector<int64_t> plain = {0, 2, 2, 5};
  const CompactIndptr c = plain;
  EXPECT_EQ(c.ToVector(), plain);
  EXPECT_THROW(CompactIndptr(std::vector<int64_t>{0, 3, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace seer
