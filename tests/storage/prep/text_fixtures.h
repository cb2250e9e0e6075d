// Text fixtures for the prep tests: plain files and .gz made by the gzip program, so
// what the readers decompress comes from an independent compressor.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace seer::testing {

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Replaces `path` with `path`.gz (gzip -f).
inline void Gzip(const std::string& path) {
  ASSERT_EQ(std::system(("gzip -f '" + path + "'").c_str()), 0) << "gzip " << path;
}

}  // namespace seer::testing
