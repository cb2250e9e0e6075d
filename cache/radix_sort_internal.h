// The Belady planner's LSD radix sorts, in one place (internal to cache/; not installed
// API): the next-use sort's packed access keys (cache/next_use_sort.cc, parallel), the
// ∞ bucket's pending rows (cache/belady_cache_state.cc) and the evicted slots of the
// forward pass (cache/belady_planner.cc), the latter two through CountingPass.
//
// All sorts are stable; a pass on a digit every item shares is skipped (a stable pass on
// one digit value is the identity, so skipping never changes the order).
// Thread-safety: the functions touch only their arguments; RadixSortKeys runs its chunks
// on TBB threads (seer::ParallelFor) and returns when they are done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace seer::belady_internal {

// Number of significant bits of max_value (0 for 0).
inline int BitWidth(uint64_t max_value) { return max_value == 0 ? 0 : 64 - __builtin_clzll(max_value); }

// Widest digit of the next-use sort and of the ∞ bucket's sort (two passes up to 2^24 nodes).
inline constexpr int kMaxKeyDigit = 12;
// Widest digit of the forward pass's slot sort.
inline constexpr int kMaxRadixDigit = 11;

// Width of equal digits covering `bits` with digits of at most `max_digit` bits, in as
// few passes as the width needs (0 when bits == 0).
inline int DigitBits(int bits, int max_digit) {
  const int passes = (bits + max_digit - 1) / max_digit;
  return passes == 0 ? 0 : (bits + passes - 1) / passes;
}

// Stable LSD radix sort of keys on bits [low_bit, low_bit + bits) (DigitBits(bits,
// kMaxKeyDigit) per pass). Keys that are already in order of their lower bits (records
// appended in access order) end up sorted on all bits. `tmp` is scratch of the same size
// (resized). Chunks of large inputs are counted and scattered on separate threads (same
// result: each chunk scatters to its own offsets, chunk order kept); std::stable_sort
// below 256 keys.
void RadixSortKeys(std::vector<uint64_t>* keys, std::vector<uint64_t>* tmp, int low_bit, int bits);

// One stable counting-sort pass of src[0..n) into dst on digit(item) in [0, 2^bits)
// (`count` is scratch). Returns false, leaving dst untouched, when every item has the
// same digit (n >= 1).
template <typename T, typename Digit>
bool CountingPass(const T* src, T* dst, size_t n, int bits, Digit digit, std::vector<size_t>* count) {
  count->assign(size_t{1} << bits, 0);
  size_t* c = count->data();
  for (size_t k = 0; k < n; ++k) ++c[digit(src[k])];
  if (c[digit(src[0])] == n) return false;  // one digit value: no-op pass
  size_t sum = 0;
  for (size_t d = 0; d < count->size(); ++d) sum += std::exchange(c[d], sum);
  for (size_t k = 0; k < n; ++k) dst[c[digit(src[k])]++] = src[k];
  return true;
}

}  // namespace seer::belady_internal
