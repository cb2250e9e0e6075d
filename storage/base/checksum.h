// Xxh64: XXH64 (xxHash, 64-bit) checksums of dataset files, one-shot or streaming.
// A thin owner of libxxhash's streaming state (the xxHash library does the hashing);
// the values are the published XXH64 ones, so manifests written by any earlier Seer
// stay valid. Move-only; not thread-safe per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace seer {

class Xxh64 {
 public:
  explicit Xxh64(uint64_t seed = 0);
  ~Xxh64();
  Xxh64(Xxh64&&) noexcept;
  Xxh64& operator=(Xxh64&&) noexcept;
  Xxh64(const Xxh64&) = delete;
  Xxh64& operator=(const Xxh64&) = delete;

  void Update(const void* data, size_t length);
  // The hash of everything passed to Update so far; more Updates may follow.
  uint64_t Digest() const;
  static uint64_t Hash(const void* data, size_t length, uint64_t seed = 0);
  // 16 lowercase hex digits, zero-padded: the form manifests store.
  static std::string ToHex(uint64_t value);

 private:
  struct State;  // wraps XXH64_state_t, so xxhash.h stays out of this header
  std::unique_ptr<State> state_;
};

}  // namespace seer
