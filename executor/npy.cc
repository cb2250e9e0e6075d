#include "executor/npy.h"

#include <cstring>

#include "storage/atomic_file.h"
#include "storage/unique_fd.h"

namespace seer {
namespace {

std::string Header(const std::string& descr, const std::string& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // magic(6) + version(2) + len(2) + dict + padding + '\n' must be a multiple of 64.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(dict.size());
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>(len >> 8));
  return out + dict;
}

Status WriteNpy(const std::string& path, const std::string& header, const void* data, int64_t bytes) {
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  SEER_RETURN_IF_ERROR(writer.Append(header.data(), static_cast<int64_t>(header.size())));
  if (bytes > 0) SEER_RETURN_IF_ERROR(writer.Append(data, bytes));
  return writer.Close();
}

}  // namespace

Status WriteNpyInt64(const std::string& path, const std::vector<int64_t>& values) {
  return WriteNpy(path, Header("<i8", "(" + std::to_string(values.size()) + ",)"), values.data(),
                  static_cast<int64_t>(values.size() * sizeof(int64_t)));
}

Status WriteNpyFloat32(const std::string& path, const std::vector<float>& values, int64_t rows, int64_t cols) {
  if (static_cast<int64_t>(values.size()) != rows * cols) {
    return InvalidArgument(path + ": matrix size does not match its shape");
  }
  return WriteNpy(path, Header("<f4", "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")"),
                  values.data(), static_cast<int64_t>(values.size() * sizeof(float)));
}

Result<std::vector<int64_t>> ReadNpyIds(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return Corrupt(path + ": not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Corrupt(path + ": truncated .npy header");
    uint32_t len32;
    std::memcpy(&len32, bytes.data() + 8, 4);
    header_len = len32;
    header_start = 12;
  } else {
    return Corrupt(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < header_start + header_len) return Corrupt(path + ": truncated .npy header");
  const std::string header = bytes.substr(header_start, header_len);
  if (header.find("'fortran_order': True") != std::string::npos) {
    return InvalidArgument(path + ": Fortran-ordered arrays are not supported");
  }
  int width = 0;
  bool is_signed = true;
  if (header.find("'<i8'") != std::string::npos) width = 8;
  else if (header.find("'<i4'") != std::string::npos) width = 4;
  else if (header.find("'<u4'") != std::string::npos) { width = 4; is_signed = false; }
  else return InvalidArgument(path + ": node ids must be <i8, <i4 or <u4 (header: " + header + ")");
  const size_t data_start = header_start + header_len;
  const size_t data_bytes = bytes.size() - data_start;
  if (data_bytes % width != 0) return Corrupt(path + ": data size is not a multiple of the item size");
  std::vector<int64_t> out(data_bytes / width);
  const char* p = bytes.data() + data_start;
  for (size_t i = 0; i < out.size(); ++i) {
    if (width == 8) {
      std::memcpy(&out[i], p + 8 * i, 8);
    } else if (is_signed) {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      out[i] = v;
    } else {
      uint32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      out[i] = v;
    }
  }
  return out;
}

}  // namespace seer
