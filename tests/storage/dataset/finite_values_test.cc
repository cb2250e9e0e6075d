// storage/dataset/finite_values.h: the overflow limits agree with the converters (every
// float just below the limit stays finite, the limit itself becomes inf), and the scans
// find the first NaN/inf/too-large value wherever it is, in float32, float16 and
// bfloat16 bit patterns.
#include "storage/dataset/finite_values.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "storage/dataset/float16.h"

namespace seer {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Oracle: the converter's own result, bit by bit.
bool StoredIsInf(float x, FeatureDtype dtype) {
  if (dtype == FeatureDtype::kFloat16) return std::isinf(HalfToFloat(FloatToHalf(x)));
  if (dtype == FeatureDtype::kBFloat16) return std::isinf(BFloat16ToFloat(FloatToBFloat16(x)));
  return std::isinf(x);
}

TEST(FiniteValuesTest, OverflowLimitsMatchTheConverters) {
  for (FeatureDtype dtype : {FeatureDtype::kFloat16, FeatureDtype::kBFloat16}) {
    SCOPED_TRACE(FeatureDtypeName(dtype));
    const float limit = StoredOverflowLimit(dtype);
    const float below = std::nextafter(limit, 0.0f);
    EXPECT_TRUE(StoredIsInf(limit, dtype));
    EXPECT_TRUE(StoredIsInf(-limit, dtype));
    EXPECT_FALSE(StoredIsInf(below, dtype));
    EXPECT_FALSE(StoredIsInf(-below, dtype));
    EXPECT_EQ(static_cast<double>(dtype == FeatureDtype::kFloat16 ? HalfToFloat(FloatToHalf(below))
                                                                  : BFloat16ToFloat(FloatToBFloat16(below))),
              LargestFinite(dtype));
  }
  EXPECT_EQ(StoredOverflowLimit(FeatureDtype::kFloat32), kInf);
  EXPECT_EQ(LargestFinite(FeatureDtype::kFloat16), 65504.0);
  // Random floats around the limits: the scan's verdict equals the converter's.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> near16(60000.0f, 70000.0f), near_b16(3.3e38f, 3.4028e38f);
  for (int i = 0; i < 20000; ++i) {
    const float a = near16(rng), b = near_b16(rng);
    ASSERT_EQ(FirstNotBelow(&a, 1, StoredOverflowLimit(FeatureDtype::kFloat16)) == 0,
              StoredIsInf(a, FeatureDtype::kFloat16)) << a;
    ASSERT_EQ(FirstNotBelow(&b, 1, StoredOverflowLimit(FeatureDtype::kBFloat16)) == 0,
              StoredIsInf(b, FeatureDtype::kBFloat16)) << b;
  }
}

TEST(FiniteValuesTest, ScansFindTheFirstBadValueAnywhere) {
  const int64_t n = 1000;  // several blocks and a partial one
  for (int64_t at : {int64_t{0}, int64_t{1}, int64_t{255}, int64_t{256}, int64_t{700}, n - 1}) {
    for (float bad : {kNan, kInf, -kInf, 70000.0f}) {
      SCOPED_TRACE(::testing::Message() << "at " << at << " value " << bad);
      std::vector<float> v(n, 1.5f);
      v[at] = bad;
      if (at + 3 < n) v[at + 3] = kNan;  // a later one is not reported
      const bool finite = std::isfinite(bad);
      EXPECT_EQ(FirstNotBelow(v.data(), n, kInf), finite ? (at + 3 < n ? at + 3 : -1) : at);
      EXPECT_EQ(FirstNotBelow(v.data(), n, StoredOverflowLimit(FeatureDtype::kFloat16)), at);
      EXPECT_EQ(CountNotBelow(v.data(), n, StoredOverflowLimit(FeatureDtype::kFloat16)), at + 3 < n ? 2 : 1);
      // Stored bit patterns.
      EXPECT_EQ(FirstNonFiniteStored(v.data(), FeatureDtype::kFloat32, n), FirstNotBelow(v.data(), n, kInf));
      std::vector<uint16_t> half(n), bf(n);
      for (int64_t i = 0; i < n; ++i) {
        half[i] = FloatToHalf(v[i]);
        bf[i] = FloatToBFloat16(v[i]);
      }
      EXPECT_EQ(FirstNonFiniteHalf(half.data(), n), at);  // 70000 is inf as float16
      EXPECT_EQ(CountNonFiniteHalf(half.data(), n), at + 3 < n ? 2 : 1);
      EXPECT_EQ(FirstNonFiniteStored(half.data(), FeatureDtype::kFloat16, n), at);
      EXPECT_EQ(FirstNonFiniteStored(bf.data(), FeatureDtype::kBFloat16, n), FirstNotBelow(v.data(), n, kInf));
    }
  }
  std::vector<float> clean(10, -65504.0f);
  EXPECT_EQ(FirstNotBelow(clean.data(), 10, StoredOverflowLimit(FeatureDtype::kFloat16)), -1);
  EXPECT_EQ(FirstNotBelow(clean.data(), 0, kInf), -1);
}

}  // namespace
}  // namespace seer
