// The CPU Belady planner's cache state during the forward pass (internal to cache/; the
// rule is cache/belady_planner.h's): the cached rows as buckets by next-use batch, so an
// iteration touches only its own hits and the rows it evicts, never the whole cache.
//
//  * Bucket i (i < S) holds the rows whose next use is batch i: exactly the hits of
//    iteration i. A FiniteBucket is a list of chunks (16, 32, then 64 entries), flattened
//    into a max-heap on id only once something is evicted from it (rare).
//  * Bucket S (∞) holds the rows with no further use in the superbatch: an
//    InfiniteBucket, sorted runs on (score, id) merged geometrically.
//  * Evictions take from the highest non-empty bucket (a bitmap of non-empty buckets).
// Eviction order (the rule's key, largest first): a later bucket first; inside a finite
// bucket the larger id; inside ∞ the lower score, then the larger id.
//
// Hot calls (Push, Top, Pop) are inline here; whole-bucket work is in
// cache/belady_cache_state.cc. Ownership: each object owns its entries. Single-threaded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace seer::belady_internal {

// A cached node. aux = the position of its next access (finite buckets) or its score
// (the ∞ bucket).
struct CachedEntry {
  int64_t node;
  int32_t slot;
  uint32_t aux;
};
// Eviction order inside a finite bucket: larger id first (max-heap on node).
struct FiniteEvictsLater {
  bool operator()(const CachedEntry& a, const CachedEntry& b) const { return a.node < b.node; }
};
// Inside the ∞ bucket: lower score first, then larger id.
struct InfiniteEvictsFirst {
  bool operator()(const CachedEntry& a, const CachedEntry& b) const {
    return a.aux != b.aux ? a.aux < b.aux : a.node > b.node;
  }
};

// The ∞ bucket: rows with no further use, evicted lowest score first, then larger id.
// Rows only enter (pushes) and leave by eviction (pops of the first to evict), so it is
// kept as sorted runs of geometrically decreasing size (the logarithmic method): pushes
// are appended to a pending buffer, sorted into a run before the next pop, and runs of
// similar size are merged. A pop compares the ends of the few runs — sequential memory
// instead of a binary heap's cache misses over K rows.
class InfiniteBucket {
 public:
  void Push(const CachedEntry& e) {
    pending_.push_back(e);
    ++size_;
    best_ = -1;
  }
  int64_t size() const { return size_; }
  // The entry evicted first (size() > 0).
  const CachedEntry& Top() {
    if (best_ < 0) FindBest();
    return runs_[static_cast<size_t>(best_)].back();
  }
  CachedEntry Pop() {
    if (best_ < 0) FindBest();
    auto& run = runs_[static_cast<size_t>(best_)];
    const CachedEntry e = run.back();
    run.pop_back();
    if (run.empty()) runs_.erase(runs_.begin() + best_);
    --size_;
    best_ = -1;
    return e;
  }
  // Pops the k (<= size()) first to evict, appending their slots to `out` (the same rows
  // as k Pop()s): from the run holding the first while it stays ahead of the others'.
  void PopSlots(int64_t k, std::vector<int32_t>* out);

 private:
  // Sorts pending_ into eviction-last-first order (score descending, then id ascending).
  void SortPending();
  // Turns pending_ into a run (merging runs of similar size) and finds best_.
  void FindBest();

  static constexpr size_t kMaxRadixPending = size_t{1} << 16;  // 1 MiB of rows
  std::vector<CachedEntry> pending_;
  std::vector<std::vector<CachedEntry>> runs_;  // decreasing size
  std::vector<CachedEntry> merged_;
  int64_t size_ = 0;
  int64_t best_ = -1;  // run holding the first to evict; -1 = unknown
};

