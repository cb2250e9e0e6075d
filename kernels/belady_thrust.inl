// The Belady planner as Thrust algorithms plus SEER_HD (__host__ __device__) functors:
// ONE source, compiled twice.
//   * kernels/belady_gpu.cu includes it under nvcc (Thrust's CUDA device system, the
//     Thrust bundled with the CUDA toolkit) -> PlanBeladyGpu;
//   * kernels/belady_thrust_host.cc includes it under the host compiler with
//     THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_TBB (Debian's libthrust-dev, TBB threads)
//     -> PlanBeladyThrustHost, in every build, so CI runs this exact code.
// No raw kernel launches and no CUB calls: only Thrust algorithms, so the code compiles
// with Thrust 1.17 (Debian) and CCCL 3.x (CUDA 13) alike.
//
// Before including: #define SEER_THRUST_BACKEND <namespace name> (one per backend, so the
// two copies never share a symbol). Defines
//   GpuPlanCode seer::kernels::SEER_THRUST_BACKEND::PlanBeladyThrust(input, output, error)
// which throws what the backend throws (std::bad_alloc, thrust::system_error), and
//   GpuPlanCode seer::kernels::SEER_THRUST_BACKEND::PlanCatching(error_message, ...)
// the includer's entry point shell, which catches.
//
// The rule is tie_rule / cache/belady_planner.h's: C_{i+1} = the K smallest of C_i ∪ ids_i
// under (0, next_use, v ∉ C_i, v) for a finite next use, (1, -score(v), v ∉ C_i, v) for
// none. It is packed into two words, compared lexicographically:
//   hi = next_use                       (finite)
//   hi = 2^63 | (2^32 - 1 - score)      (no further use in this superbatch)
//   lo = (v ∉ C_i) << 63 | v
//
// Algorithm (per superbatch of S batches, T accesses, K slots):
//   1. next access of every access: stable sort of (id, position); duplicates inside a
//      batch are adjacent there and rejected.
//   2. The cache is kept as an array of entries SORTED by key. A cached node's key does
//      not change until it is hit (its next use stays, its flag is 0, its score is
//      static), and every cached key has next_use >= i at iteration i, so the hits of
//      iteration i are exactly the prefix with hi == i (at most n entries).
//   3. Per iteration: the candidates N = this batch's accesses (hits with their new key,
//      misses with flag 1) are built and sorted (two radix passes on the key words,
//      O(n)); R = the cached entries
//      that were not hit (still sorted). The kept set is the first K of merge(R, N): its
//      split (a from R, b from N) is found by one binary search (co-rank) without
//      merging. Cut: R[a..] and the hits in N[b..] are evicted (listed by ascending
//      slot), the misses in N[b..] are not inserted. Inserted: the misses in N[..b) in
//      ascending position take the smallest free slots (a sorted free list, merged with
//      the slots just freed, themselves radix-sorted). The new cache is merge(R[..a),
//      N[..b) with flags cleared), N[..b) itself a merge of its hits and its misses.
//   The host waits once per iteration, for the cut (h, a, b and the hits in N[0, b): four
//   numbers computed on the device, from which it sizes every later step); the changesets
//   accumulate on the device and are copied out in chunks (BeladyGpuInput::changeset_chunk).
//   Work per iteration: O(n) sorts and scans + O(K) for the merges; memory about 32 bytes
//   per access (during step 1) + 72 bytes per slot + 92 bytes per access of the largest
//   batch + 28 bytes per changeset entry of a chunk.
//
// Block rule (BeladyGpuInput::block_bytes > 0; kernels/belady_gpu.h): step 1's accesses
// sorted by (id, position) are kept. Per batch, after the hits are marked and before the
// candidates are built (B1-B5 below): each miss's block range [FirstBlock, LastBlock] (a
// hit's is empty), sorted by start; the running max of their ends makes the runs of
// consecutive blocks read (a range opens a run when it is past the max end before it + 1)
// and, per range, the blocks it adds to those before it; the rows whose FIRST block is
// one of those are listed once each, ascending (count R: one wait). Row t becomes
// candidate N[n + t]: a free row keyed (next use, 1, v) when its last block is in its run
// too, it has an access after batch i and none in it (one binary search in the sorted
// accesses, from (v, offsets[i])), and the sorted cache does not hold the key (next use,
// v) (a cached row not used in batch i carries exactly that key); otherwise keyed kNoKey,
// sorted past every candidate, and the cut stops before the first kNoKey. The free rows
// hold positions n + t, so ranked after the misses in ascending id they take the next
// free slots and go to block_ids / block_slots. Everything else (sort, cut, evictions,
// merge) runs over N = n + R entries unchanged.
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_free.h>
#include <thrust/device_malloc.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/functional.h>
#include <thrust/gather.h>
#include <thrust/merge.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>
#include <thrust/transform_scan.h>
#if defined(__CUDACC__)
#include <thrust/system/cuda/error.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/belady_gpu.h"

#ifndef SEER_THRUST_BACKEND
#error "define SEER_THRUST_BACKEND before including kernels/belady_thrust.inl"
#endif

#ifndef SEER_HD
#if defined(__CUDACC__)
#define SEER_HD __host__ __device__
#else
#define SEER_HD
#endif
#endif

namespace seer::kernels::SEER_THRUST_BACKEND {
namespace th = THRUST_NS_QUALIFIER;
namespace {

constexpr uint64_t kTopBit = uint64_t{1} << 63;
constexpr uint64_t kIdMask = kTopBit - 1;
constexpr int64_t kNoAccess = std::numeric_limits<int64_t>::max();
// Block rule: the block range of a hit (none), and the key of a row of the batch's blocks
// that is not a candidate (sorted after every real key: those have hi < 2^64 - 1).
constexpr int64_t kNoBlock = std::numeric_limits<int64_t>::max();
constexpr uint64_t kNoKey = ~uint64_t{0};
// Changeset entries held on the device before they are copied out (each side): 2^21
// entries are 32 MiB inserted + 24 MiB evicted, a few copies per superbatch.
constexpr int64_t kChangesetChunk = int64_t{1} << 21;

// A cache entry, or a candidate of the current iteration, with its key (hi, lo).
struct Entry {
  uint64_t hi;
  uint64_t lo;      // bit 63: not cached (a miss); bits 0-62: the node id
  int64_t next_g;   // global position of the node's next access, -1 = none
  int32_t slot;     // -1: a miss not (yet) placed
  int32_t pos;      // position in the current batch (candidates only)
};

struct KeyLess {
  SEER_HD bool operator()(const Entry& a, const Entry& b) const {
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
  }
};
struct MinOp {
  SEER_HD int64_t operator()(int64_t a, int64_t b) const { return a < b ? a : b; }
};

// The batch holding global access position g: the largest b < S with offsets[b] <= g
// (empty batches share an offset with the next one).
SEER_HD inline int64_t BatchOf(const int64_t* offsets, int64_t num_batches, int64_t g) {
  int64_t lo = 0, hi = num_batches;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= g) lo = mid; else hi = mid;
  }
  return lo;
}

