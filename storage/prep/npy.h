// NumPy .npy files (format versions 1.0, 2.0, 3.0): header parsing with dtype / shape /
// fortran_order checks, chunked element reads, and a writer (for tests and exports).
// Only little-endian (or single-byte) numeric dtypes are accepted: <i4 <i8 <u4 <u8 <f2
// <f4 <f8 |i1 |u1 |b1. Errors name the file and the position: a header problem gives
// the byte offset in the header, a short file says how many data bytes the shape needs
// and how many the file has. NpyFile is a move-only reader, not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

struct NpyHeader {
  std::string descr;             // "<f4"
  char kind = 0;                 // 'f', 'i', 'u', 'b'
  int item_bytes = 0;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  int64_t data_offset_bytes = 0;
  int64_t num_elements() const;
  std::string ShapeString() const;  // "(3, 4)"
};

class NpyFile {
 public:
  // Parses and validates the header; checks the file holds all the data the shape needs
  // (kUnexpectedEof "truncated" otherwise).
  static Result<NpyFile> Open(const std::string& path);

  const NpyHeader& header() const { return header_; }
  const std::string& path() const { return path_; }

  // Raw bytes of elements [first, first + count) in file order.
  Status ReadRaw(int64_t first_element, int64_t count, void* out) const;
  // Elements [first, first + count) converted to int64 (integer/bool dtypes only;
  // floats must hold integral values, NaN -> nan_value). Errors name the element.
  Status ReadAsInt64(int64_t first_element, int64_t count, int64_t* out,
                     int64_t nan_value = INT64_MIN) const;
  // Elements converted to float32 (float16/32/64 and integer dtypes).
  Status ReadAsFloat32(int64_t first_element, int64_t count, float* out) const;

 private:
  NpyFile(std::string path, UniqueFd fd, NpyHeader header)
      : path_(std::move(path)), fd_(std::move(fd)), header_(std::move(header)) {}
  std::string path_;
  UniqueFd fd_;
  NpyHeader header_;
};

// Writes a C-order .npy (version 1.0) atomically. `data` holds num_elements × item bytes.
Status WriteNpy(const std::string& path, const std::string& descr,
                const std::vector<int64_t>& shape, const void* data);

}  // namespace seer
