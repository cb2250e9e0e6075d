#include "cache/belady_planner.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "cache/belady_block_planner_internal.h"
#include "cache/belady_cache_state_internal.h"
#include "cache/belady_gpu_plan_internal.h"
#include "cache/next_use_sort_internal.h"
#include "cache/radix_sort_internal.h"

// The CPU planner's forward pass (pass 2, BeladyForward) and the public entry points:
// PlanBelady picks the device (cache/planner_device.h; the GPU path is
// cache/belady_gpu_plan_internal.h), the CPU path builds the next-use table (pass 1,
// cache/next_use_sort_internal.h) and then walks the batches once more over the bucketed
// cache state (cache/belady_cache_state_internal.h).
namespace seer {

namespace belady_internal {
namespace {

Status ValidateInitialSlots(const std::vector<int64_t>& initial_slots) {
  if (initial_slots.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidArgument(fmt::format("Belady planner: capacity {} rows exceeds 2^31-1",
                                       initial_slots.size()));
  }
  std::vector<int64_t> ids;
  for (size_t s = 0; s < initial_slots.size(); ++s) {
    const int64_t v = initial_slots[s];
    if (v == kFreeSlot) continue;
    if (v < 0) {
      return InvalidArgument(fmt::format("Belady planner: slot {} of the initial cache holds invalid id {}", s, v));
    }
    ids.push_back(v);
  }
  std::sort(ids.begin(), ids.end());
  auto dup = std::adjacent_find(ids.begin(), ids.end());
  if (dup != ids.end()) {
    return InvalidArgument(fmt::format("Belady planner: node {} is in two slots of the initial cache", *dup));
  }
  return Status::Ok();
}

// Pass 2: one iteration per batch, holding only the cache state and the current batch.
class BeladyForward {
 public:
  BeladyForward(const std::vector<int64_t>& initial_slots, const std::vector<NextRef>& initial_next,
                int64_t num_batches, const BeladyPlannerOptions& options)
      : num_batches_(num_batches), capacity_(static_cast<int64_t>(initial_slots.size())),
        scores_fn_(options.node_scores), slot_nodes_(initial_slots), cache_(num_batches) {
    std::vector<int64_t> occupied;
    std::vector<int32_t> free_list;
    for (int64_t s = 0; s < capacity_; ++s) {
      if (initial_slots[static_cast<size_t>(s)] == kFreeSlot) {
        free_list.push_back(static_cast<int32_t>(s));
      } else {
        occupied.push_back(initial_slots[static_cast<size_t>(s)]);
      }
    }
    std::vector<uint32_t> scores(occupied.size(), 0);
    if (scores_fn_ && !occupied.empty()) scores_fn_(occupied.data(), static_cast<int64_t>(occupied.size()), scores.data());
    size_t k = 0;
    for (int64_t s = 0; s < capacity_; ++s) {
      const int64_t v = initial_slots[static_cast<size_t>(s)];
      if (v == kFreeSlot) continue;
      const NextRef ref = initial_next[static_cast<size_t>(s)];
      cache_.Push(NextBatch(ref), CachedEntry{v, static_cast<int32_t>(s),
                                              NextBatch(ref) == num_batches_ ? scores[k] : static_cast<uint32_t>(NextPos(ref))});
      ++k;
    }
    free_slots_ = std::move(free_list);
  }

