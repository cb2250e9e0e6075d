#include "cache/belady_cache_state_internal.h"

#include "cache/radix_sort_internal.h"

namespace seer::belady_internal {
namespace {
// ∞ runs are sorted with the first to evict at the back.
bool EvictedLater(const CachedEntry& a, const CachedEntry& b) { return InfiniteEvictsFirst()(b, a); }
}  // namespace

// ---- InfiniteBucket ---------------------------------------------------------------------

void InfiniteBucket::PopSlots(int64_t k, std::vector<int32_t>* out) {
  while (k > 0) {
    if (best_ < 0) FindBest();
    auto& run = runs_[static_cast<size_t>(best_)];
    const CachedEntry* runner_up = nullptr;
    for (size_t r = 0; r < runs_.size(); ++r) {
      if (static_cast<int64_t>(r) != best_ &&
          (runner_up == nullptr || InfiniteEvictsFirst()(runs_[r].back(), *runner_up))) {
        runner_up = &runs_[r].back();
      }
    }
    do {
      out->push_back(run.back().slot);
      run.pop_back();
      --size_;
      --k;
    } while (k > 0 && !run.empty() &&
             (runner_up == nullptr || InfiniteEvictsFirst()(run.back(), *runner_up)));
    if (run.empty()) runs_.erase(runs_.begin() + best_);
    best_ = -1;
  }
}

// LSD radix sort (stable): passes over the id's bits, then over the inverted score's,
// skipping digits on which all entries agree; std::sort for small inputs.
void InfiniteBucket::SortPending() {
  const size_t n = pending_.size();
  // Large pending sets (a cache filling for many batches before its first eviction)
  // are sorted in place: the radix sort's scratch would double the bucket's RAM.
  if (n < 1024 || n > kMaxRadixPending) {
    std::sort(pending_.begin(), pending_.end(), EvictedLater);
    return;
  }
  uint64_t max_node = 0;
  uint32_t aux_or = 0, aux_and = ~uint32_t{0};
  for (const CachedEntry& e : pending_) {
    max_node = std::max(max_node, static_cast<uint64_t>(e.node));
    aux_or |= e.aux;
    aux_and &= e.aux;
  }
  // The scratch is the merge buffer (kept anyway, as large as the largest merge), so
  // sorting adds no RAM once runs have been merged.
  merged_.resize(n);
  CachedEntry* src = pending_.data();
  CachedEntry* dst = merged_.data();
  std::vector<size_t> count;
  auto pass = [&](int bits, auto digit) {
    if (CountingPass(src, dst, n, bits, digit, &count)) std::swap(src, dst);
  };
  // Digits of equal width (24 id bits: two passes of 12).
  const int node_bits = BitWidth(max_node);
  const int node_digit = DigitBits(node_bits, kMaxKeyDigit);
  for (int shift = 0; shift < node_bits; shift += node_digit) {
    const int bits = std::min(node_digit, node_bits - shift);
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    pass(bits, [shift, mask](const CachedEntry& e) {
      return static_cast<size_t>((static_cast<uint64_t>(e.node) >> shift) & mask);
    });
  }
  const int aux_bits = aux_or == aux_and ? 0 : BitWidth(aux_or);
  const int aux_digit = DigitBits(aux_bits, kMaxKeyDigit);
  for (int shift = 0; shift < aux_bits; shift += aux_digit) {
    const int bits = std::min(aux_digit, aux_bits - shift);
    const uint32_t mask = (uint32_t{1} << bits) - 1;
    pass(bits, [shift, mask](const CachedEntry& e) {
      return static_cast<size_t>((~e.aux >> shift) & mask);
    });
  }
  if (src != pending_.data()) std::copy(src, src + n, pending_.begin());
}

void InfiniteBucket::FindBest() {
  if (!pending_.empty()) {
    SortPending();
    runs_.push_back(std::move(pending_));
    pending_ = {};
    while (runs_.size() >= 2 && runs_[runs_.size() - 2].size() <= 2 * runs_.back().size()) {
      auto& x = runs_[runs_.size() - 2];
      auto& y = runs_.back();
      merged_.resize(x.size() + y.size());
      std::merge(x.begin(), x.end(), y.begin(), y.end(), merged_.begin(), EvictedLater);
      x.swap(merged_);
      runs_.pop_back();
    }
  }
  best_ = 0;
  for (size_t r = 1; r < runs_.size(); ++r) {
    if (InfiniteEvictsFirst()(runs_[r].back(), runs_[static_cast<size_t>(best_)].back())) {
      best_ = static_cast<int64_t>(r);
    }
  }
}

// ---- FiniteBucket -----------------------------------------------------------------------

void FiniteBucket::Spans(std::vector<std::pair<const CachedEntry*, size_t>>* out) const {
  if (is_heap_) {
    if (!heap_.empty()) out->emplace_back(heap_.data(), heap_.size());
    return;
  }
  uint32_t cap = kFirstChunk;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    out->emplace_back(chunks_[c].get(), c + 1 == chunks_.size() ? last_fill_ : cap);
    cap = std::min(cap * 2, kMaxChunk);
  }
}

