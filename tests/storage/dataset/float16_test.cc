#include "storage/dataset/float16.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

namespace seer {
namespace {

TEST(Float16Test, KnownValues) {
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // ties away from 65504 (odd) to inf
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie to even (0)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalf(0.1f), 0x2e66);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
}

TEST(Float16Test, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    float f = HalfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), bits) << "half 0x" << std::hex << bits;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's _Float16 conversion is an independent oracle (round to nearest even).
TEST(Float16Test, MatchesCompilerConversionOnRandomFloats) {
  const uint64_t seed = 12345;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t x = static_cast<uint32_t>(rng());
    // Bias toward the interesting exponent range (subnormal..overflow of half).
    if (i % 2 == 0) x = (x & 0x807fffffu) | ((100u + static_cast<uint32_t>(rng() % 45)) << 23);
    float f;
    std::memcpy(&f, &x, sizeof f);
    if (std::isnan(f)) continue;
    _Float16 h = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &h, sizeof expected);
    ASSERT_EQ(FloatToHalf(f), expected) << "float bits 0x" << std::hex << x;
  }
}
#endif

}  // namespace
}  // namespace seer