// hi word of the key of a node whose next access is at global position next_g.
SEER_HD inline uint64_t HiKey(const int64_t* offsets, int64_t num_batches, int64_t next_g,
                              uint32_t score) {
  return next_g < 0 ? (kTopBit | static_cast<uint64_t>(0xFFFFFFFFu - score))
                    : static_cast<uint64_t>(BatchOf(offsets, num_batches, next_g));
}

// 1. After the stable sort by id: next_g[g_t] = g_{t+1} when the same id follows.
struct LinkNext {
  const int64_t* sorted_ids;
  const int64_t* sorted_g;
  int64_t total;
  int64_t* next_g;
  SEER_HD void operator()(int64_t t) const {
    const bool same = t + 1 < total && sorted_ids[t + 1] == sorted_ids[t];
    next_g[sorted_g[t]] = same ? sorted_g[t + 1] : -1;
  }
};
// The later access of a pair that repeats an id inside one batch, else kNoAccess.
struct DuplicateAt {
  const int64_t* sorted_ids;
  const int64_t* sorted_g;
  int64_t total;
  const int64_t* offsets;
  int64_t num_batches;
  SEER_HD int64_t operator()(int64_t t) const {
    if (t + 1 >= total || sorted_ids[t + 1] != sorted_ids[t]) return kNoAccess;
    const int64_t a = sorted_g[t], b = sorted_g[t + 1];
    return BatchOf(offsets, num_batches, a) == BatchOf(offsets, num_batches, b) ? b : kNoAccess;
  }
};

struct SlotOccupied {
  const int64_t* slot_ids;
  SEER_HD bool operator()(int64_t s) const { return slot_ids[s] >= 0; }
};
struct SlotFree {
  const int64_t* slot_ids;
  SEER_HD bool operator()(int64_t s) const { return slot_ids[s] < 0; }
};

// 2. C0: entry k for occupied slot s = occupied[k], keyed by the node's first access.
struct InitialEntry {
  const int64_t* slot_ids;
  const uint32_t* initial_scores;  // may be null (every score 0)
  const int32_t* occupied;
  const int64_t* sorted_ids;
  const int64_t* sorted_g;
  int64_t total;
  const int64_t* offsets;
  int64_t num_batches;
  Entry* entries;
  SEER_HD void operator()(int64_t k) const {
    const int32_t s = occupied[k];
    const int64_t v = slot_ids[s];
    int64_t lo = 0, hi = total;  // first t with sorted_ids[t] >= v
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (sorted_ids[mid] < v) lo = mid + 1; else hi = mid;
    }
    const int64_t first_g = (lo < total && sorted_ids[lo] == v) ? sorted_g[lo] : -1;
    const uint32_t score = initial_scores != nullptr ? initial_scores[s] : 0u;
    entries[k] = Entry{HiKey(offsets, num_batches, first_g, score), static_cast<uint64_t>(v),
                       first_g, s, 0};
  }
};

// 3a. Hits: the cached entries whose next access lies in this batch. They are the prefix
// of the sorted cache with hi == i, at most n long: the functor runs over the first
// min(n, occupied) entries and skips the others, so the host need not know the hit count.
struct MarkHit {
  const Entry* entries;
  uint64_t batch;
  int64_t base;
  int32_t* pos_slot;
  SEER_HD void operator()(int64_t e) const {
    if (entries[e].hi == batch) pos_slot[entries[e].next_g - base] = entries[e].slot;
  }
};

// 3b. Candidate p of the batch: a hit keeps its slot and takes the key of its next
// access; a miss gets flag 1.
struct BuildCandidate {
  const int64_t* ids;
  const int64_t* next_g;
  const uint32_t* scores;  // may be null (every score 0)
  const int64_t* offsets;
  int64_t num_batches;
  int64_t base;
  const int32_t* pos_slot;
  Entry* out;
  uint64_t* lo_keys;  // out[p].lo, the first radix pass's key
  SEER_HD void operator()(int64_t p) const {
    const int64_t g = base + p;
    const int64_t nxt = next_g[g];
    const uint32_t score = scores != nullptr ? scores[g] : 0u;
    const int32_t slot = pos_slot[p];
    const uint64_t flag = slot >= 0 ? 0 : kTopBit;
    out[p] = Entry{HiKey(offsets, num_batches, nxt, score), flag | static_cast<uint64_t>(ids[g]),
                   nxt, slot, static_cast<int32_t>(p)};
    lo_keys[p] = out[p].lo;
  }
};
// The candidates sorted by key (hi, lo) as two radix passes on integer keys instead of a
// comparator sort of 32-byte entries: sort the index by lo, then stable-sort it by hi.
// Exact because lo is unique among a batch's candidates (ids are unique in a batch), so
// the first pass leaves no ties for stability to break, and the second keeps lo's order
// among equal hi. HiOf feeds the second pass, in the first pass's order. (Block rule: a
// refused row's lo = flag | t may equal a miss's; their hi differ (kNoKey), so the second
// pass orders them, and lo is unique among the entries of any one hi.)
struct HiOf {
  const Entry* entries;
  SEER_HD uint64_t operator()(int32_t k) const { return entries[k].hi; }
};
// 1 for a cached candidate (a hit): scanned into hits_before, the number of hits in
// N[0..k], which places every hit among the evicted and counts them without a copy_if.
struct CachedAsOne {
  SEER_HD int32_t operator()(const Entry& e) const { return (e.lo & kTopBit) == 0 ? 1 : 0; }
};

