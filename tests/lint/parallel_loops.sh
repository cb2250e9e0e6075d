#!/usr/bin/env bash
# Every parallel loop in Seer's own code goes through storage/base/parallel.h
# (seer::ParallelFor), which states TBB's ordering for ThreadSanitizer; a direct
# tbb::parallel_for would give false reports under `tools/test.sh --tsan`, and the only
# way to silence those would also hide real races. The one tbb::parallel_pipeline
# (inspector/superbatch_driver.cc) states the same ordering by hand. Prints each
# offending line; exit 1.
root="${1:?usage: parallel_loops.sh SOURCE_DIR}"
hits=$(cd "$root" && grep -rn --include='*.cc' --include='*.h' --include='*.inl' --include='*.cu' \
         -E 'tbb::(parallel_for|parallel_for_each|parallel_reduce|parallel_invoke|parallel_sort|parallel_pipeline)[[:space:]]*\(' \
         cache inspector storage executor kernels tools 2>/dev/null |
         grep -v -e '^storage/base/parallel\.h:' -e '^inspector/superbatch_driver\.cc:.*parallel_pipeline')
if [ -n "$hits" ]; then
  echo "$hits"
  echo "parallel_loops: call seer::ParallelFor (storage/base/parallel.h) instead of TBB directly" >&2
  exit 1
fi
echo "parallel_loops: every parallel loop goes through storage/base/parallel.h"