  Status Step(int64_t i, const IdSpan& ids, const NextRef* next, Changeset* cs) {
    const int64_t n = ids.size;
    hit_slot_.assign(static_cast<size_t>(n), -1);
    if (scores_fn_) {
      scores_.resize(static_cast<size_t>(n));
      if (n > 0) scores_fn_(ids.data, n, scores_.data());
    }
    auto aux_of = [&](int64_t p) -> uint32_t {
      const NextRef r = next[p];
      if (NextBatch(r) != num_batches_) return static_cast<uint32_t>(NextPos(r));
      return scores_fn_ ? scores_[static_cast<size_t>(p)] : 0u;
    };
    spans_.clear();
    cache_.Peek(i, &spans_);
    for (const auto& [entries, count] : spans_) {
      for (size_t k = 0; k < count; ++k) {
        // The positions are in random order: fetch a few entries ahead.
        constexpr size_t kAhead = 8;
        if (k + kAhead < count) {
          const uint32_t q = entries[k + kAhead].aux;
          if (q < n) {
            __builtin_prefetch(next + q);
            __builtin_prefetch(ids.data + q);
            __builtin_prefetch(hit_slot_.data() + q, 1);
          }
        }
        const CachedEntry& e = entries[k];
        const int64_t p = e.aux;
        if (p >= n || ids.data[p] != e.node) {
          return Status(StatusCode::kInternal,
                        fmt::format("Belady planner: batch {} changed between the two passes (position {})", i, p));
        }
        hit_slot_[static_cast<size_t>(p)] = e.slot;
        cache_.Push(NextBatch(next[p]), CachedEntry{e.node, e.slot, aux_of(p)});
      }
    }
    cache_.Release(i);
    misses_.clear();
    for (int64_t p = 0; p < n; ++p) {
      if (hit_slot_[static_cast<size_t>(p)] >= 0) continue;
      const int32_t b = NextBatch(next[p]);
      misses_.push_back(Miss{b, aux_of(p), ids.data[p], static_cast<int32_t>(p)});
    }
    cs->num_accesses = n;
    cs->num_misses = static_cast<int64_t>(misses_.size());

    // Cut the `excess` largest keys of C_i ∪ misses (belady_planner.h's key).
    int64_t excess = cache_.size() + static_cast<int64_t>(misses_.size()) - capacity_;
    if (excess > 0) {
      CutExcess(i, excess);
      if (!evicted_.empty()) {
        // Ascending slot; each slot's node is still in slot_nodes_ until now.
        SortSlots(&evicted_);
        cs->out_slots = evicted_;
        cs->out_ids.resize(evicted_.size());
        for (size_t k = 0; k < evicted_.size(); ++k) {
          const size_t slot = static_cast<size_t>(evicted_[k]);
          cs->out_ids[k] = slot_nodes_[slot];
          slot_nodes_[slot] = kFreeSlot;
        }
        // Free slots: the unused ones merged with the evicted ones, ascending.
        merged_free_.clear();
        std::merge(free_slots_.begin() + static_cast<std::ptrdiff_t>(free_next_), free_slots_.end(),
                   cs->out_slots.begin(), cs->out_slots.end(), std::back_inserter(merged_free_));
        free_slots_.swap(merged_free_);
        free_next_ = 0;
      }
    }
    const size_t inserts = static_cast<size_t>(
        std::min<int64_t>(static_cast<int64_t>(misses_.size()), capacity_ - cache_.size()));
    cs->in_ids.reserve(inserts);
    cs->in_positions.reserve(inserts);
    cs->in_slots.reserve(inserts);
    // The misses not cut, in ascending position (misses_ is in position order).
    for (const Miss& x : misses_) {
      if (hit_slot_[static_cast<size_t>(x.position)] == kDropped) continue;
      const int32_t slot = free_slots_[free_next_++];
      cache_.Push(x.bucket, CachedEntry{x.node, slot, x.aux});
      slot_nodes_[static_cast<size_t>(slot)] = x.node;
      cs->in_ids.push_back(x.node);
      cs->in_positions.push_back(x.position);
      cs->in_slots.push_back(slot);
    }
    return Status::Ok();
  }

  std::vector<int64_t> TakeFinalSlots() { return std::move(slot_nodes_); }

  // Sorts distinct slots ascending: LSD radix sort on the bits the capacity needs
  // (at most three passes of up to 11 bits), std::sort for small inputs.
  void SortSlots(std::vector<int32_t>* slots) {
    const size_t n = slots->size();
    if (n < 1024) {
      std::sort(slots->begin(), slots->end());
      return;
    }
    const int bits = BitWidth(static_cast<uint64_t>(std::max<int64_t>(capacity_ - 1, 1)));
    const int passes = (bits + kMaxRadixDigit - 1) / kMaxRadixDigit;
    const int digit = DigitBits(bits, kMaxRadixDigit);
    const uint32_t mask = (uint32_t{1} << digit) - 1;
    sort_scratch_.resize(n);
    int32_t* src = slots->data();
    int32_t* dst = sort_scratch_.data();
    for (int p = 0; p < passes; ++p) {
      const int shift = p * digit;
      auto digit_of = [shift, mask](int32_t slot) { return (static_cast<uint32_t>(slot) >> shift) & mask; };
      if (CountingPass(src, dst, n, digit, digit_of, &sort_count_)) std::swap(src, dst);
    }
    if (src != slots->data()) slots->swap(sort_scratch_);
  }

