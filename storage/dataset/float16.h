// IEEE 754 binary16 ("half", numpy float16) and bfloat16 (the top 16 bits of a float32:
// same range, 8 significant bits) <-> float32 conversion in plain C++, for writing and
// reading 2-byte feature files. Round to nearest even; overflow gives ±inf, NaN stays
// NaN, subnormals are kept. Pure functions, thread-safe.
#pragma once

#include <cstdint>

namespace seer {

uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);
float BFloat16ToFloat(uint16_t bits);

}  // namespace seer
