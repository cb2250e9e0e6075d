// Minimal .npy (NumPy format version 1.0) reading and writing for `seer predict`:
// little-endian int64 ("<i8") and float32 ("<f4") arrays, C order, 1-D or 2-D.
// Writes are atomic (storage/atomic_file.h). Errors name the path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/status.h"

namespace seer {

Status WriteNpyInt64(const std::string& path, const std::vector<int64_t>& values);
// rows × cols float32 matrix.
Status WriteNpyFloat32(const std::string& path, const std::vector<float>& values, int64_t rows,
                       int64_t cols);
// Reads a 1-D (or N×1) integer array (<i8, <i4, <u4) as int64.
Result<std::vector<int64_t>> ReadNpyIds(const std::string& path);

}  // namespace seer