// 3c. The cut, in one thread, written to result[0..4): the hit count h (all hits are in
// N), the split a (from R = entries[h..occupied)) + b (from N) of the first `keep`
// elements of merge(R, N) (co-rank: one binary search, keys distinct), and the hits in
// N[0, b). The host reads these four numbers in one copy, its only wait per batch: every
// other size of the batch follows from them.
// Block rule (free_before non-null): N also holds the batch's candidate free rows, and,
// sorted past them (hi = kNoKey), the rows of its blocks that failed the rule; the cut
// sees only the candidates before the first kNoKey, and also writes result[4] = the free
// rows in N[0, b) (admitted) and result[5] = the free rows that are candidates.
struct Cut {
  const Entry* entries;
  int64_t occupied;
  const Entry* n_sorted;
  int64_t n_size;
  const int32_t* hits_before;
  int64_t keep;
  int64_t* result;
  const int32_t* free_before = nullptr;  // block rule only: free rows in N[0..k]
  int64_t batch_size = 0;                // block rule only: n, the batch's accesses
  SEER_HD void operator()(int64_t) const {
    const int64_t h = hits_before[n_size - 1];
    const int64_t m = free_before != nullptr ? Candidates() : n_size;  // N's candidates
    const Entry* r = entries + h;
    const int64_t r_size = occupied - h;
    int64_t a = r_size;
    if (r_size + m > keep) {
      KeyLess less;
      int64_t lo = keep > m ? keep - m : 0;
      int64_t hi = keep < r_size ? keep : r_size;
      while (lo < hi) {  // first a with !(R[a] < N[keep - a - 1])
        const int64_t mid = lo + (hi - lo) / 2;
        const int64_t b = keep - mid;
        if (b > 0 && less(r[mid], n_sorted[b - 1])) lo = mid + 1; else hi = mid;
      }
      a = lo;
    }
    const int64_t b = r_size + m > keep ? keep - a : m;
    result[0] = h;
    result[1] = a;
    result[2] = b;
    result[3] = b > 0 ? hits_before[b - 1] : 0;
    if (free_before != nullptr) {
      result[4] = b > 0 ? free_before[b - 1] : 0;
      result[5] = m - batch_size;
    }
  }

