// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
// 2014): Seer's one mixer for seeds and one small generator. Used to derive streams from
// (seed, epoch, node, ...) keys (the sampler's xoshiro seeding, the model's dropout seeds)
// and as the synthetic generator's per-node stream. Header-only, constexpr where possible;
// the values are part of Seer's reproducibility contract: changing them changes every
// trace, plan and loss for a given seed.
#pragma once

#include <cmath>
#include <cstdint>

namespace seer {

inline constexpr uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ULL;

// The SplitMix64 output function (a bijection of 64-bit words).
constexpr uint64_t SplitMixFinalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One SplitMix64 step: advances *state by the gamma and returns the mixed value.
constexpr uint64_t SplitMixNext(uint64_t* state) { return SplitMixFinalize(*state += kSplitMixGamma); }

// The first output of a SplitMix64 stream started at `key`: a stateless hash.
constexpr uint64_t SplitMixHash(uint64_t key) { return SplitMixFinalize(key + kSplitMixGamma); }

// A SplitMix64 stream with the usual derived draws. Not thread-safe (one per thread).
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t state) : state_(state) {}
  constexpr uint64_t Next() { return SplitMixNext(&state_); }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) without modulo bias (Lemire's multiply-shift with rejection); n > 0.
  uint64_t Below(uint64_t n) {
    for (;;) {
      const unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
      const uint64_t low = static_cast<uint64_t>(m);
      if (low >= n || low >= (0 - n) % n) return static_cast<uint64_t>(m >> 64);
    }
  }
  // Standard normal (Box-Muller; one value per call keeps streams simple).
  double Gaussian() {
    const double u1 = (static_cast<double>(Next() >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

}  // namespace seer
