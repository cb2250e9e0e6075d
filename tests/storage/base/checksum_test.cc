// Xxh64 (storage/base/checksum.h): XXH64 values must never change, because every
// dataset manifest stores them. The constants below were computed with the hand-written
// XXH64 Seer used before it moved to libxxhash (and agree with libxxhash), so a dataset
// written by any earlier version still passes `seer check --deep`.
#include "storage/base/checksum.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace seer {
namespace {

// 1 MiB of bytes from a fixed generator: std::mt19937_64 is fully specified by the C++
// standard, so this buffer is the same on every platform.
const std::vector<unsigned char>& RandomMiB() {
  static const std::vector<unsigned char> bytes = [] {
    std::mt19937_64 rng(20241122);
    std::vector<unsigned char> b(size_t{1} << 20);
    for (size_t i = 0; i < b.size(); i += 8) {
      const uint64_t v = rng();
      for (size_t k = 0; k < 8 && i + k < b.size(); ++k) {
        b[i + k] = static_cast<unsigned char>(v >> (8 * k));
      }
    }
    return b;
  }();
  return bytes;
}

TEST(Xxh64Test, MatchesPublishedVectors) {
  // The xxHash specification's sanity values.
  EXPECT_EQ(Xxh64::Hash("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(Xxh64::Hash("a", 1), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(Xxh64::Hash("abc", 3), 0x44BC2CF5AD770999ULL);
}

TEST(Xxh64Test, EveryLengthUpTo100MatchesFrozenValues) {
  // XXH64 of the first n bytes of RandomMiB(), seed 0, n = 0..100: covers the empty
  // input, the 1-, 4- and 8-byte tails and the 32-byte stripes.
  static const uint64_t kExpected[101] = {
    0xef46db3751d8e999ULL, 0x1c1bdb69d57a7dd6ULL, 0xc5ccdc52a170c0b7ULL,
    0xa93f0374ee2be300ULL, 0x33e5fb90b5b17aa8ULL, 0x17b44f82bd458272ULL,
    0x34e75ed51a95aae6ULL, 0xfeef2d4559bf8513ULL, 0xffdb61c81ee3b691ULL,
    0x8c388a4941cd9966ULL, 0xb357a74a6746173cULL, 0xf51372d26868bfa0ULL,
    0xabeb65460a2045d0ULL, 0x6172affa977b4392ULL, 0xa2750e164851bc7aULL,
    0xfe2534f60255f8d5ULL, 0xad80973ce880f68eULL, 0x9dc02316c924b1aeULL,
    0x378b21802f50c0e0ULL, 0x05fe00e7ff277e29ULL, 0xd18394f62405c458ULL,
    0x2d9c695c398f72abULL, 0x56347189a4d0d79cULL, 0xa6cddf44448039cbULL,
    0xf9770464b73af1e8ULL, 0x4f3f04bea36d106dULL, 0x78caf609e67a8ff9ULL,
    0x7c9f01a46b54e67cULL, 0x07116a29a1011e26ULL, 0xf6d03b3a6344fdb8ULL,
    0x9155abfc234ea9a3ULL, 0xc2d13e3eeb17138aULL, 0x41b7c277c658eefbULL,
    0xd379c5b507cfb5caULL, 0xff1ebf6765c23dfeULL, 0x4e48cb0808647addULL,
    0x8b174cf39ac68288ULL, 0x507b527d789b67a0ULL, 0xeee8d2b9aa2a7076ULL,
    0x07748a011f13bcb0ULL, 0x150a3219e649f9a7ULL, 0x4da98d81ea208f8bULL,
    0x78ad1a03ee30525cULL, 0x178d6b26807d27d8ULL, 0x800f98f0a30cea99ULL,
    0xcc918cf6350002a0ULL, 0x7193d6641fc5f541ULL, 0x0c53915f5a18e3e3ULL,
    0xd4214f27f08d9ce0ULL, 0xc751a4ea0bb28454ULL, 0x2b77146b5790b34fULL,
    0x9bf436557a1d565cULL, 0xfa27ec6fabc8bb57ULL, 0x24a4a71598d2d5d2ULL,
    0xe5b73c49f240f86eULL, 0x8db276bd15585eb8ULL, 0x1d15eb058ebb7a15ULL,
    0x3d35584ec11db2c8ULL, 0x01329f9686d2add2ULL, 0xf1a715c0d78372a4ULL,
    0x9ed087bcd44548c7ULL, 0xdd548d357c89794dULL, 0xf4bf5e9cf391138bULL,
    0xb71ea3630d572aaeULL, 0xde5f706461c1b2beULL, 0x529501d1d9eb8064ULL,
    0x47bf948cc1a06423ULL, 0xab084533bab5b528ULL, 0x669ee35bb0d9c2dbULL,
    0xecf7ad0950f3da69ULL, 0x60848405e44eea1eULL, 0x1b3f587edb1a7c33ULL,
    0x35ea9cf93bbe63e8ULL, 0xb6344c80b9df0fa8ULL, 0x16af2da500772883ULL,
    0x6910125f4c3b27e0ULL, 0xea2cc698fdff23dfULL, 0xaaace7b5df5cbe3dULL,
    0x1c319df82c2a8d59ULL, 0x051c3f830f7f2070ULL, 0xae0a7d90fc6e73edULL,
    0x0a683b0ce7111a75ULL, 0x193bc1526e6fb704ULL, 0x3d88c70ca8cd93a9ULL,
    0x2ca93e1c3a876071ULL, 0x39846e6550a822caULL, 0xd39bfb27daf6e62dULL,
    0xae2508ab720465b1ULL, 0x7a57ed204984355bULL, 0xd88a164eea24cc68ULL,
    0xb4066e9a3c363e49ULL, 0x3350ca95bfd75488ULL, 0x4021a9567d852220ULL,
    0x342f7fd4f8f24a79ULL, 0x24a15ac2697fba4bULL, 0x36690675a03a1d9fULL,
    0x183f30c7b37f2ed7ULL, 0x552f37fa7596a3f7ULL, 0xf3eb41e9d8e70a26ULL,
    0xa2d4cce3dc3966cfULL, 0x36c5084a9813f5bcULL,
  };
  for (size_t n = 0; n <= 100; ++n) {
    EXPECT_EQ(Xxh64::Hash(RandomMiB().data(), n), kExpected[n]) << "length " << n;
  }
}

TEST(Xxh64Test, LongOddLengthsAndNonzeroSeedMatchFrozenValues) {
  struct Case {
    size_t length;
    uint64_t seed0;
    uint64_t seed_golden;  // seed 0x9E3779B97F4A7C15
  };
  static const Case kCases[] = {
      {127, 0x17f5f520e36baca3ULL, 0x4d88ea3a0c2d367dULL},
      {255, 0x32ec579d3eb25c0bULL, 0xbd2f01b175ac42f1ULL},
      {1023, 0xcf89d30356afe5fbULL, 0x37ce899e213bf9aeULL},
      {4097, 0x84835cfc2fe65d21ULL, 0xd9da04f7fadaf7bbULL},
      {65537, 0xecdc589d2628662aULL, 0xa0cb3e9def9aed5fULL},
      {1048576, 0xfaf68724696f82cbULL, 0x8f7a0c607ae02225ULL},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(Xxh64::Hash(RandomMiB().data(), c.length), c.seed0) << "length " << c.length;
    EXPECT_EQ(Xxh64::Hash(RandomMiB().data(), c.length, 0x9E3779B97F4A7C15ULL), c.seed_golden)
        << "length " << c.length;
  }
}

TEST(Xxh64Test, StreamingInUnevenChunksMatchesFrozenValue) {
  const std::vector<unsigned char>& data = RandomMiB();
  const size_t kChunks[] = {1, 3, 7, 31, 33, 64, 5, 1000, 4093, 17};
  Xxh64 hash(42);
  size_t offset = 0;
  for (size_t k = 0; offset < data.size(); ++k) {
    const size_t chunk = std::min(kChunks[k % 10], data.size() - offset);
    hash.Update(data.data() + offset, chunk);
    offset += chunk;
  }
  EXPECT_EQ(hash.Digest(), 0x650e236b7a6baeaeULL);
  EXPECT_EQ(Xxh64::Hash(data.data(), data.size(), 42), 0x650e236b7a6baeaeULL);
}

TEST(Xxh64Test, StreamingEqualsOneShotForEverySplit) {
  std::mt19937_64 rng(12345);
  std::vector<unsigned char> data(1000);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  uint64_t whole = Xxh64::Hash(data.data(), data.size(), 99);
  for (size_t split : {0, 1, 7, 31, 32, 33, 64, 500, 999, 1000}) {
    Xxh64 h(99);
    h.Update(data.data(), split);
    h.Update(data.data() + split, data.size() - split);
    EXPECT_EQ(h.Digest(), whole) << "split " << split;
  }
  EXPECT_NE(Xxh64::Hash(data.data(), data.size(), 0), whole);
}

TEST(Xxh64Test, DigestCanBeTakenMidStreamAndHashMovesWithTheObject) {
  Xxh64 hash;
  hash.Update("ab", 2);
  EXPECT_EQ(hash.Digest(), Xxh64::Hash("ab", 2));
  Xxh64 moved = std::move(hash);
  moved.Update("c", 1);
  EXPECT_EQ(moved.Digest(), 0x44BC2CF5AD770999ULL);
}

TEST(Xxh64Test, ToHexIsSixteenLowercaseDigits) {
  EXPECT_EQ(Xxh64::ToHex(0xab), "00000000000000ab");
  EXPECT_EQ(Xxh64::ToHex(0xEF46DB3751D8E999ULL), "ef46db3751d8e999");
}

}  // namespace
}  // namespace seer