void FiniteBucket::Flatten() {
  std::vector<std::pair<const CachedEntry*, size_t>> spans;
  Spans(&spans);
  heap_.reserve(static_cast<size_t>(size_));
  for (const auto& [p, n] : spans) heap_.insert(heap_.end(), p, p + n);
  ReleaseChunks();
  std::make_heap(heap_.begin(), heap_.end(), FiniteEvictsLater());
  is_heap_ = true;
}

void FiniteBucket::PopSlots(int64_t k, std::vector<int32_t>* out) {
  if (k >= size_) {
    std::vector<std::pair<const CachedEntry*, size_t>> spans;
    Spans(&spans);
    for (const auto& [p, n] : spans) {
      for (size_t j = 0; j < n; ++j) out->push_back(p[j].slot);
    }
    Clear();
    return;
  }
  if (is_heap_ && k * 16 < size_) {
    for (; k > 0; --k) {
      out->push_back(heap_.front().slot);
      PopHeap();
    }
    return;
  }
  auto& h = Heap();
  auto cut = h.begin() + k;
  std::nth_element(h.begin(), cut, h.end(), [](const CachedEntry& a, const CachedEntry& b) { return a.node > b.node; });
  for (auto it = h.begin(); it != cut; ++it) out->push_back(it->slot);
  h.erase(h.begin(), cut);
  std::make_heap(h.begin(), h.end(), FiniteEvictsLater());
  size_ -= k;
}

void FiniteBucket::Clear() {
  ReleaseChunks();
  std::vector<CachedEntry>().swap(heap_);
  is_heap_ = false;
  size_ = 0;
}

void FiniteBucket::ReleaseChunks() {
  std::vector<std::unique_ptr<CachedEntry[]>>().swap(chunks_);
  last_fill_ = last_cap_ = 0;
}

// ---- BucketedCache ----------------------------------------------------------------------

void BucketedCache::Release(int64_t b) {
  auto& v = buckets_[static_cast<size_t>(b)];
  size_ -= v.size();
  v.Clear();
  MarkEmpty(b);
}

template <typename Bucket>
int64_t BucketedCache::PopSlotsFrom(Bucket& bucket, int64_t b, int64_t k, std::vector<int32_t>* out) {
  k = std::min(k, bucket.size());
  bucket.PopSlots(k, out);
  size_ -= k;
  if (bucket.size() == 0) MarkEmpty(b);
  return k;
}

int64_t BucketedCache::PopFinite(int64_t b, int64_t k, std::vector<int32_t>* out) {
  return PopSlotsFrom(buckets_[static_cast<size_t>(b)], b, k, out);
}

int64_t BucketedCache::PopInfinite(int64_t k, std::vector<int32_t>* out) {
  return PopSlotsFrom(inf_bucket_, inf_, k, out);
}

int64_t BucketedCache::ScanTop() const {
  for (int64_t w = static_cast<int64_t>(nonempty_.size()) - 1; w >= 0; --w) {
    if (nonempty_[static_cast<size_t>(w)] != 0) {
      return w * 64 + 63 - __builtin_clzll(nonempty_[static_cast<size_t>(w)]);
    }
  }
  return -1;
}

}  // namespace seer::belady_internal
