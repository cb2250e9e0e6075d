// XXH64 (Yann Collet's xxHash, 64-bit), streaming. Written from the public spec; used
// for dataset file checksums. Not thread-safe per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace seer {

class Xxh64 {
 public:
  explicit Xxh64(uint64_t seed = 0);
  void Update(const void* data, size_t length);
  uint64_t Digest() const;
  static uint64_t Hash(const void* data, size_t length, uint64_t seed = 0);
  static std::string ToHex(uint64_t value);

 private:
  uint64_t v_[4];
  uint64_t seed_;
  uint64_t total_len_ = 0;
  unsigned char mem_[32];
  size_t mem_size_ = 0;
};

}  // namespace seer
