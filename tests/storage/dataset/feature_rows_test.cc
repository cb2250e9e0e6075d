// Feature rows in every stored dtype (storage/dataset/dataset.h): int8 row-wise codes with
// their scale and bias, against the rule written out here (bias = row minimum, scale =
// range / 255, code = round((x - bias) / scale)), and the 2-byte dtypes through the row API.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "storage/dataset/dataset.h"
#include "support/random_seed.h"

namespace seer {
namespace {

TEST(FeatureRowsTest, Int8RowLayoutAndErrorBound) {
  testing::RandomTestSeed seed;
  constexpr int64_t kDim = 13, kRows = 57;
  ASSERT_EQ(FeatureRowBytes(FeatureDtype::kInt8, kDim), kDim + 8);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> values(kDim * kRows);
  for (float& v : values) v = normal(seed.rng);
  for (int64_t j = 0; j < kDim; ++j) values[5 * kDim + j] = 2.5f;  // a constant row: exact
  std::vector<unsigned char> stored(static_cast<size_t>(kRows * (kDim + 8)));
  EncodeFeatureRows(values.data(), FeatureDtype::kInt8, kDim, kRows, stored.data());
  std::vector<float> decoded(values.size());
  DecodeFeatureRows(stored.data(), FeatureDtype::kInt8, kDim, kRows, decoded.data());
  for (int64_t r = 0; r < kRows; ++r) {
    const float* x = values.data() + r * kDim;
    const unsigned char* row = stored.data() + r * (kDim + 8);
    const float lo = *std::min_element(x, x + kDim), hi = *std::max_element(x, x + kDim);
    float scale, bias;
    std::memcpy(&scale, row + kDim, 4);
    std::memcpy(&bias, row + kDim + 4, 4);
    EXPECT_EQ(bias, lo) << "row " << r;
    if (hi > lo) {
      EXPECT_FLOAT_EQ(scale, (hi - lo) / 255.0f) << "row " << r;
    }
    for (int64_t j = 0; j < kDim; ++j) {
      const long want = hi > lo ? std::lround((x[j] - lo) / scale) : 0;
      EXPECT_NEAR(row[j], want, 1) << "row " << r << " column " << j;  // float rounding of the division
      EXPECT_LE(std::fabs(decoded[static_cast<size_t>(r * kDim + j)] - x[j]), scale * 0.5f + 1e-6f * std::fabs(x[j]))
          << "row " << r << " column " << j;
    }
    if (r == 5) {
      for (int64_t j = 0; j < kDim; ++j) EXPECT_EQ(decoded[static_cast<size_t>(r * kDim + j)], 2.5f);
    }
    // The extremes are exact codes 0 and 255.
    EXPECT_EQ(*std::min_element(row, row + kDim), 0);
    if (hi > lo) {
      EXPECT_EQ(*std::max_element(row, row + kDim), 255);
    }
  }
}

// Huge finite values keep their range (computed in double), infinities clamp to the
// row's finite extremes.
TEST(FeatureRowsTest, Int8ExtremeValues) {
  const float big = 3.0e38f;
  const std::vector<float> x = {-big, big, 0.0f, INFINITY};
  std::vector<unsigned char> stored(4 + 8);
  EncodeFeatureRows(x.data(), FeatureDtype::kInt8, 4, 1, stored.data());
  std::vector<float> y(4);
  DecodeFeatureRows(stored.data(), FeatureDtype::kInt8, 4, 1, y.data());
  EXPECT_TRUE(std::isfinite(y[0]) && std::isfinite(y[1]));
  EXPECT_EQ(stored[0], 0);
  EXPECT_EQ(stored[1], 255);
  EXPECT_EQ(stored[3], 255);
  EXPECT_NEAR(y[2], 0.0f, big / 255.0f);
}

TEST(FeatureRowsTest, TwoByteDtypesThroughTheRowApi) {
  const std::vector<float> x = {1.0f, -2.5f, 0.333f, 65504.0f, 1e-3f, 7.0f};
  for (FeatureDtype d : {FeatureDtype::kFloat32, FeatureDtype::kFloat16, FeatureDtype::kBFloat16}) {
    ASSERT_EQ(FeatureRowBytes(d, 3), 3 * FeatureDtypeBytes(d));
    std::vector<char> rows(static_cast<size_t>(2 * FeatureRowBytes(d, 3)));
    std::vector<char> values(rows.size());
    EncodeFeatureRows(x.data(), d, 3, 2, rows.data());
    EncodeFeatureValues(x.data(), d, 6, values.data());
    EXPECT_EQ(rows, values) << FeatureDtypeName(d);
    std::vector<float> a(6), b(6);
    DecodeFeatureRows(rows.data(), d, 3, 2, a.data());
    DecodeFeatureValues(values.data(), d, 6, b.data());
    EXPECT_EQ(a, b) << FeatureDtypeName(d);
  }
  EXPECT_EQ(*ParseFeatureDtype("int8"), FeatureDtype::kInt8);
  EXPECT_STREQ(FeatureDtypeName(FeatureDtype::kInt8), "int8");
}

}  // namespace
}  // namespace seer

namespace seer {
namespace {

// Format versions: a manifest is written as the lowest version that has what it uses (1
// for plain float datasets, so earlier readers still read them; 2 with int8 features or
// a node order), and a version-1 manifest that uses a version-2 field is refused.
TEST(FormatVersionTest, LowestVersionThatHasWhatItUses) {
  DatasetManifest m;
  m.num_nodes = 4;
  m.feature_dim = 3;
  EXPECT_EQ(m.FormatVersion(), 1);
  EXPECT_NE(m.ToJson().find("\"version\": 1"), std::string::npos);
  m.feature_dtype = FeatureDtype::kInt8;
  EXPECT_EQ(m.FormatVersion(), 2);
  std::string json = m.ToJson();
  EXPECT_NE(json.find("\"version\": 2"), std::string::npos);
  auto back = DatasetManifest::FromJson(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->feature_dtype, FeatureDtype::kInt8);
  json.replace(json.find("\"version\": 2"), 12, "\"version\": 1");
  auto old = DatasetManifest::FromJson(json, "m.json");
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("m.json: version 1 but it uses the int8 feature dtype, which needs version 2"),
            std::string::npos)
      << old.status().message();
  json.replace(json.find("\"version\": 1"), 12, "\"version\": 3");
  EXPECT_NE(DatasetManifest::FromJson(json, "m.json").status().message().find("this seer reads versions 1 to 2"),
            std::string::npos);
}

}  // namespace
}  // namespace seer
