#include <tbb/task_arena.h>

#include <algorithm>

#include "cache/radix_sort_internal.h"
#include "storage/base/parallel.h"

namespace seer::belady_internal {

void RadixSortKeys(std::vector<uint64_t>* keys, std::vector<uint64_t>* tmp, int low_bit, int bits) {
  const size_t n = keys->size();
  if (n < 2 || bits == 0) return;
  if (n < 256) {
    std::stable_sort(keys->begin(), keys->end(), [low_bit](uint64_t a, uint64_t b) {
      return (a >> low_bit) < (b >> low_bit);
    });
    return;
  }
  const int passes = (bits + kMaxKeyDigit - 1) / kMaxKeyDigit;
  const int digit = DigitBits(bits, kMaxKeyDigit);
  const size_t buckets = size_t{1} << digit;
  const uint64_t mask = buckets - 1;
  tmp->resize(n);
  const size_t chunks = n < (size_t{1} << 14)
                            ? 1
                            : static_cast<size_t>(std::clamp(tbb::this_task_arena::max_concurrency(), 1, 8));
  std::vector<size_t> bounds(chunks + 1);
  for (size_t c = 0; c <= chunks; ++c) bounds[c] = n * c / chunks;
  // Per pass, each chunk's digit histogram of the current order.
  std::vector<size_t> hist(chunks * buckets);
  uint64_t* src = keys->data();
  uint64_t* dst = tmp->data();
  for (int p = 0; p < passes; ++p) {
    const int shift = low_bit + p * digit;
    std::fill(hist.begin(), hist.end(), 0);
    ParallelFor(size_t{0}, chunks, [&, src, shift](size_t c) {
      size_t* h = hist.data() + c * buckets;
      const uint64_t* from = src + bounds[c];
      const uint64_t* to = src + bounds[c + 1];
      for (; from != to; ++from) ++h[(*from >> shift) & mask];
    });
    size_t total_first = 0;
    for (size_t c = 0; c < chunks; ++c) total_first += hist[c * buckets + ((src[0] >> shift) & mask)];
    if (total_first == n) continue;  // one digit value: no-op pass
    size_t sum = 0;
    for (size_t d = 0; d < buckets; ++d) {
      for (size_t c = 0; c < chunks; ++c) {
        const size_t count = hist[c * buckets + d];
        hist[c * buckets + d] = sum;
        sum += count;
      }
    }
    ParallelFor(size_t{0}, chunks, [&, src, dst, shift](size_t c) {
      size_t* h = hist.data() + c * buckets;
      const uint64_t* from = src + bounds[c];
      const uint64_t* to = src + bounds[c + 1];
      for (; from != to; ++from) {
        const uint64_t v = *from;
        dst[h[(v >> shift) & mask]++] = v;
      }
    });
    std::swap(src, dst);
  }
  if (src != keys->data()) keys->swap(*tmp);
}

}  // namespace seer::belady_internal
