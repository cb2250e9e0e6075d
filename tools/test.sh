#!/usr/bin/env bash
# Installs missing packages, builds Seer (Release) into build/ and runs the whole test
# suite through ctest; then builds the libtorch-free part (storage, kernels, cache,
# inspector, the `seer` CLI and their tests) again with -Werror and AddressSanitizer +
# UndefinedBehaviorSanitizer into build-check/ and runs its tests (a sanitizer report
# fails the test). Exits non-zero when any build or test fails. Extra arguments go to
# both ctest runs (e.g. tools/test.sh -R DirectReader). SEER_TEST_CHECKS=0 skips the
# second build (it takes ~6-9 minutes on 2 cores the first time).
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"
seer_install_packages
seer_build
jobs="$(nproc 2>/dev/null || echo 2)"
(cd "$SEER_BUILD" && ctest --output-on-failure -j "$jobs" "$@")

if [ "${SEER_TEST_CHECKS:-1}" != "0" ]; then
  check_build="${SEER_CHECK_BUILD:-$SEER_ROOT/build-check}"
  echo "seer: check build (no libtorch, -Werror, address+undefined sanitizers) in $check_build"
  if [ ! -f "$check_build/CMakeCache.txt" ]; then
    cmake -S "$SEER_ROOT" -B "$check_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSEER_WITH_TORCH=OFF -DSEER_WERROR=ON -DSEER_SANITIZE=address,undefined \
      -DSEER_BUILD_BENCH=OFF
  fi
  cmake --build "$check_build" -j "$jobs"
  (cd "$check_build" && ctest --output-on-failure -j "$jobs" "$@")
fi
