#!/usr/bin/env bash
# Builds and runs one libFuzzer target of tests/fuzz for SECONDS seconds:
#   bench/fuzz.sh TARGET SECONDS [extra libFuzzer flags]
# TARGET: edge_list | npy | manifest | trace | checkpoint. Needs clang-14 and
# libfuzzer-14-dev (Debian). The build (clang, -DSEER_FUZZ=ON, ASan+UBSan, no libtorch,
# no CUDA) goes to $SEER_FUZZ_BUILD (default build-fuzz/). The corpus grows in
# build-fuzz/corpus/TARGET (seeded from tests/fuzz/corpus/TARGET); crashes land in
# build-fuzz/crashes/TARGET/ and the log in build-fuzz/fuzz-TARGET.log. One process,
# one core (-jobs=1); SEER_FUZZ_NO_BUILD=1 runs the binary already built. Prints executions, coverage and findings at the end; exits 1 when
# the run found a crash. Copy a fixed crash into tests/fuzz/corpus/TARGET/ so every
# build's ctest (FuzzReplay.TARGET) replays it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${1:?usage: bench/fuzz.sh TARGET SECONDS}"
seconds="${2:?usage: bench/fuzz.sh TARGET SECONDS}"
shift 2
build="${SEER_FUZZ_BUILD:-$root/build-fuzz}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSEER_FUZZ=ON -DSEER_SANITIZE=address,undefined -DSEER_WITH_TORCH=OFF -DSEER_WITH_CUDA=OFF \
    -DSEER_BUILD_BENCH=OFF >/dev/null
fi
if [ "${SEER_FUZZ_NO_BUILD:-0}" != "1" ]; then
  cmake --build "$build" -j "${SEER_FUZZ_JOBS:-2}" --target "seer_fuzz_$target"
fi
corpus="$build/corpus/$target"
crashes="$build/crashes/$target"
mkdir -p "$corpus" "$crashes"
log="$build/fuzz-$target.log"
set +e
# -jobs=1 writes the run's output to fuzz-0.log in the working directory: run in $build.
(cd "$build" && "$build/tests/fuzz/seer_fuzz_$target" -max_total_time="$seconds" -jobs=1 -workers=1 \
  -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$crashes/" \
  "$@" "$corpus" "$root/tests/fuzz/corpus/$target" >"$log" 2>&1)
rc=$?
set -e
[ -f "$build/fuzz-0.log" ] && mv "$build/fuzz-0.log" "$log"
echo "fuzz $target: ${seconds}s, exit $rc, log $log"
grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)" "$log" || tail -5 "$log"
grep -E "cov: [0-9]+" "$log" | tail -1
n_crash=$(find "$crashes" -type f | wc -l)
echo "findings (files in $crashes): $n_crash"
[ "$rc" -eq 0 ] && [ "$n_crash" -eq 0 ]
