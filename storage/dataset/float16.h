// IEEE 754 binary16 ("half", numpy float16) <-> float32 conversion in plain C++, for
// writing and reading float16 feature files. Round to nearest even; overflow gives
// ±inf, NaN stays NaN, subnormals are kept. Pure functions, thread-safe.
#pragma once

#include <cstdint>

namespace seer {

uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);

}  // namespace seer
