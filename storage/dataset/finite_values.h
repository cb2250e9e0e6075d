// Finite feature values: what `seer prep` refuses (NaN/inf input, finite values that a
// narrower stored dtype turns into ±inf) and `seer check --deep` flags (non-finite values
// in features.bin). Vectorizable scans (one compare per value, then an exact search only
// in a block that has a hit), so the checks cost little next to reading the values.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>

#include "storage/dataset/dataset.h"

namespace seer {

// The smallest magnitude a float32 value has that becomes ±inf when stored as `dtype`:
// float16 65520 (65504 is the largest finite, and 65520 rounds up), bfloat16 the float
// just past the largest finite bfloat16's rounding range; +inf for float32 and every
// other dtype (int8 rows are quantized from their finite minimum and maximum).
float StoredOverflowLimit(FeatureDtype dtype);
// The largest finite value of `dtype` (float16 65504), for messages.
double LargestFinite(FeatureDtype dtype);

// The index of the first of values[0, n) that is NaN or whose magnitude is >= limit, or
// -1 (limit +inf: the first non-finite value).
int64_t FirstNotBelow(const float* values, int64_t n, float limit);
// How many of values[0, n) are NaN or have a magnitude >= limit.
int64_t CountNotBelow(const float* values, int64_t n, float limit);
// The same over binary16 bit patterns (numpy float16): the first NaN/inf, or -1.
int64_t FirstNonFiniteHalf(const uint16_t* bits, int64_t n);
int64_t CountNonFiniteHalf(const uint16_t* bits, int64_t n);
// Stored values of a float dtype (float32, float16, bfloat16; `stored` any alignment):
// the first non-finite one, or -1. Other dtypes: -1 (no element-wise float values).
int64_t FirstNonFiniteStored(const void* stored, FeatureDtype dtype, int64_t count);

}  // namespace seer
