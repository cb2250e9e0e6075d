#!/usr/bin/env bash
# Installs missing packages, builds Seer (Release) into build/ and runs the whole test
# suite through ctest; then builds the libtorch-free part (storage, kernels, cache,
# inspector, the `seer` CLI and their tests) again with -Werror and AddressSanitizer +
# UndefinedBehaviorSanitizer into build-check/ and runs its tests (a sanitizer report
# fails the test; SEER_ODR_CHECK links every library into an LTO probe, so two different
# definitions of one class name fail that build); then runs the storage, cache and inspector tests under
# ThreadSanitizer (the --tsan mode below, build-tsan/). Exits non-zero when any build or
# test fails. Extra arguments go to both ctest runs (e.g. tools/test.sh -R DirectReader)
# and skip the TSan stage. SEER_TEST_CHECKS=0 skips the second build (it takes ~6-9
# minutes on 2 cores the first time), SEER_TEST_TSAN=0 the third (~7 minutes).
#
# Modes (first argument; not run by CI, see README "Testing for reliability"):
#   --sanitize  the WHOLE suite, libtorch build included (executor, seer train/predict),
#               under ASan+UBSan in build-sanitize/ ($SEER_SANITIZE_BUILD). libtorch is
#               not instrumented: its own leak reports are suppressed by
#               tools/sanitizers/lsan.supp (libtorch/libc10/libgomp frames only) and
#               ASan's C++ container checks stay off across the boundary.
#   --tsan      ThreadSanitizer over the threaded libtorch-free modules (storage, cache,
#               inspector: the pread pool, io_uring readers, TBB CSC builder, parallel
#               sampler, streaming trace files, the planner) in build-tsan/
#               ($SEER_TSAN_BUILD). Seer's loops state TBB's ordering themselves
#               (storage/base/parallel.h), so tools/sanitizers/tsan.supp only silences
#               reports whose top frame is in TBB's headers. With SEER_TSAN_TORCH=1 the
#               executor (SuperbatchPipeline, its queues and stage threads) is built and
#               tested too (in build-tsan-torch/).
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"
seer_install_packages
jobs="$(nproc 2>/dev/null || echo 2)"
# ctest runs `jobs` tests at once: one OpenMP thread each, or libtorch's CPU ops start a
# thread per core in every test and they spin against each other (on a 16-core box at -j8,
# CPU-only training tests that take 0.2 s alone ran 60-150 s).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
supp="$SEER_ROOT/tools/sanitizers"
# The sanitizer builds need line tables for their reports, not full debug info: -g1 keeps
# file:line in every stack and compiles a third faster than -g (measured: 26.8 s -> 17.4 s
# for executor/model_runner.cc); GCC's -Wodr check of SEER_ODR_CHECK does not need -g.
lean_debug=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

if [ "${1:-}" = "--sanitize" ]; then
  shift
  build="${SEER_SANITIZE_BUILD:-$SEER_ROOT/build-sanitize}"
  echo "seer: whole suite (libtorch included) with address+undefined sanitizers in $build"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$SEER_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEER_WITH_TORCH=ON \
      -DSEER_WITH_CUDA=OFF -DSEER_SANITIZE=address,undefined -DSEER_BUILD_BENCH=OFF
  fi
  cmake --build "$build" -j "$jobs"
  export ASAN_OPTIONS="detect_leaks=1:detect_container_overflow=0:${ASAN_OPTIONS:-}"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:suppressions=$supp/ubsan.supp:${UBSAN_OPTIONS:-}"
  (cd "$build" && ctest --output-on-failure -j "$jobs" "$@")
  exit $?
fi

if [ "${1:-}" = "--tsan" ]; then
  shift
  torch="OFF"
  [ "${SEER_TSAN_TORCH:-0}" = "1" ] && torch="ON"
  # The libtorch build gets its own directory (the CMake cache fixes the option).
  default_build="$SEER_ROOT/build-tsan"
  [ "$torch" = "ON" ] && default_build="$SEER_ROOT/build-tsan-torch"
  build="${SEER_TSAN_BUILD:-$default_build}"
  echo "seer: ThreadSanitizer build (libtorch $torch) in $build"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$SEER_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${lean_debug[@]}" -DSEER_WITH_TORCH="$torch" \
      -DSEER_WITH_CUDA=OFF -DSEER_SANITIZE=thread -DSEER_BUILD_BENCH=OFF
  fi
  targets=(seer_storage_tests seer_cache_tests seer_inspector_tests)
  [ "$torch" = "ON" ] && targets+=(seer_executor_tests)
  cmake --build "$build" -j "$jobs" --target "${targets[@]}"
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}"
  # Each test binary runs whole (its gtest filter is the extra arguments, if any).
  status=0
  for t in "${targets[@]}"; do
    bin="$(find "$build/tests" -name "$t" -type f -perm -u+x | head -1)"
    echo "seer: $t under ThreadSanitizer"
    "$bin" --gtest_brief=1 "$@" || status=1
  done
  exit $status
fi

seer_build
(cd "$SEER_BUILD" && ctest --output-on-failure -j "$jobs" "$@")

if [ "${SEER_TEST_CHECKS:-1}" != "0" ]; then
  check_build="${SEER_CHECK_BUILD:-$SEER_ROOT/build-check}"
  echo "seer: check build (no libtorch, -Werror, address+undefined sanitizers) in $check_build"
  if [ ! -f "$check_build/CMakeCache.txt" ]; then
    cmake -S "$SEER_ROOT" -B "$check_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${lean_debug[@]}" \
      -DSEER_WITH_TORCH=OFF -DSEER_WERROR=ON -DSEER_SANITIZE=address,undefined -DSEER_ODR_CHECK=ON \
      -DSEER_BUILD_BENCH=OFF
  fi
  cmake --build "$check_build" -j "$jobs"
  (cd "$check_build" && ctest --output-on-failure -j "$jobs" "$@")
fi

# Third stage: ThreadSanitizer over the threaded libtorch-free modules (the --tsan mode
# below; ~5 min to build and ~2 min to run on 2 cores). A report fails the run. Skipped
# with SEER_TEST_TSAN=0, and when extra arguments narrow the run to some tests.
if [ "${SEER_TEST_TSAN:-1}" != "0" ] && [ $# -eq 0 ]; then
  echo "seer: ThreadSanitizer stage (storage, cache, inspector; SEER_TEST_TSAN=0 skips it)"
  bash "$SEER_ROOT/tools/test.sh" --tsan
fi
