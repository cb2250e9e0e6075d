// XXH64 written from the public xxHash specification (XXH64 algorithm description).
#include "storage/base/checksum.h"

#include <cstdio>
#include <cstring>

namespace seer {
namespace {
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ULL;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t Read64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // little-endian host assumed (x86-64, aarch64)
  return v;
}
inline uint32_t Read32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t Round(uint64_t acc, uint64_t input) {
  acc += input * kP2;
  acc = Rotl(acc, 31);
  return acc * kP1;
}
inline uint64_t MergeRound(uint64_t acc, uint64_t val) {
  acc ^= Round(0, val);
  return acc * kP1 + kP4;
}
}  // namespace

Xxh64::Xxh64(uint64_t seed) : seed_(seed) {
  v_[0] = seed + kP1 + kP2;
  v_[1] = seed + kP2;
  v_[2] = seed;
  v_[3] = seed - kP1;
}

void Xxh64::Update(const void* data, size_t length) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + length;
  total_len_ += length;
  if (mem_size_ + length < 32) {
    std::memcpy(mem_ + mem_size_, p, length);
    mem_size_ += length;
    return;
  }
  if (mem_size_ > 0) {
    size_t fill = 32 - mem_size_;
    std::memcpy(mem_ + mem_size_, p, fill);
    for (int i = 0; i < 4; ++i) v_[i] = Round(v_[i], Read64(mem_ + 8 * i));
    p += fill;
    mem_size_ = 0;
  }
  while (end - p >= 32) {
    v_[0] = Round(v_[0], Read64(p));
    v_[1] = Round(v_[1], Read64(p + 8));
    v_[2] = Round(v_[2], Read64(p + 16));
    v_[3] = Round(v_[3], Read64(p + 24));
    p += 32;
  }
  mem_size_ = static_cast<size_t>(end - p);
  std::memcpy(mem_, p, mem_size_);
}

uint64_t Xxh64::Digest() const {
  uint64_t h;
  if (total_len_ >= 32) {
    h = Rotl(v_[0], 1) + Rotl(v_[1], 7) + Rotl(v_[2], 12) + Rotl(v_[3], 18);
    for (int i = 0; i < 4; ++i) h = MergeRound(h, v_[i]);
  } else {
    h = seed_ + kP5;
  }
  h += total_len_;
  const unsigned char* p = mem_;
  const unsigned char* end = mem_ + mem_size_;
  while (end - p >= 8) {
    h ^= Round(0, Read64(p));
    h = Rotl(h, 27) * kP1 + kP4;
    p += 8;
  }
  if (end - p >= 4) {
    h ^= static_cast<uint64_t>(Read32(p)) * kP1;
    h = Rotl(h, 23) * kP2 + kP3;
    p += 4;
  }
  while (p < end) {
    h ^= static_cast<uint64_t>(*p) * kP5;
    h = Rotl(h, 11) * kP1;
    ++p;
  }
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

uint64_t Xxh64::Hash(const void* data, size_t length, uint64_t seed) {
  Xxh64 state(seed);
  state.Update(data, length);
  return state.Digest();
}

std::string Xxh64::ToHex(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace seer
