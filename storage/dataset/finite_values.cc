#include "storage/dataset/finite_values.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace seer {
namespace {

constexpr int64_t kBlock = 256;

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Blocks of kBlock values are tested branch-free; `bad(i)` then finds the exact one.
template <typename Bad>
int64_t FirstBad(int64_t n, Bad&& bad) {
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = b + kBlock < n ? b + kBlock : n;
    int any = 0;
    for (int64_t i = b; i < e; ++i) any |= static_cast<int>(bad(i));
    if (any == 0) continue;
    for (int64_t i = b; i < e; ++i) {
      if (bad(i)) return i;
    }
  }
  return -1;
}

template <typename Bad>
int64_t CountBad(int64_t n, Bad&& bad) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += static_cast<int64_t>(bad(i));
  return count;
}

}  // namespace

float StoredOverflowLimit(FeatureDtype dtype) {
  switch (dtype) {
    case FeatureDtype::kFloat16: return 65520.0f;
    case FeatureDtype::kBFloat16: return FloatFromBits(0x7f7f8000u);  // ties round to even: up, to inf
    default: return std::numeric_limits<float>::infinity();
  }
}

double LargestFinite(FeatureDtype dtype) {
  switch (dtype) {
    case FeatureDtype::kFloat16: return 65504.0;
    case FeatureDtype::kBFloat16: return static_cast<double>(FloatFromBits(0x7f7f0000u));
    default: return static_cast<double>(std::numeric_limits<float>::max());
  }
}

int64_t FirstNotBelow(const float* values, int64_t n, float limit) {
  return FirstBad(n, [&](int64_t i) { return !(std::fabs(values[i]) < limit); });
}

int64_t CountNotBelow(const float* values, int64_t n, float limit) {
  return CountBad(n, [&](int64_t i) { return !(std::fabs(values[i]) < limit); });
}

int64_t FirstNonFiniteHalf(const uint16_t* bits, int64_t n) {
  return FirstBad(n, [&](int64_t i) { return (bits[i] & 0x7c00u) == 0x7c00u; });
}

int64_t CountNonFiniteHalf(const uint16_t* bits, int64_t n) {
  return CountBad(n, [&](int64_t i) { return (bits[i] & 0x7c00u) == 0x7c00u; });
}

int64_t FirstNonFiniteStored(const void* stored, FeatureDtype dtype, int64_t count) {
  const char* p = static_cast<const char*>(stored);
  if (dtype == FeatureDtype::kFloat32) {
    return FirstBad(count, [&](int64_t i) {
      uint32_t x;
      std::memcpy(&x, p + 4 * i, 4);
      return (x & 0x7f800000u) == 0x7f800000u;
    });
  }
  if (dtype == FeatureDtype::kFloat16 || dtype == FeatureDtype::kBFloat16) {
    const uint16_t mask = dtype == FeatureDtype::kFloat16 ? 0x7c00u : 0x7f80u;
    return FirstBad(count, [&](int64_t i) {
      uint16_t x;
      std::memcpy(&x, p + 2 * i, 2);
      return (x & mask) == mask;
    });
  }
  return -1;
}

}  // namespace seer