 private:
  // The first entry of N keyed kNoKey (those are sorted last); never before the batch's n
  // accesses, which are all candidates.
  SEER_HD int64_t Candidates() const {
    int64_t lo = batch_size, hi = n_size;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (n_sorted[mid].hi != kNoKey) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
};

// 3d. Evicted: R[a, r) then the hits in N[b, n) (in N's order: any order would do, the
// list is sorted by slot next), as (slot, id) pairs straight into the changeset buffers.
// Slots are unique, so sorting the int32 slots with the ids alongside (a radix sort) gives
// the order of the rule's "ascending slot".
struct EvictedOfCache {
  const Entry* r_cut;  // R[a..]
  int32_t* out_slots;
  int64_t* out_ids;
  SEER_HD void operator()(int64_t k) const {
    out_slots[k] = r_cut[k].slot;
    out_ids[k] = static_cast<int64_t>(r_cut[k].lo & kIdMask);
  }
};
struct ScatterEvictedHits {
  const Entry* cand;
  const int32_t* hits_before;
  int64_t first;       // where the first evicted hit goes (r - a)
  int64_t hits_in_b;   // the hits in N[0, b), not evicted
  int32_t* out_slots;
  int64_t* out_ids;
  SEER_HD void operator()(int64_t k) const {
    if ((cand[k].lo & kTopBit) != 0) return;
    const int64_t dst = first + hits_before[k] - 1 - hits_in_b;
    out_slots[dst] = cand[k].slot;
    out_ids[dst] = static_cast<int64_t>(cand[k].lo & kIdMask);
  }
};

// 3e. Inserted misses: ins_idx[pos] = index in N of each kept miss.
struct MarkInserted {
  const Entry* cand;
  int32_t* ins_idx;
  SEER_HD void operator()(int64_t k) const {
    if ((cand[k].lo & kTopBit) != 0) ins_idx[cand[k].pos] = static_cast<int32_t>(k);
  }
};
struct InsertedAsOne {
  SEER_HD int32_t operator()(int32_t idx) const { return idx >= 0 ? 1 : 0; }
};
// The inserted miss at position p is the k-th (ascending position; k = ins_rank[p] - 1,
// the inclusive scan of the marks): it takes the k-th smallest free slot, becomes a cached
// entry (flag cleared), and is written to this batch's part of the changeset buffers.
struct PlaceInserted {
  const int32_t* ins_idx;
  const int32_t* ins_rank;
  const int32_t* free_slots;
  Entry* cand;
  const int64_t* ids;
  int64_t base;
  int64_t* in_ids;
  int32_t* in_positions;
  int32_t* in_slots;
  // Block rule: positions p >= batch_size are free rows (ascending id), ranked after the
  // misses_in inserted misses; they go to block_ids / block_slots. Off: p < batch_size.
  int64_t batch_size = 0;
  int64_t misses_in = 0;
  int64_t* block_ids = nullptr;
  int32_t* block_slots = nullptr;
  SEER_HD void operator()(int64_t p) const {
    const int32_t idx = ins_idx[p];
    if (idx < 0) return;
    const int32_t k = ins_rank[p] - 1;
    Entry& e = cand[idx];
    e.slot = free_slots[k];
    e.lo &= kIdMask;
    if (block_ids != nullptr && p >= batch_size) {
      block_ids[k - misses_in] = static_cast<int64_t>(e.lo);
      block_slots[k - misses_in] = e.slot;
      return;
    }
    in_ids[k] = ids[base + p];
    in_positions[k] = static_cast<int32_t>(p);
    in_slots[k] = e.slot;
  }
};
// After placement, N[0, b) holds the kept hits and the inserted misses (flags now
// cleared), each still in key order: clearing the same bit keeps the misses' order. So
// they are split (hits first, by the hits_before scan: N[k] is a hit when the scan steps
// at k) and merged, O(b), instead of re-sorted.
struct SplitKept {
  const Entry* cand;
  const int32_t* hits_before;
  int64_t hits_in_b;
  Entry* out;
  SEER_HD void operator()(int64_t k) const {
    const int32_t before = k > 0 ? hits_before[k - 1] : 0;
    const bool hit = hits_before[k] != before;
    out[hit ? hits_before[k] - 1 : hits_in_b + k - hits_before[k]] = cand[k];
  }
};
// ---- The block rule (BeladyGpuInput::block_bytes; kernels/belady_gpu.h) ----------------
// The geometry of cache/read_blocks.h, same integer arithmetic: row v is bytes
// [v*row_bytes, (v+1)*row_bytes), block b bytes [b*block_bytes, (b+1)*block_bytes).
struct BlockGeometry {
  int64_t row_bytes;
  int64_t block_bytes;
  int64_t num_rows;
  SEER_HD int64_t FirstBlock(int64_t row) const { return row * row_bytes / block_bytes; }
  SEER_HD int64_t LastBlock(int64_t row) const { return ((row + 1) * row_bytes - 1) / block_bytes; }
  // The first row whose first block is >= b: ceil(b * block_bytes / row_bytes).
  SEER_HD int64_t FirstRowFrom(int64_t b) const { return (b * block_bytes + row_bytes - 1) / row_bytes; }
};
struct MaxOp {
  SEER_HD int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};
// B1. The blocks [starts[p], ends[p]] the access at position p reads: its row's, for a miss
// (pos_slot < 0); none for a hit (kNoBlock, -1: sorted past every miss's).
struct MissBlocks {
  const int64_t* ids;
  int64_t base;
  const int32_t* pos_slot;
  BlockGeometry geometry;
  int64_t* starts;
  int64_t* ends;
  SEER_HD void operator()(int64_t p) const {
    if (pos_slot[p] >= 0) {
      starts[p] = kNoBlock;
      ends[p] = -1;
      return;
    }
    const int64_t v = ids[base + p];
    starts[p] = geometry.FirstBlock(v);
    ends[p] = geometry.LastBlock(v);
  }
};
// B2. With the ranges sorted by start and reach = the inclusive running max of their ends:
// range k opens a run (a maximal stretch of consecutive blocks read) when it neither
// overlaps nor touches the ranges before it. Scanned into run_id (1-based).
struct OpensRun {
  const int64_t* starts;
  const int64_t* reach;
  SEER_HD int32_t operator()(int64_t k) const {
    if (starts[k] == kNoBlock) return 0;
    return k == 0 || starts[k] > reach[k - 1] + 1 ? 1 : 0;
  }
};
// B3. The last block of each run, written by the run's last range.
struct RunEnd {
  const int64_t* starts;
  const int64_t* reach;
  const int32_t* run_id;
  int64_t n;
  int64_t* run_end;
  SEER_HD void operator()(int64_t k) const {
    if (starts[k] == kNoBlock) return;
    if (k + 1 >= n || starts[k + 1] == kNoBlock || run_id[k + 1] != run_id[k]) run_end[run_id[k] - 1] = reach[k];
  }
};
// B4. The blocks range k adds to those before it, [max(start, reach[k-1] + 1), end]
// (disjoint and ascending in k, together every block read), and the rows < num_rows whose
// FIRST block lies there: [row_lo[k], row_lo[k] + row_count[k]), ascending in k too. Each
// row whose first block is read is counted exactly once.
struct RangeRows {
  const int64_t* starts;
  const int64_t* ends;
  const int64_t* reach;
  BlockGeometry geometry;
  int64_t* row_lo;
  int64_t* row_count;
  SEER_HD void operator()(int64_t k) const {
    int64_t first = 0, count = 0;
    if (starts[k] != kNoBlock) {
      const int64_t lo_block = k > 0 && reach[k - 1] + 1 > starts[k] ? reach[k - 1] + 1 : starts[k];
      if (lo_block <= ends[k]) {
        first = geometry.FirstRowFrom(lo_block);
        int64_t end = geometry.FirstRowFrom(ends[k] + 1);
        if (end > geometry.num_rows) end = geometry.num_rows;
        count = end > first ? end - first : 0;
      }
    }
    row_lo[k] = first;
    row_count[k] = count;
  }
};
// B5. Row t of the enumeration (row_off: the inclusive scan of row_count) as candidate
// N[n + t]: a free row (key (next use, 1, v), position n + t, so the admitted ones rank
// after the misses, in ascending id) when it lies wholly inside its run (its last block
// read too), is not in ids_i (no access of it in [base, base + n)), has a next access
// (the first at or after base, from the accesses sorted by (id, position)), and is not
// cached: a cached row not used in batch i is keyed by that same next use, so C_i holds
// it iff the sorted cache holds the key (next use, v). Otherwise keyed (kNoKey, 1, t):
// after every candidate, never cut into.
struct BuildFreeRow {
  const int64_t* row_lo;
  const int64_t* row_count;
  const int64_t* row_off;
  const int32_t* run_id;
  const int64_t* run_end;
  int64_t num_ranges;
  BlockGeometry geometry;
  const int64_t* sorted_ids;
  const int64_t* sorted_g;
  int64_t total;
  const int64_t* offsets;
  int64_t num_batches;
  int64_t base;
  int64_t n;
  const Entry* entries;  // C_i, sorted by key
  int64_t occupied;
  Entry* out;         // N, unsorted; row t goes to out[n + t]
  uint64_t* lo_keys;  // out[].lo, as BuildCandidate
  SEER_HD void operator()(int64_t t) const {
    int64_t lo = 0, hi = num_ranges;  // the range of row t: first k with row_off[k] > t
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (row_off[mid] <= t) lo = mid + 1; else hi = mid;
    }
    const int64_t k = lo;
    const int64_t v = row_lo[k] + (t - (row_off[k] - row_count[k]));
    Entry e{kNoKey, kTopBit | static_cast<uint64_t>(t), -1, -1, static_cast<int32_t>(n + t)};
    if (geometry.LastBlock(v) <= run_end[run_id[k] - 1]) {
      lo = 0;
      hi = total;  // first access (id, g) >= (v, base)
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (sorted_ids[mid] < v || (sorted_ids[mid] == v && sorted_g[mid] < base)) lo = mid + 1; else hi = mid;
      }
      if (lo < total && sorted_ids[lo] == v && sorted_g[lo] >= base + n) {
        const int64_t g = sorted_g[lo];
        const Entry key{static_cast<uint64_t>(BatchOf(offsets, num_batches, g)), static_cast<uint64_t>(v), g, -1, 0};
        KeyLess less;
        int64_t c_lo = 0, c_hi = occupied;  // first cached entry >= key
        while (c_lo < c_hi) {
          const int64_t mid = c_lo + (c_hi - c_lo) / 2;
          if (less(entries[mid], key)) c_lo = mid + 1; else c_hi = mid;
        }
        const bool cached = c_lo < occupied && entries[c_lo].hi == key.hi && entries[c_lo].lo == key.lo;
        if (!cached) e = Entry{key.hi, kTopBit | key.lo, g, -1, static_cast<int32_t>(n + t)};
      }
    }
    out[n + t] = e;
    lo_keys[n + t] = e.lo;
  }
};
// 1 for a candidate free row (a miss-flagged candidate past the batch's n positions):
// scanned into free_before, from which the cut counts the admitted ones.
struct FreeRowAsOne {
  int64_t n;
  SEER_HD int32_t operator()(const Entry& e) const { return (e.lo & kTopBit) != 0 && e.pos >= n ? 1 : 0; }
};

