// Seer's parallel loops: tbb::parallel_for with the ordering ThreadSanitizer can see.
//
// Debian's libtbb is not built with ThreadSanitizer, so TSan cannot see the
// synchronisation inside TBB's scheduler: it reports the loop body's reads of data the
// calling thread wrote before the loop, and the caller's reads of what the body wrote,
// as races (false positives), and a blanket suppression of libtbb would hide every real
// race between two loop bodies, because every worker's stack passes through libtbb.
// ParallelFor states TBB's guarantee explicitly in ThreadSanitizer builds:
//   - everything before the call happens before every body invocation, and
//   - every body invocation happens before everything after the call;
// and nothing more, so two bodies that touch the same data without their own
// synchronisation are still reported. In other builds the annotations are empty and
// ParallelFor is tbb::parallel_for.
//
// Every parallel loop in Seer goes through this header (a test checks that no other
// file calls tbb::parallel_for). tools/sanitizers/tsan.supp then only silences reports
// whose top frame is inside TBB's own headers (its task objects), never Seer's code.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#if defined(__SANITIZE_THREAD__)
#define SEER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SEER_TSAN 1
#endif
#endif

#if defined(SEER_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace seer {

// A happens-before edge for ThreadSanitizer: TsanRelease(p) on one thread happens
// before a later TsanAcquire(p) on another. No code in other builds.
inline void TsanRelease(const void* p) {
#if defined(SEER_TSAN)
  __tsan_release(const_cast<void*>(p));
#else
  (void)p;
#endif
}
inline void TsanAcquire(const void* p) {
#if defined(SEER_TSAN)
  __tsan_acquire(const_cast<void*>(p));
#else
  (void)p;
#endif
}

// The edges' identities are function-local statics, one pair per instantiation (so per
// call site): a body must acquire before it reads anything the caller wrote, including
// its own closure's captures, so the address cannot come from the closure. Concurrent
// calls of the same call site share the pair, which only adds edges between them.

// tbb::parallel_for(range, body): body(const Range&) on sub-ranges, in parallel.
template <typename Range, typename Body>
void ParallelFor(const Range& range, const Body& body) {
  static char start, done;  // addresses only
  const auto wrapped = [&body](const Range& r) {
    TsanAcquire(&start);
    body(r);
    TsanRelease(&done);
  };
  TsanRelease(&start);
  tbb::parallel_for(range, wrapped);
  TsanAcquire(&done);
}

// tbb::parallel_for(first, last, f): f(i) for every i in [first, last), in parallel.
template <typename Index, typename Func>
void ParallelFor(Index first, Index last, const Func& f) {
  static char start, done;
  const auto wrapped = [&f](Index i) {
    TsanAcquire(&start);
    f(i);
    TsanRelease(&done);
  };
  TsanRelease(&start);
  tbb::parallel_for(first, last, wrapped);
  TsanAcquire(&done);
}

}  // namespace seer
