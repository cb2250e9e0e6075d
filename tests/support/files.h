// Whole-file reads for assertions on what Seer wrote, and whole-file writes of test
// inputs (random bytes from a seed). Header-only; no shared state.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace seer::testing {

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A raw little-endian file read as an array of T (trailing partial element dropped).
template <typename T>
std::vector<T> ReadArray(const std::string& path) {
  const std::string bytes = ReadFileBytes(path);
  std::vector<T> out(bytes.size() / sizeof(T));
  std::copy_n(bytes.data(), out.size() * sizeof(T), reinterpret_cast<char*>(out.data()));
  return out;
}

inline bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

// `size` bytes from std::mt19937_64(seed), one draw (its low 8 bits) per byte.
inline std::string RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

// Writes `bytes` to `path` (created or truncated); a test failure when it cannot.
inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

// Writes RandomBytes(size, seed) to `path` and returns them.
inline std::string WriteRandomFile(const std::string& path, size_t size, uint64_t seed) {
  std::string bytes = RandomBytes(size, seed);
  WriteFileBytes(path, bytes);
  return bytes;
}

}  // namespace seer::testing
