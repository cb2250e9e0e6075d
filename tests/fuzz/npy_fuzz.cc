// Fuzz target: the .npy reader (storage/prep/npy.h): header parsing (versions 1-3,
// dtype, shape, fortran_order), the size check, and element reads as int64 and float32
// (the first, middle and last elements, bounded).
#include <algorithm>
#include <vector>

#include "storage/prep/npy.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  const std::string path = seer::fuzz::WriteInput(data, size, "input.npy");
  auto file = seer::NpyFile::Open(path);
  if (!file.ok()) {
    seer::fuzz::CheckRefusal(file.status(), "input.npy");
    return 0;
  }
  const seer::NpyHeader& h = file->header();
  const int64_t n = h.num_elements();
  if (n < 0 || h.data_offset_bytes < 0 || h.item_bytes <= 0) std::abort();
  // Open promised the file holds every element.
  if (h.data_offset_bytes + n * h.item_bytes > static_cast<int64_t>(size)) std::abort();
  (void)h.ShapeString();
  const int64_t count = std::min<int64_t>(n, 256);
  std::vector<int64_t> ints(static_cast<size_t>(count) + 1);
  std::vector<float> floats(static_cast<size_t>(count) + 1);
  for (int64_t first : {int64_t{0}, n / 2, n - count}) {
    if (first < 0 || first + count > n) continue;
    seer::Status s = file->ReadAsInt64(first, count, ints.data());
    seer::fuzz::CheckRefusal(s, "input.npy");
    s = file->ReadAsFloat32(first, count, floats.data());
    seer::fuzz::CheckRefusal(s, "input.npy");
  }
  return 0;
}