struct WriteSlot {
  const Entry* entries;
  int64_t* slot_ids;
  SEER_HD void operator()(int64_t e) const {
    slot_ids[entries[e].slot] = static_cast<int64_t>(entries[e].lo & kIdMask);
  }
};

template <typename T>
T* Raw(th::device_vector<T>& v) { return th::raw_pointer_cast(v.data()); }

inline th::counting_iterator<int64_t> Count(int64_t k) { return th::counting_iterator<int64_t>(k); }

// Appends the first `count` elements of d to *out (device -> host).
template <typename T>
void Append(th::device_vector<T>& d, int64_t count, std::vector<T>* out) {
  const size_t old = out->size();
  out->resize(old + static_cast<size_t>(count));
  if (count > 0) th::copy(d.begin(), d.begin() + count, out->data() + old);
}

// The algorithms' temporary storage (sort, merge, copy_if, scans), reused across the
// iterations instead of one device malloc/free pair per call: on CUDA each cudaFree
// synchronizes the device, and a superbatch makes ~10 such calls per batch. Blocks come
// from the device system (thrust::device_malloc: cudaMalloc, or the heap under TBB),
// are handed out best fit, returned to the pool on deallocate and freed when the pool
// goes (the end of one PlanBeladyThrust call). Not thread-safe: one pool per call.
class TempPool {
 public:
  using value_type = char;

  TempPool() = default;
  TempPool(const TempPool&) = delete;
  TempPool& operator=(const TempPool&) = delete;
  ~TempPool() {
    for (auto& [ptr, bytes] : sizes_) th::device_free(th::device_pointer_cast(ptr));
  }

  char* allocate(std::ptrdiff_t num_bytes) {
    ++requests_;
    const size_t want = RoundUp(static_cast<size_t>(std::max<std::ptrdiff_t>(num_bytes, 1)));
    auto it = free_.lower_bound(want);
    if (it != free_.end() && it->first <= 2 * want) {  // best fit, at most 2x the request
      char* p = it->second;
      free_.erase(it);
      return p;
    }
    char* p = th::raw_pointer_cast(th::device_malloc<char>(want));
    sizes_.emplace(p, want);
    ++device_allocations_;
    held_bytes_ += static_cast<int64_t>(want);
    return p;
  }
  void deallocate(char* ptr, size_t) { free_.emplace(sizes_.at(ptr), ptr); }

  int64_t requests() const { return requests_; }
  int64_t device_allocations() const { return device_allocations_; }
  int64_t held_bytes() const { return held_bytes_; }

 private:
  static size_t RoundUp(size_t n) {  // 256-byte multiples, then powers of two above 1 MiB
    n = (n + 255) & ~size_t{255};
    if (n <= (size_t{1} << 20)) return n;
    size_t p = size_t{1} << 20;
    while (p < n) p <<= 1;
    return p;
  }
  std::multimap<size_t, char*> free_;  // size -> block
  std::map<char*, size_t> sizes_;      // every block this pool owns
  int64_t requests_ = 0;
  int64_t device_allocations_ = 0;
  int64_t held_bytes_ = 0;
};