// A finite bucket's entries, in chunks of 16, 32, then 64 entries: filling a bucket
// never copies it, and its blocks are small allocations that the allocator recycles when
// buckets are released (a vector per bucket re-copied every entry while doubling and
// mapped fresh pages for every large bucket, ~10 % of the forward pass). Waste: one
// partly filled chunk (at most 1 KiB) or about half the entries, as a vector's.
// Once something is evicted from it (rare) the bucket is flattened into a max-heap on id.
class FiniteBucket {
 public:
  static constexpr uint32_t kFirstChunk = 16;
  static constexpr uint32_t kMaxChunk = 64;
  int64_t size() const { return size_; }
  bool is_heap() const { return is_heap_; }
  void Push(const CachedEntry& e) {
    ++size_;
    if (is_heap_) {
      heap_.push_back(e);
      std::push_heap(heap_.begin(), heap_.end(), FiniteEvictsLater());
      return;
    }
    if (last_fill_ == last_cap_) {
      last_cap_ = chunks_.empty() ? kFirstChunk : std::min(last_cap_ * 2, kMaxChunk);
      chunks_.emplace_back(new CachedEntry[last_cap_]);
      last_fill_ = 0;
    }
    chunks_.back()[last_fill_++] = e;
  }
  // Appends the entries as (pointer, count) spans, any order.
  void Spans(std::vector<std::pair<const CachedEntry*, size_t>>* out) const;
  // The max-heap on id (flattened on first use).
  std::vector<CachedEntry>& Heap() {
    if (!is_heap_) Flatten();
    return heap_;
  }
  void PopHeap() {
    std::pop_heap(heap_.begin(), heap_.end(), FiniteEvictsLater());
    heap_.pop_back();
    --size_;
  }
  // Removes the k (<= size()) entries evicted first (the largest ids), appending their
  // slots to `out`: the whole bucket, k heap pops when few, else a selection.
  void PopSlots(int64_t k, std::vector<int32_t>* out);
  void Clear();

 private:
  void Flatten();
  void ReleaseChunks();
  std::vector<std::unique_ptr<CachedEntry[]>> chunks_;
  uint32_t last_fill_ = 0;
  uint32_t last_cap_ = 0;
  bool is_heap_ = false;
  int64_t size_ = 0;
  std::vector<CachedEntry> heap_;
};

// The cache as buckets by next-use batch (index num_batches = ∞). Iteration i takes
// bucket i (exactly the hits of iteration i); evictions take from the highest non-empty
// bucket, so no iteration touches the whole cache.
class BucketedCache {
 public:
  explicit BucketedCache(int64_t num_batches)
      : inf_(num_batches), buckets_(static_cast<size_t>(num_batches)),
        nonempty_((static_cast<size_t>(num_batches) + 64) / 64, 0) {}

  void Push(int64_t bucket, const CachedEntry& e) {
    if (bucket == inf_) {
      inf_bucket_.Push(e);
    } else {
      buckets_[static_cast<size_t>(bucket)].Push(e);
    }
    nonempty_[static_cast<size_t>(bucket) / 64] |= uint64_t{1} << (bucket % 64);
    top_ = std::max(top_, bucket);
    ++size_;
  }
  // Finite bucket b's entries as spans (any order), appended to `out`; Release(b)
  // afterwards. Pushes during the walk must go to other buckets.
  void Peek(int64_t b, std::vector<std::pair<const CachedEntry*, size_t>>* out) const {
    buckets_[static_cast<size_t>(b)].Spans(out);
  }
  // Empties finite bucket b.
  void Release(int64_t b);
  // Highest non-empty bucket, or -1.
  int64_t TopBucket() const { return top_; }
  // The entry evicted first from bucket b (b non-empty).
  const CachedEntry& Top(int64_t b) {
    if (b == inf_) return inf_bucket_.Top();
    return buckets_[static_cast<size_t>(b)].Heap().front();
  }
  // Removes and returns Top(b).
  CachedEntry Pop(int64_t b) {
    CachedEntry e;
    bool now_empty;
    if (b == inf_) {
      e = inf_bucket_.Pop();
      now_empty = inf_bucket_.size() == 0;
    } else {
      auto& bucket = buckets_[static_cast<size_t>(b)];
      e = bucket.Heap().front();
      bucket.PopHeap();
      now_empty = bucket.size() == 0;
    }
    --size_;
    if (now_empty) MarkEmpty(b);
    return e;
  }
  int64_t size() const { return size_; }
  // Evicts min(k, size) rows of finite bucket b, first to evict first, appending their
  // slots to `out`; returns how many.
  int64_t PopFinite(int64_t b, int64_t k, std::vector<int32_t>* out);
  // Evicts min(k, rows with no further use) of the ∞ bucket, first to evict first,
  // appending their slots to `out`; returns how many.
  int64_t PopInfinite(int64_t k, std::vector<int32_t>* out);

 private:
  template <typename Bucket>
  int64_t PopSlotsFrom(Bucket& bucket, int64_t b, int64_t k, std::vector<int32_t>* out);
  // Bucket b became empty.
  void MarkEmpty(int64_t b) {
    nonempty_[static_cast<size_t>(b) / 64] &= ~(uint64_t{1} << (b % 64));
    if (b == top_) top_ = ScanTop();
  }
  int64_t ScanTop() const;

  int64_t inf_;
  std::vector<FiniteBucket> buckets_;  // finite buckets 0..S-1
  InfiniteBucket inf_bucket_;
  std::vector<uint64_t> nonempty_;
  int64_t top_ = -1;
  int64_t size_ = 0;
};

}  // namespace seer::belady_internal