 private:
  // Cuts the `excess` largest keys of C_i ∪ misses_: dropped misses are marked kDropped
  // in hit_slot_, evicted rows go to evicted_. Misses are grouped by next-use bucket
  // (counting sort, highest first); a group that is cut whole needs no inner order, and
  // only a group cut in part is ordered (a heap in cut order: among ∞, lower score
  // first; then larger id) and popped one miss at a time.
  void CutExcess(int64_t i, int64_t excess) {
    const size_t m = misses_.size();
    // The ∞ group first; the finite misses are grouped by bucket (counting sort, highest
    // first) only when the cut reaches them (usually evicting cached ∞ rows suffices).
    grouped_.resize(m);
    size_t inf_count = 0;
    for (const Miss& x : misses_) {
      if (x.bucket == num_batches_) grouped_[inf_count++] = x;
    }
    bool finite_grouped = inf_count == m;
    auto group_finite = [&] {
      const size_t range = static_cast<size_t>(num_batches_ - i);  // buckets i+1 .. S-1
      group_start_.assign(range + 1, 0);
      for (const Miss& x : misses_) {
        if (x.bucket != num_batches_) ++group_start_[static_cast<size_t>(num_batches_ - x.bucket)];
      }
      group_start_[0] = inf_count;
      for (size_t k = 1; k <= range; ++k) group_start_[k] += group_start_[k - 1];
      for (const Miss& x : misses_) {
        if (x.bucket != num_batches_) grouped_[group_start_[static_cast<size_t>(num_batches_ - x.bucket) - 1]++] = x;
      }
      finite_grouped = true;
    };
    // Inside a group (one bucket): in the ∞ group lower score first, then larger id;
    // in a finite group larger id first.
    auto cut_later = [inf = num_batches_](const Miss& a, const Miss& b) {
      if (a.bucket == inf && a.aux != b.aux) return a.aux > b.aux;
      return a.node < b.node;
    };
    size_t g = 0, g_end = 0, group_next = 0;
    bool ordered = false;
    uint32_t group_max_score = 0;
    auto open_group = [&] {
      if (!finite_grouped && group_next >= inf_count) group_finite();
      g = group_next;
      g_end = g;
      group_max_score = 0;
      const size_t filled = finite_grouped ? m : inf_count;  // grouped_[filled..] not written yet
      while (g_end < filled && grouped_[g_end].bucket == grouped_[g].bucket) {
        group_max_score = std::max(group_max_score, grouped_[g_end].aux);
        ++g_end;
      }
      group_next = g_end;
      ordered = false;
    };
    auto drop = [&](const Miss& x) { hit_slot_[static_cast<size_t>(x.position)] = kDropped; };
    auto evict = [&](int64_t top) {
      evicted_.push_back(cache_.Pop(top).slot);
    };
    open_group();
    evicted_.clear();
    while (excess > 0) {
      const int64_t top = cache_.TopBucket();
      if (g == g_end || top > grouped_[g].bucket) {
        // Every remaining miss key is below the top bucket's: evict from it, at once.
        excess -= top == num_batches_ ? cache_.PopInfinite(excess, &evicted_)
                                      : cache_.PopFinite(top, excess, &evicted_);
        continue;
      }
      const int32_t gb = grouped_[g].bucket;
      // Keys of this group vs the cached rows of bucket `top` (<= gb): a miss loses to
      // a cached row of the same next use; in the ∞ bucket the score decides first.
      const bool by_score = top == gb && gb == num_batches_;
      if (!ordered && (!by_score || group_max_score <= cache_.Top(top).aux) &&
          static_cast<int64_t>(g_end - g) <= excess) {
        for (size_t k = g; k < g_end; ++k) drop(grouped_[k]);
        excess -= static_cast<int64_t>(g_end - g);
        open_group();
        continue;
      }
      if (!ordered) {
        std::make_heap(grouped_.begin() + static_cast<std::ptrdiff_t>(g),
                       grouped_.begin() + static_cast<std::ptrdiff_t>(g_end), cut_later);
        ordered = true;
      }
      if (!by_score || grouped_[g].aux <= cache_.Top(top).aux) {
        drop(grouped_[g]);
        std::pop_heap(grouped_.begin() + static_cast<std::ptrdiff_t>(g),
                      grouped_.begin() + static_cast<std::ptrdiff_t>(g_end), cut_later);
        --g_end;
        if (g == g_end) open_group();
      } else {
        evict(top);
      }
      --excess;
    }
  }