// Phase timing (BeladyGpuInput::time_phases): Charge(phase) adds the time since the
// previous Charge to that phase. On CUDA it first waits for the device, so the work queued
// in a phase is charged to it (not to the next phase that waits); the host backend's
// algorithms return when done, so the clock alone is enough there. Off: does nothing.
class PhaseClock {
 public:
  PhaseClock(bool on, BeladyGpuOutput* out) : on_(on), out_(out) {
    out_->phase_seconds.fill(0.0);
    last_ = std::chrono::steady_clock::now();
  }
  void Charge(int phase) {
    if (!on_) return;
#if defined(__CUDACC__)
    const cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess) throw th::system_error(status, th::cuda_category(), "phase timing");
#endif
    const auto now = std::chrono::steady_clock::now();
    out_->phase_seconds[static_cast<size_t>(phase)] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  bool on_;
  BeladyGpuOutput* out_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace

GpuPlanCode PlanBeladyThrust(const BeladyGpuInput& in, BeladyGpuOutput* out, std::string* error) {
  const int64_t S = in.num_batches;
  const int64_t K = in.capacity;
  const int64_t T = S > 0 ? in.batch_offsets[S] : 0;
  int64_t max_batch = 0;
  for (int64_t i = 0; i < S; ++i) {
    max_batch = std::max(max_batch, in.batch_offsets[i + 1] - in.batch_offsets[i]);
  }
  const size_t k_alloc = static_cast<size_t>(std::max<int64_t>(K, 1));
  const size_t n_alloc = static_cast<size_t>(std::max<int64_t>(max_batch, 1));
  // The block rule (kernels/belady_gpu.h): off, none of its steps or buffers exist.
  const bool blocks = in.block_bytes > 0 && in.block_row_bytes > 0;
  const BlockGeometry geometry{in.block_row_bytes, in.block_bytes, in.block_num_rows};

  // Every algorithm below draws its temporary storage from `pool`. Under nvcc the policy
  // is par_nosync: Thrust skips its synchronize after each algorithm; everything runs in
  // order on the default stream, and the host waits only where it reads a result (a
  // count, the co-rank, the changesets copied out), so a block returned to the pool is
  // reused only by work queued after the work that used it.
  TempPool pool;
  PhaseClock clock(in.time_phases, out);
  out->host_syncs = 0;
#if defined(__CUDACC__)
  auto policy = th::cuda::par_nosync(pool);
#else
  auto policy = th::device(pool);
#endif
  th::device_vector<int64_t> offsets(in.batch_offsets, in.batch_offsets + S + 1);
  th::device_vector<int64_t> ids(in.ids, in.ids + T);
  th::device_vector<uint32_t> scores;
  if (in.scores != nullptr) scores.assign(in.scores, in.scores + T);
  th::device_vector<int64_t> next_g(static_cast<size_t>(std::max<int64_t>(T, 1)));
  th::device_vector<Entry> entries(k_alloc), merged(k_alloc);
  th::device_vector<int32_t> free_slots(k_alloc), free_merged(k_alloc);
  int64_t occupied = 0, free_count = 0, free_begin = 0;
  clock.Charge(kPhaseUpload);
  // The accesses sorted by (id, position): freed after step 2, or kept for the whole plan
  // by the block rule (next uses and ids_i membership of the rows of a batch's blocks).
  th::device_vector<int64_t> sorted_ids, sorted_g;
  {
    // 1. Next access of every access.
    sorted_ids = ids;
    sorted_g.resize(static_cast<size_t>(T));
    th::sequence(policy, sorted_g.begin(), sorted_g.end());
    th::stable_sort_by_key(policy, sorted_ids.begin(), sorted_ids.end(), sorted_g.begin());
    th::for_each(policy, Count(0), Count(T), LinkNext{Raw(sorted_ids), Raw(sorted_g), T, Raw(next_g)});
    const int64_t dup = th::transform_reduce(policy, 
        Count(0), Count(T), DuplicateAt{Raw(sorted_ids), Raw(sorted_g), T, Raw(offsets), S},
        kNoAccess, MinOp());
    ++out->host_syncs;
    clock.Charge(kPhaseNextUse);
    if (dup != kNoAccess) {
      int64_t b = 0;
      while (in.batch_offsets[b + 1] <= dup) ++b;
      *error = "node " + std::to_string(in.ids[dup]) + " appears twice in batch " + std::to_string(b) +
               " (position " + std::to_string(dup - in.batch_offsets[b]) + "); batch ids must be unique";
      return GpuPlanCode::kInvalidArgument;
    }
    // 2. C0, sorted by key; its free slots in ascending order.
    if (K > 0) {
      th::device_vector<int64_t> slot_ids(in.initial_slots, in.initial_slots + K);
      th::device_vector<uint32_t> initial_scores;
      if (in.initial_scores != nullptr) initial_scores.assign(in.initial_scores, in.initial_scores + K);
      th::device_vector<int32_t> occupied_slots(k_alloc);
      occupied = th::copy_if(policy, Count(0), Count(K), occupied_slots.begin(), SlotOccupied{Raw(slot_ids)}) -
                 occupied_slots.begin();
      free_count = th::copy_if(policy, Count(0), Count(K), free_slots.begin(), SlotFree{Raw(slot_ids)}) -
                   free_slots.begin();
      out->host_syncs += 2;  // the two counts
      th::for_each(policy, Count(0), Count(occupied),
                   InitialEntry{Raw(slot_ids), in.initial_scores != nullptr ? Raw(initial_scores) : nullptr,
                                Raw(occupied_slots), Raw(sorted_ids), Raw(sorted_g), T, Raw(offsets), S,
                                Raw(entries)});
      th::sort(policy, entries.begin(), entries.begin() + occupied, KeyLess());
    }
    if (!blocks) {
      th::device_vector<int64_t>().swap(sorted_ids);
      th::device_vector<int64_t>().swap(sorted_g);
    }
  }

  th::device_vector<int32_t> pos_slot(n_alloc), hits_before(n_alloc), ins_idx(n_alloc), ins_rank(n_alloc);
  th::device_vector<int64_t> cut(6);  // 4 numbers; the block rule's 2 more
  th::device_vector<Entry> cand(n_alloc), scratch(n_alloc);  // scratch: unsorted / split candidates
  th::device_vector<uint64_t> sort_keys(n_alloc);
  th::device_vector<int32_t> sort_index(n_alloc);
  const uint32_t* scores_ptr = in.scores != nullptr ? Raw(scores) : nullptr;
  // The changesets stay on the device, batch after batch, until these buffers would
  // overflow, and then go to the host in one copy per array, not five copies per batch.
  // A batch inserts at most n entries and evicts at most n (the cache only shrinks by
  // what the misses displace), so `chunk` >= the largest batch always holds one batch.
  int64_t chunk = std::max<int64_t>(
      static_cast<int64_t>(n_alloc), std::min<int64_t>(T, in.changeset_chunk > 0 ? in.changeset_chunk : kChangesetChunk));
  th::device_vector<int64_t> chunk_in_ids(static_cast<size_t>(chunk)), chunk_out_ids(static_cast<size_t>(chunk));
  th::device_vector<int32_t> chunk_in_positions(static_cast<size_t>(chunk)),
      chunk_in_slots(static_cast<size_t>(chunk)), chunk_out_slots(static_cast<size_t>(chunk));
  int64_t chunk_in = 0, chunk_out = 0;  // entries held in the buffers
  // Block rule: the admitted free rows (chunk_block of them held), and the per-batch
  // arrays of the block ranges (n each, see B1-B5); the candidate buffers above (n_alloc)
  // grow to the largest n + rows of a batch's blocks (cand_cap).
  th::device_vector<int64_t> chunk_block_ids;
  th::device_vector<int32_t> chunk_block_slots;
  int64_t chunk_block = 0;
  th::device_vector<int64_t> blk_starts, blk_ends, blk_reach, blk_run_end, blk_row_lo, blk_row_count, blk_row_off;
  th::device_vector<int32_t> blk_run_id, free_before;
  size_t cand_cap = n_alloc;
  if (blocks) {
    chunk_block_ids.resize(static_cast<size_t>(chunk));
    chunk_block_slots.resize(static_cast<size_t>(chunk));
    for (auto* v : {&blk_starts, &blk_ends, &blk_reach, &blk_run_end, &blk_row_lo, &blk_row_count, &blk_row_off}) {
      v->resize(n_alloc);
    }
    blk_run_id.resize(n_alloc);
    free_before.resize(n_alloc);
  }
  auto flush = [&] {
    Append(chunk_in_ids, chunk_in, &out->in_ids);
    Append(chunk_in_positions, chunk_in, &out->in_positions);
    Append(chunk_in_slots, chunk_in, &out->in_slots);
    Append(chunk_out_ids, chunk_out, &out->out_ids);
    Append(chunk_out_slots, chunk_out, &out->out_slots);
    out->host_syncs += (chunk_in > 0 ? 3 : 0) + (chunk_out > 0 ? 2 : 0);
    if (blocks) {
      Append(chunk_block_ids, chunk_block, &out->block_ids);
      Append(chunk_block_slots, chunk_block, &out->block_slots);
      out->host_syncs += chunk_block > 0 ? 2 : 0;
      chunk_block = 0;
    }
    chunk_in = chunk_out = 0;
  };
  // Fresh buffers of `size` (their contents are per batch: nothing to keep).
  auto regrow = [](auto& v, size_t size) { std::remove_reference_t<decltype(v)>(size).swap(v); };
  clock.Charge(kPhaseInitialFill);

  out->num_misses.assign(static_cast<size_t>(S), 0);
  out->in_offsets.assign(1, 0);
  out->out_offsets.assign(1, 0);
  out->in_ids.clear();
  out->in_positions.clear();
  out->in_slots.clear();
  out->out_ids.clear();
  out->out_slots.clear();
  out->block_ids.clear();
  out->block_slots.clear();
  if (blocks) {
    out->block_offsets.assign(1, 0);
  } else {
    out->block_offsets.clear();
  }
  for (int64_t i = 0; i < S; ++i) {
    const int64_t base = in.batch_offsets[i];
    const int64_t n = in.batch_offsets[i + 1] - base;
    int64_t num_in = 0, num_out = 0, free_in = 0;  // num_in: misses inserted; free_in: free rows
    if (n > 0) {
      if (!blocks && (chunk_in + n > chunk || chunk_out + n > chunk)) {
        flush();
        clock.Charge(kPhaseCopyOut);
      }
      // Hits: the prefix of the cache with next use i (at most n entries).
      th::fill(policy, pos_slot.begin(), pos_slot.begin() + n, -1);
      th::for_each(policy, Count(0), Count(std::min(n, occupied)),
                   MarkHit{Raw(entries), static_cast<uint64_t>(i), base, Raw(pos_slot)});
      clock.Charge(kPhaseHits);
      // N = the batch's n accesses, then (block rule) the `rows` rows of its blocks.
      int64_t m = n;
      if (blocks) {
        // The misses' block ranges, by start; runs of consecutive blocks; the rows whose
        // first block is read, counted (this batch's second wait: the count).
        const auto starts = blk_starts.begin(), ends = blk_ends.begin();
        th::for_each(policy, Count(0), Count(n),
                     MissBlocks{Raw(ids), base, Raw(pos_slot), geometry, Raw(blk_starts), Raw(blk_ends)});
        th::sort_by_key(policy, starts, starts + n, ends);
        th::inclusive_scan(policy, ends, ends + n, blk_reach.begin(), MaxOp());
        th::transform_inclusive_scan(policy, Count(0), Count(n), blk_run_id.begin(),
                                     OpensRun{Raw(blk_starts), Raw(blk_reach)}, th::plus<int32_t>());
        th::for_each(policy, Count(0), Count(n),
                     RunEnd{Raw(blk_starts), Raw(blk_reach), Raw(blk_run_id), n, Raw(blk_run_end)});
        th::for_each(policy, Count(0), Count(n),
                     RangeRows{Raw(blk_starts), Raw(blk_ends), Raw(blk_reach), geometry, Raw(blk_row_lo),
                               Raw(blk_row_count)});
        th::inclusive_scan(policy, blk_row_count.begin(), blk_row_count.begin() + n, blk_row_off.begin());
        int64_t rows = 0;
        th::copy(blk_row_off.begin() + (n - 1), blk_row_off.begin() + n, &rows);
        ++out->host_syncs;
        if (n + rows > std::numeric_limits<int32_t>::max()) {
          *error = "block rule: batch " + std::to_string(i) + " reads blocks holding " + std::to_string(rows) +
                   " rows; the batch and its blocks' rows must stay below 2^31";
          return GpuPlanCode::kError;
        }
        m = n + rows;
        if (static_cast<size_t>(m) > cand_cap) {
          cand_cap = std::max(static_cast<size_t>(m), 2 * cand_cap);
          regrow(cand, cand_cap);
          regrow(scratch, cand_cap);
          regrow(sort_keys, cand_cap);
          regrow(sort_index, cand_cap);
          regrow(hits_before, cand_cap);
          regrow(ins_idx, cand_cap);
          regrow(ins_rank, cand_cap);
          regrow(free_before, cand_cap);
        }
        clock.Charge(kPhaseCandidates);
        // This batch inserts at most n misses and `rows` free rows, and evicts at most m.
        // The buffers were sized for the accesses alone: they grow (contents kept, on the
        // device) up to the chunk limit, past it they are copied out, and a batch larger
        // than the limit gets buffers of its size.
        const int64_t need = std::max({chunk_in + n, chunk_out + m, chunk_block + rows});
        if (need > chunk) {
          const int64_t limit = in.changeset_chunk > 0 ? in.changeset_chunk : kChangesetChunk;
          const bool keep = need <= limit;
          if (!keep) {
            flush();
            clock.Charge(kPhaseCopyOut);
          }
          const int64_t size = keep ? std::min(limit, std::max(need, 2 * chunk)) : m;
          if (size > chunk) {
            chunk = size;
            auto grow = [&](auto& v) {
              if (keep) {
                v.resize(static_cast<size_t>(chunk));
              } else {
                regrow(v, static_cast<size_t>(chunk));
              }
            };
            grow(chunk_in_ids);
            grow(chunk_out_ids);
            grow(chunk_in_positions);
            grow(chunk_in_slots);
            grow(chunk_out_slots);
            grow(chunk_block_ids);
            grow(chunk_block_slots);
          }
        }
      }
      th::for_each(policy, Count(0), Count(n), BuildCandidate{Raw(ids), Raw(next_g), scores_ptr, Raw(offsets), S,
                                                      base, Raw(pos_slot), Raw(scratch), Raw(sort_keys)});
      if (m > n) {
        th::for_each(policy, Count(0), Count(m - n),
                     BuildFreeRow{Raw(blk_row_lo), Raw(blk_row_count), Raw(blk_row_off), Raw(blk_run_id),
                                  Raw(blk_run_end), n, geometry, Raw(sorted_ids), Raw(sorted_g), T, Raw(offsets), S,
                                  base, n, Raw(entries), occupied, Raw(scratch), Raw(sort_keys)});
      }
      th::sequence(policy, sort_index.begin(), sort_index.begin() + m);
      th::sort_by_key(policy, sort_keys.begin(), sort_keys.begin() + m, sort_index.begin());
      th::transform(policy, sort_index.begin(), sort_index.begin() + m, sort_keys.begin(), HiOf{Raw(scratch)});
      th::stable_sort_by_key(policy, sort_keys.begin(), sort_keys.begin() + m, sort_index.begin());
      th::gather(policy, sort_index.begin(), sort_index.begin() + m, scratch.begin(), cand.begin());
      th::transform_inclusive_scan(policy, cand.begin(), cand.begin() + m, hits_before.begin(), CachedAsOne(),
                                   th::plus<int32_t>());
      if (blocks) {
        th::transform_inclusive_scan(policy, cand.begin(), cand.begin() + m, free_before.begin(), FreeRowAsOne{n},
                                     th::plus<int32_t>());
      }
      clock.Charge(kPhaseCandidates);

      // Keep the first K of merge(R, N): a from R = entries[h, occupied), b from N. The
      // batch's one wait (the block rule's second): the four (six) numbers of the cut.
      th::for_each(policy, Count(0), Count(1),
                   Cut{Raw(entries), occupied, Raw(cand), m, Raw(hits_before), K, Raw(cut),
                       blocks ? Raw(free_before) : nullptr, n});
      int64_t cut_host[6] = {0, 0, 0, 0, 0, 0};
      // Copied, not read through a device_reference (Thrust 1.17 binds a null system
      // reference there, which UBSan reports).
      th::copy(cut.begin(), cut.begin() + (blocks ? 6 : 4), cut_host);
      ++out->host_syncs;
      const int64_t h = cut_host[0], a = cut_host[1], b = cut_host[2], hits_in_b = cut_host[3];
      const int64_t r = occupied - h;
      free_in = cut_host[4];
      out->num_misses[static_cast<size_t>(i)] = n - h;
      num_out = (r - a) + (h - hits_in_b);
      num_in = b - hits_in_b - free_in;
      clock.Charge(kPhaseCoRank);

      // Evicted: R[a, r) and the hits in N[b, n), by ascending slot.
      int64_t* const out_ids = Raw(chunk_out_ids) + chunk_out;
      int32_t* const out_slots = Raw(chunk_out_slots) + chunk_out;
      if (num_out > 0) {
        th::for_each(policy, Count(0), Count(r - a), EvictedOfCache{Raw(entries) + h + a, out_slots, out_ids});
        if (hits_in_b < h) {
          th::for_each(policy, Count(b), Count(m),
                       ScatterEvictedHits{Raw(cand), Raw(hits_before), r - a, hits_in_b, out_slots, out_ids});
        }
        th::sort_by_key(policy, th::device_pointer_cast(out_slots), th::device_pointer_cast(out_slots) + num_out,
                        th::device_pointer_cast(out_ids));
        th::merge(policy, free_slots.begin() + free_begin, free_slots.begin() + free_begin + free_count,
                  th::device_pointer_cast(out_slots), th::device_pointer_cast(out_slots) + num_out,
                  free_merged.begin());
        free_slots.swap(free_merged);
        free_begin = 0;
        free_count += num_out;
      }
      clock.Charge(kPhaseEvict);
      // Inserted: the misses in N[0, b), ascending position, into the smallest free slots;
      // then (block rule) the free rows in N[0, b), ascending id (position n + t).
      if (num_in + free_in > 0) {
        th::fill(policy, ins_idx.begin(), ins_idx.begin() + m, -1);
        th::for_each(policy, Count(0), Count(b), MarkInserted{Raw(cand), Raw(ins_idx)});
        th::transform_inclusive_scan(policy, ins_idx.begin(), ins_idx.begin() + m, ins_rank.begin(),
                                     InsertedAsOne(), th::plus<int32_t>());
        th::for_each(policy, Count(0), Count(m),
                     PlaceInserted{Raw(ins_idx), Raw(ins_rank), Raw(free_slots) + free_begin, Raw(cand), Raw(ids),
                                   base, Raw(chunk_in_ids) + chunk_in, Raw(chunk_in_positions) + chunk_in,
                                   Raw(chunk_in_slots) + chunk_in, n, num_in,
                                   blocks ? Raw(chunk_block_ids) + chunk_block : nullptr,
                                   blocks ? Raw(chunk_block_slots) + chunk_block : nullptr});
        free_begin += num_in + free_in;
        free_count -= num_in + free_in;
        // Flags cleared: the kept candidates back in key order, hits merged with misses.
        th::for_each(policy, Count(0), Count(b), SplitKept{Raw(cand), Raw(hits_before), hits_in_b, Raw(scratch)});
        th::merge(policy, scratch.begin(), scratch.begin() + hits_in_b, scratch.begin() + hits_in_b,
                  scratch.begin() + b, cand.begin(), KeyLess());
      }
      clock.Charge(kPhaseInsert);
      // The new cache, still sorted.
      th::merge(policy, entries.begin() + h, entries.begin() + h + a, cand.begin(), cand.begin() + b,
                merged.begin(), KeyLess());
      entries.swap(merged);
      occupied = a + b;
      chunk_in += num_in;
      chunk_out += num_out;
      chunk_block += free_in;
      clock.Charge(kPhaseMerge);
    }
    out->in_offsets.push_back(out->in_offsets.back() + num_in);
    out->out_offsets.push_back(out->out_offsets.back() + num_out);
    if (blocks) out->block_offsets.push_back(out->block_offsets.back() + free_in);
  }
  flush();
  out->final_slots.assign(static_cast<size_t>(K), -1);
  if (K > 0) {
    th::device_vector<int64_t> final_slots(static_cast<size_t>(K), -1);
    th::for_each(policy, Count(0), Count(occupied), WriteSlot{Raw(entries), Raw(final_slots)});
    th::copy(final_slots.begin(), final_slots.end(), out->final_slots.data());
    ++out->host_syncs;
  }
  clock.Charge(kPhaseCopyOut);
  out->temp_requests = pool.requests();
  out->temp_allocations = pool.device_allocations();
  out->temp_bytes = pool.held_bytes();
  return GpuPlanCode::kOk;
}

// The shell of the entry points (PlanBeladyGpu, PlanBeladyThrustHost): the message goes to
// `error_message` (a scratch string when null); `plan(error)` runs, and an exception it
// throws becomes kError: "<out_of_memory>what" for std::bad_alloc, "<failed>what" for
// any other std::exception.
template <typename Plan>
GpuPlanCode PlanCatching(std::string* error_message, const char* out_of_memory, const char* failed, Plan plan) {
  std::string scratch;
  std::string* error = error_message != nullptr ? error_message : &scratch;
  try {
    return plan(error);
  } catch (const std::bad_alloc& e) {
    *error = out_of_memory + std::string(e.what());
  } catch (const std::exception& e) {
    *error = failed + std::string(e.what());
  }
  return GpuPlanCode::kError;
}

}  // namespace seer::kernels::SEER_THRUST_BACKEND
