// Sorting and counting kernels of the CSC builder (storage/prep/csc_builder.cc only):
// neighbour lists sorted by insertion, LSD radix or std::sort by length, and the
// prefetching degree count. Internal to storage/prep.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace seer::csc_internal {

// Lists of this many ids are sorted by LSD radix (bytes, 256 buckets) rather than
// std::sort (20M R-MAT edges, 1 thread: from 64 ids 5 % less user CPU than from 256, no
// difference from 25; introsort's mispredicted compares cost more than the histograms);
// above the upper bound std::sort (the radix scratch, one per thread, stays at most 64 Ki
// ids).
constexpr int64_t kRadixMinList = 64;
constexpr int64_t kRadixMaxList = int64_t{1} << 16;

// LSD radix sort of n ids, one byte per pass, skipping the bytes every id shares (the
// high bytes of small ids); the scratch is thread-local.
template <typename T>
void RadixSortList(T* data, int64_t n) {
  thread_local std::vector<T> scratch_storage;
  if (scratch_storage.size() < static_cast<size_t>(n)) scratch_storage.resize(static_cast<size_t>(kRadixMaxList));
  T* scratch = scratch_storage.data();
  T all_or = 0, all_and = static_cast<T>(~T{0});
  for (int64_t i = 0; i < n; ++i) {
    all_or |= data[i];
    all_and &= data[i];
  }
  const T varying = all_or ^ all_and;  // bits that differ between some ids
  T* from = data;
  T* to = scratch;
  for (int shift = 0; shift < static_cast<int>(8 * sizeof(T)); shift += 8) {
    if (((varying >> shift) & 0xFF) == 0) continue;
    int64_t count[256] = {};
    for (int64_t i = 0; i < n; ++i) ++count[(from[i] >> shift) & 0xFF];
    int64_t at = 0;
    for (int64_t& c : count) {
      const int64_t k = c;
      c = at;
      at += k;
    }
    for (int64_t i = 0; i < n; ++i) to[count[(from[i] >> shift) & 0xFF]++] = from[i];
    std::swap(from, to);
  }
  if (from != data) std::memcpy(data, from, static_cast<size_t>(n) * sizeof(T));
}

// Sorts one neighbor list: most are short (the average in-degree), where an insertion
// sort beats std::sort's introsort set-up; lists already sorted (inputs sorted by
// source) are left as they are after one linear check; long ones go to a radix sort.
template <typename T>
inline void SortList(T* first, T* last, bool radix) {
  const int64_t n = last - first;
  if (n < 2) return;
  if (n <= 24) {
    for (T* i = first + 1; i < last; ++i) {
      const T value = *i;
      T* j = i;
      while (j > first && j[-1] > value) {
        *j = j[-1];
        --j;
      }
      *j = value;
    }
    return;
  }
  if (std::is_sorted(first, last)) return;
  if (radix && n >= kRadixMinList && n <= kRadixMaxList) {
    RadixSortList(first, n);
    return;
  }
  std::sort(first, last);
}

// Counts `count` (src, dst) pairs into counts[dst], prefetching the counter 16 pairs
// ahead (the table is too large for the cache at scale: the increments are random).
template <typename V>
void CountRun(const V* pairs, int64_t count, int64_t* counts) {
  constexpr int64_t kAhead = 16;
  for (int64_t i = 0; i < count; ++i) {
    if (i + kAhead < count) __builtin_prefetch(counts + pairs[2 * (i + kAhead) + 1], 1);
    ++counts[pairs[2 * i + 1]];
  }
}

}  // namespace seer::csc_internal