 private:
  static constexpr int32_t kDropped = -2;  // hit_slot_ mark: a miss cut from the cache
  struct Miss {
    int32_t bucket;   // next-use batch (num_batches = ∞)
    uint32_t aux;     // as CachedEntry::aux: the score (∞) or the next use's position
    int64_t node;
    int32_t position;
  };
  int64_t num_batches_;
  int64_t capacity_;
  const NodeScoreFn& scores_fn_;
  std::vector<int64_t> slot_nodes_;
  BucketedCache cache_;
  // Free slots, ascending; free_slots_[free_next_..] are still free.
  std::vector<int32_t> free_slots_;
  size_t free_next_ = 0;
  std::vector<int32_t> merged_free_;
  std::vector<int32_t> hit_slot_;
  std::vector<std::pair<const CachedEntry*, size_t>> spans_;
  std::vector<uint32_t> scores_;
  std::vector<Miss> misses_;
  std::vector<Miss> grouped_;
  std::vector<size_t> group_start_;
  std::vector<int32_t> evicted_;       // slots evicted by the current iteration
  std::vector<int32_t> sort_scratch_;
  std::vector<size_t> sort_count_;
};

Result<BeladyPlan> PlanBeladyCpu(const std::vector<int64_t>& initial_slots, BatchIdSource& source,
                                 const BeladyPlannerOptions& options, int64_t accesses_hint = -1) {
  SEER_RETURN_IF_ERROR(ValidateInitialSlots(initial_slots));
  if (options.read_blocks.enabled()) return PlanBeladyBlocks(initial_slots, source, options);
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<NextUseTable> table,
                        NextUseTable::Build(initial_slots, source, options.runtime_dir,
                                            options.working_memory_bytes, accesses_hint));
  const int64_t num_batches = table->num_batches();
  BeladyPlan plan;
  plan.changesets = ChangesetStore(options.changeset_budget_bytes, options.spill_dir);
  BeladyForward forward(initial_slots, table->initial_next(), num_batches, options);
  SEER_RETURN_IF_ERROR(source.Rewind());
  for (int64_t i = 0; i < num_batches; ++i) {
    SEER_ASSIGN_OR_RETURN(IdSpan ids, source.Next());
    if (ids.size != table->batch_size(i)) {
      return InvalidArgument(fmt::format(
          "Belady planner: batch {} had {} ids on the first pass and {} on the second", i,
          table->batch_size(i), ids.size));
    }
    SEER_ASSIGN_OR_RETURN(const NextRef* next, table->BatchNext(i));
    Changeset cs;
    SEER_RETURN_IF_ERROR(forward.Step(i, ids, next, &cs));
    plan.num_accesses += cs.num_accesses;
    plan.num_misses += cs.num_misses;
    SEER_RETURN_IF_ERROR(plan.changesets.Append(std::move(cs)));
  }
  plan.final_slots = forward.TakeFinalSlots();
  plan.device_used = PlannerDevice::kCpu;
  return plan;
}

}  // namespace
}  // namespace belady_internal

Result<BeladyPlan> PlanBelady(const std::vector<int64_t>& initial_slots,
                              const std::vector<IdSpan>& batches,
                              const BeladyPlannerOptions& options) {
  const PlannerDevice device = ResolvePlannerDevice(options.device);
  if (device == PlannerDevice::kGpu) {
    if (options.read_blocks.enabled() && options.read_blocks.num_rows <= 0) {
      return InvalidArgument("Belady planner: block reads need the number of rows");
    }
    SEER_RETURN_IF_ERROR(belady_internal::ValidateInitialSlots(initial_slots));
    for (size_t b = 0; b < batches.size(); ++b) {
      if (batches[b].size < 0 || batches[b].size > std::numeric_limits<int32_t>::max()) {
        return InvalidArgument(fmt::format("Belady planner: batch {} has invalid size {}", b, batches[b].size));
      }
    }
    auto gpu = belady_internal::PlanBeladyOnGpu(initial_slots, batches, options);
    // auto: fall back to the CPU when the GPU path cannot handle this input.
    if (gpu.ok() || options.device == PlannerDevice::kGpu ||
        gpu.status().code() != StatusCode::kUnsupported) {
      return gpu;
    }
  }
  VectorBatchIdSource source(batches);
  int64_t accesses = 0;
  for (const IdSpan& b : batches) accesses += std::max<int64_t>(b.size, 0);
  return belady_internal::PlanBeladyCpu(initial_slots, source, options, accesses);
}

Result<BeladyPlan> PlanBeladyStreaming(const std::vector<int64_t>& initial_slots,
                                       BatchIdSource& source,
                                       const BeladyPlannerOptions& options) {
  return belady_internal::PlanBeladyCpu(initial_slots, source, options);
}

}  // namespace seer
