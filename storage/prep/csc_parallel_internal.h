// The CSC builder's parallel plumbing (storage/prep/csc_builder.cc only): the one
// background writer, the routing of a batch's edges to the owners of their destination
// ranges, parallel chunks over a batch, and returning freed heap pages between passes.
// Internal to storage/prep; every loop goes through seer::ParallelFor (parallel.h).
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <future>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/task_arena.h>

#include "storage/base/parallel.h"
#include "storage/base/status.h"
#include "storage/prep/edge_list.h"

namespace seer::csc_internal {

constexpr int64_t kGrainEdges = 16384;

// One background writer: Start() hands it a job, Wait() returns the job's Status. At
// most one job runs at a time, so writes keep their order; the destructor waits.
class BackgroundWriter {
 public:
  ~BackgroundWriter() {
    if (pending_.valid()) pending_.wait();
  }
  template <typename Job>
  Status Start(Job job) {
    SEER_RETURN_IF_ERROR(Wait());
    pending_ = std::async(std::launch::async, std::move(job));
    return Status::Ok();
  }
  Status Wait() {
    if (!pending_.valid()) return Status::Ok();
    return pending_.get();
  }

 private:
  std::future<Status> pending_;
};

// Gives the heap's free pages back to the system (glibc keeps freed blocks below its
// dynamic mmap threshold, up to 32 MiB, resident): called between passes so that buffers
// a pass freed do not count in peak RSS next to the next pass's.
inline void ReturnFreedMemory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

// Hands every emitted edge of inputs [0, n) to the owner of its destination so that
// each owner reads only its own edges (no atomics on the per-node counters, no re-scan
// of the batch per owner): the inputs are cut into slices; pass a finds each emitted
// edge's owner (kept, 2 B per edge slot) and counts per (slice, owner); pass b scatters
// the pairs into `routed` grouped by owner (slice order within an owner); then every
// owner runs body(pairs, count) on its group (src, dst interleaved), all in parallel. O(n) work for any
// number of owners. emit(i, f) calls f(src, dst) for each edge input i emits (0, 1 or 2,
// the same both times); per_input bounds that count. Returns the number of edges emitted.
template <typename V, typename Emit, typename Body>
int64_t RouteToOwners(int64_t n, int64_t per_input, const std::vector<int64_t>& cuts, std::vector<V>& routed,
                   std::vector<uint16_t>& owner_of, Emit&& emit, Body&& body) {
  const int64_t owners = static_cast<int64_t>(cuts.size()) - 1;
  const int64_t slices = owners * 2;
  const int64_t slice_len = (n + slices - 1) / slices;
  if (owner_of.size() < static_cast<size_t>(per_input * n)) owner_of.resize(static_cast<size_t>(per_input * n));
  std::vector<int64_t> cursor(static_cast<size_t>(slices * owners), 0);
  auto owner = [&](int64_t dst) {
    return static_cast<int64_t>(std::upper_bound(cuts.begin() + 1, cuts.end() - 1, dst) - (cuts.begin() + 1));
  };
  auto for_slices = [&](auto&& f) {
    ParallelFor(int64_t{0}, slices, [&](int64_t s) {
      const int64_t b = std::min(n, s * slice_len), e = std::min(n, b + slice_len);
      for (int64_t i = b; i < e; ++i) {
        int64_t slot = per_input * i;
        emit(i, [&](int64_t src, int64_t dst) { f(s, slot++, src, dst); });
      }
    });
  };
  for_slices([&](int64_t s, int64_t slot, int64_t, int64_t dst) {
    const int64_t t = owner(dst);
    owner_of[static_cast<size_t>(slot)] = static_cast<uint16_t>(t);
    ++cursor[static_cast<size_t>(s * owners + t)];
  });
  std::vector<int64_t> begin(static_cast<size_t>(owners) + 1, 0);
  int64_t running = 0;
  for (int64_t t = 0; t < owners; ++t) {
    begin[t] = running;
    for (int64_t s = 0; s < slices; ++s) {
      const int64_t c = cursor[static_cast<size_t>(s * owners + t)];
      cursor[static_cast<size_t>(s * owners + t)] = running;
      running += c;
    }
  }
  begin[owners] = running;
  if (routed.size() < static_cast<size_t>(2 * running)) routed.resize(static_cast<size_t>(2 * running));
  for_slices([&](int64_t s, int64_t slot, int64_t src, int64_t dst) {
    int64_t& at = cursor[static_cast<size_t>(s * owners + owner_of[static_cast<size_t>(slot)])];
    routed[static_cast<size_t>(2 * at)] = static_cast<V>(src);
    routed[static_cast<size_t>(2 * at + 1)] = static_cast<V>(dst);
    ++at;
  });
  ParallelFor(int64_t{0}, owners, [&](int64_t t) {
    body(routed.data() + 2 * begin[t], begin[t + 1] - begin[t]);
  });
  return running;  // the edges emitted
}

// Threads of the caller's arena (sizes the per-thread radix scratch).
inline int64_t Threads() { return std::max(1, tbb::this_task_arena::max_concurrency()); }

// Owners of destination ranges for counting and placement. Routing a batch to its owners
// costs about one more pass over it (find the owner, scatter), so with T owners the
// placement takes ~(P + R) / T for P alone with one owner: a gain from 3 threads on. At 2
// it measured slower (20M R-MAT edges, bin64, 2 cores: 0.59-0.61 s wall and 0.9 CPU-s
// against 0.57 s and 0.6 CPU-s with one owner; bench/RESULTS.md "Prep speed, round 3"):
// there one owner counts and places, while reads, checks and sorts still use both threads.
inline int64_t Owners() {
  const int64_t threads = Threads();
  return threads >= 3 ? threads : 1;
}

// [lo, hi) cut into Owners() equal node ranges.
inline std::vector<int64_t> EqualCuts(int64_t lo, int64_t hi) {
  const int64_t owners = Owners();
  std::vector<int64_t> cuts(static_cast<size_t>(owners) + 1);
  for (int64_t t = 0; t <= owners; ++t) cuts[t] = lo + (hi - lo) * t / owners;
  return cuts;
}

// Runs body(begin, end) over [0, n) in parallel chunks.
template <typename Body>
void ParallelChunks(int64_t n, Body&& body) {
  if (n <= kGrainEdges) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  ParallelFor(tbb::blocked_range<int64_t>(0, n, kGrainEdges),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

// The smallest index in [0, n) for which bad(i) holds, or -1.
template <typename Bad>
int64_t FirstBad(int64_t n, Bad&& bad) {
  std::atomic<int64_t> first{n};
  ParallelChunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e && i < first.load(std::memory_order_relaxed); ++i) {
      if (bad(i)) {
        int64_t cur = first.load();
        while (i < cur && !first.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  return first.load() == n ? -1 : first.load();
}

// The largest src or dst of edges[0, n) compared as unsigned (so a negative id is above
// every valid one), in parallel chunks of a loop the compiler vectorises.
inline uint64_t MaxIdUnsigned(const Edge* edges, int64_t n) {
  std::atomic<uint64_t> result{0};
  ParallelChunks(n, [&](int64_t b, int64_t e) {
    const uint64_t* ids = reinterpret_cast<const uint64_t*>(edges + b);
    uint64_t m = 0;
    for (int64_t i = 0; i < 2 * (e - b); ++i) m = std::max(m, ids[i]);
    uint64_t cur = result.load();
    while (m > cur && !result.compare_exchange_weak(cur, m)) {
    }
  });
  return result.load();
}

}  // namespace seer::csc_internal
