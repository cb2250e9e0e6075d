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

TEST(BFloat16Test, KnownValuesAndSpecials) {
  EXPECT_EQ(FloatToBFloat16(0.0f), 0x0000);
  EXPECT_EQ(FloatToBFloat16(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBFloat16(-2.0f), 0xc000);
  EXPECT_EQ(FloatToBFloat16(0.1f), 0x3dcd);  // 0x3dcccccd rounds up
  EXPECT_EQ(FloatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even (down)
  EXPECT_EQ(FloatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie to even (up)
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(-std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(BFloat16ToFloat(0x4049), 3.140625f);
}

// Oracle: the nearest of the two bfloat16 neighbours of x (the float32 with the low 16
// bits cleared, and the next one up in magnitude), ties to the even one.
TEST(BFloat16Test, RandomFloatsRoundToTheNearestNeighbour) {
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    if (((bits >> 23) & 0xffu) == 0xffu) continue;  // inf/NaN
    float x;
    std::memcpy(&x, &bits, 4);
    const uint32_t low_bits = bits & 0xffff0000u, high_bits = low_bits + 0x10000u;
    float low, high;
    std::memcpy(&low, &low_bits, 4);
    std::memcpy(&high, &high_bits, 4);
    // Past the largest bfloat16 the upper neighbour is inf; round as if it were 2^128.
    const double high_value = std::isinf(high) ? std::copysign(std::ldexp(1.0, 128), x) : high;
    const double dl = std::fabs(static_cast<double>(x) - low), dh = std::fabs(high_value - x);
    const uint16_t expected = static_cast<uint16_t>(
        (dl < dh || (dl == dh && ((low_bits >> 16) & 1u) == 0)) ? low_bits >> 16 : high_bits >> 16);
    ASSERT_EQ(FloatToBFloat16(x), expected) << "x=" << x;
    if (!std::isinf(BFloat16ToFloat(expected)) && std::fabs(x) >= std::numeric_limits<float>::min()) {
      ASSERT_LE(std::fabs(BFloat16ToFloat(expected) - x), std::fabs(x) * std::ldexp(1.0, -8));
    }
  }
}

TEST(BFloat16Test, EveryBFloat16RoundTrips) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const float f = BFloat16ToFloat(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToBFloat16(f), b);
  }
}

}  // namespace
}  // namespace seer
