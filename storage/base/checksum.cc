#include "storage/base/checksum.h"

#include <xxhash.h>

#include <new>

#include <fmt/format.h>

namespace seer {

struct Xxh64::State {
  XXH64_state_t* xxh = nullptr;
  State() : xxh(XXH64_createState()) {
    if (xxh == nullptr) throw std::bad_alloc();
  }
  ~State() { XXH64_freeState(xxh); }
};

Xxh64::Xxh64(uint64_t seed) : state_(std::make_unique<State>()) {
  XXH64_reset(state_->xxh, seed);
}

Xxh64::~Xxh64() = default;
Xxh64::Xxh64(Xxh64&&) noexcept = default;
Xxh64& Xxh64::operator=(Xxh64&&) noexcept = default;

void Xxh64::Update(const void* data, size_t length) {
  XXH64_update(state_->xxh, data, length);
}

uint64_t Xxh64::Digest() const { return XXH64_digest(state_->xxh); }

uint64_t Xxh64::Hash(const void* data, size_t length, uint64_t seed) {
  return XXH64(data, length, seed);
}

std::string Xxh64::ToHex(uint64_t value) { return fmt::format("{:016x}", value); }

}  // namespace seer
