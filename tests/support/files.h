// Whole-file reads for assertions on what Seer wrote.
#pragma once

#include <algorithm>
#include <fstream>
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

}  // namespace seer::testing
