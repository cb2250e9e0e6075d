#!/usr/bin/env bash
# The GPU run (issues 6 and 14) in one call on a lent GPU machine: build Seer with CUDA
# against the machine's PyTorch, run ctest with the CUDA tests, the planner bench GPU vs
# CPU (byte-identical check + accesses/s), and bench/e2e.sh with the PyTorch Geometric peer
# (bench/pyg_peer.py) on a dataset >= 5x the memory limit; results copied to $OUT.
# The GPU machine has no network and none of liburing/TBB/fmt/CLI11/GTest/Thrust/
# nlohmann-json/xxHash/Google Benchmark: their Debian packages are fetched HERE and carried.
#
#   bench/gpu.sh fetch [DIR]     here (apt): download the .debs into DIR (default .deps,
#                                git-ignored) — libthrust-dev/libcub-dev included
#   bench/gpu.sh all             there: unpack, configure, build, ctest, planner bench,
#                                e2e; each step is skipped when the time left
#                                (GPU_SH_BUDGET seconds, default 560) cannot hold it, and
#                                says so. Results in RES (default build-gpu/gpu-out); after
#                                every step they are published to $OUT when it is set (the
#                                device tool's folder): gpu-results.tgz (everything but the
#                                dataset) and the main logs, at most 8 files
#   bench/gpu.sh all --dry-run   here, without a GPU: every CPU part — the .deb unpacking
#                                into /tmp prefixes, the CUDA configure against them,
#                                building and running the kernels tests and the planner
#                                bench (gpu column skipped), checking that e2e.sh and the
#                                peer start — in /tmp/seer-gpu-dryrun
#   bench/gpu.sh build | tests | planner | e2e    one step (after `all` or `build`)
#
# The call on the GPU machine (10-minute commands; carry the .deb folder):
#   carry [".deps"], command: bench/gpu.sh all
# If the build leaves too little time for e2e, a second call right after (the machine
# keeps build-gpu/ while it is warm) runs it: bench/gpu.sh e2e
#
# Packages are unpacked with dpkg -x (nothing installed system-wide) into $PREFIX; the
# Thrust/CUB headers go to a prefix of their own, given to CMake as SEER_THRUST_INCLUDE_DIR,
# so that nvcc (which must use the CUDA toolkit's own Thrust) never sees them.
#
# e2e: NODES x DIMS float32 features vs LIMIT (defaults 4M x 128 = 1.9 GiB vs 384M: 5.0x),
# MODES (default "pyg-peer pyg+ seer"), one repeat, training only. Override by environment.
set -euo pipefail
STEP="${1:-}"; shift || true
DRY=0
if [[ "${1:-}" == "--dry-run" ]]; then DRY=1; shift; fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEB_DIR="${DEB_DIR:-$ROOT/.deps}"
if [[ $DRY == 1 ]]; then
  WORK=/tmp/seer-gpu-dryrun
  PREFIX="${SEER_DEPS_PREFIX:-$WORK/deps}"
  BUILD="${BUILD:-$WORK/build}"
  RES="${RES:-$WORK/out}"
  JOBS="${JOBS:-2}"
else
  PREFIX="${SEER_DEPS_PREFIX:-/tmp/seer-deps}"
  BUILD="${BUILD:-$ROOT/build-gpu}"
  RES="${RES:-$BUILD/gpu-out}"
  JOBS="${JOBS:-$(nproc)}"
fi
THRUST_PREFIX="$PREFIX-thrust"
BUDGET="${GPU_SH_BUDGET:-560}"
PACKAGES="libgloo-dev liburing-dev liburing2 libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libhwloc15 \
libfmt-dev libfmt9 libcli11-dev libgtest-dev googletest zlib1g-dev nlohmann-json3-dev \
libxxhash-dev libxxhash0 libbenchmark-dev libbenchmark1debian libthrust-dev libcub-dev"
THRUST_PACKAGES="libthrust-dev libcub-dev"
PUBLISH="${OUT:-}"  # the device tool's result folder, when there
mkdir -p "$RES"
LOG="$RES/gpu-sh.log"

say() { echo "gpu.sh: $*" | tee -a "$LOG"; }
left() { echo $((BUDGET - SECONDS)); }
# Runs a step when at least $1 seconds are left, else says how to run it later.
maybe() {
  local need="$1"; shift
  if (( $(left) < need )); then
    say "SKIPPED '$*': $(left) s left, it needs ~${need} s. Run next: bench/gpu.sh $1"
    return 0
  fi
  say "step '$*' ($(left) s left)"
  "$@" || say "step '$*' FAILED (exit $?)"
  publish
}

# Everything but the dataset as one archive, and the main logs, into $OUT (<= 8 files).
publish() {
  [[ -n "$PUBLISH" && "$PUBLISH" != "$RES" ]] || return 0
  tar czf "$PUBLISH/gpu-results.tgz" --exclude='graph-*' -C "$RES" . 2>/dev/null || true
  local f
  for f in gpu-sh.log kernels_tests.log ctest.log planner.log e2e.log e2e_summary.json; do
    [[ -f "$RES/$f" ]] && cp "$RES/$f" "$PUBLISH/"
  done
  return 0
}

deps_env() {  # library and pkg-config paths of the unpacked prefix
  local lib="$PREFIX/usr/lib/x86_64-linux-gnu"
  export PKG_CONFIG_PATH="$lib/pkgconfig:$PREFIX/usr/share/pkgconfig:${PKG_CONFIG_PATH:-}"
  export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
  TORCH_PREFIX="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)"
  export CMAKE_PREFIX_PATH="$PREFIX/usr${TORCH_PREFIX:+;$TORCH_PREFIX}"
}

fetch() {
  local dir="${1:-$DEB_DIR}"
  mkdir -p "$dir"
  (cd "$dir" && for p in $PACKAGES; do apt-get download "$p" || echo "gpu.sh: WARNING: no package $p here"; done)
  ls -la "$dir"
  git -C "$ROOT" check-ignore -q "$dir" || echo "gpu.sh: WARNING: $dir is not git-ignored; add it to .git/info/exclude"
}

unpack() {
  ls "$DEB_DIR"/*.deb >/dev/null 2>&1 ||
    { say "no .deb files in $DEB_DIR (run 'bench/gpu.sh fetch' where apt works, carry the folder)"; exit 1; }
  mkdir -p "$PREFIX" "$THRUST_PREFIX"
  local f name
  for f in "$DEB_DIR"/*.deb; do
    name="$(basename "$f")"; name="${name%%_*}"
    if [[ " $THRUST_PACKAGES " == *" $name "* ]]; then dpkg -x "$f" "$THRUST_PREFIX"; else dpkg -x "$f" "$PREFIX"; fi
  done
  # The .pc files name /usr (liburing's even in libdir/includedir): point them at the
  # prefix (CMake configs are relocatable).
  find "$PREFIX/usr" -name '*.pc' -print0 | xargs -0 -r sed -i -E \
    "s#^(prefix|exec_prefix|libdir|includedir|sharedlibdir)=/usr([/[:space:]]|\$)#\1=$PREFIX/usr\2#"
  PKG_CONFIG_PATH="$PREFIX/usr/lib/x86_64-linux-gnu/pkgconfig" pkg-config --libs liburing libxxhash | tee -a "$LOG"
  [[ -f "$THRUST_PREFIX/usr/include/thrust/version.h" ]] || { say "libthrust-dev missing from $DEB_DIR"; exit 1; }
  say "unpacked $(ls "$DEB_DIR"/*.deb | wc -l) packages into $PREFIX (Thrust into $THRUST_PREFIX)"
}

configure() {
  deps_env
  nvidia-smi -L 2>&1 | tee -a "$LOG" || say "WARNING: no nvidia-smi"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' \
    2>&1 | tee -a "$LOG" || true
  local args=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"
              "-DSEER_THRUST_INCLUDE_DIR=$THRUST_PREFIX/usr/include")
  if [[ -n "$TORCH_PREFIX" ]] && [[ $DRY == 0 || -d "$TORCH_PREFIX/Torch" ]]; then
    args+=(-DSEER_WITH_TORCH=ON)
  else
    say "no PyTorch CMake package here: configuring without torch"
    args+=(-DSEER_WITH_TORCH=OFF)
  fi
  if [[ $DRY == 0 ]]; then args+=(-DCMAKE_CUDA_ARCHITECTURES=90); fi
  command -v ninja >/dev/null 2>&1 && args+=(-G Ninja)
  [[ -f "$BUILD/CMakeCache.txt" ]] && args=("-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH")
  cmake -S "$ROOT" -B "$BUILD" "${args[@]}" 2>&1 | tee "$RES/configure.log" | grep -E "Seer|CUDA|Error|error" || true
  grep -q "Seer: CUDA kernels ON" "$RES/configure.log" || [[ -f "$BUILD/CMakeCache.txt" ]] ||
    say "WARNING: CUDA kernels are OFF in this build"
  [[ -f "$BUILD/CMakeCache.txt" ]] || { say "configure failed (see configure.log)"; exit 1; }
}

build() {
  deps_env
  # Kernels tests and the planner bench first: they are what a short lease must not miss.
  cmake --build "$BUILD" -j "$JOBS" --target seer_kernels_tests planner_bench > "$RES/build.log" 2>&1 ||
    { tail -30 "$RES/build.log"; say "build of the kernels tests / planner bench FAILED"; return 1; }
  if [[ $DRY == 1 ]]; then return; fi
  # Keep going past a failing target: every other target is built and tested, and the
  # log names each failure (make -k / ninja -k 0).
  local keep_going=(-k)
  [[ -f "$BUILD/build.ninja" ]] && keep_going=(-k 0)
  cmake --build "$BUILD" -j "$JOBS" -- "${keep_going[@]}" >> "$RES/build.log" 2>&1 || {
    grep -E "error:|Error [0-9]+|FAILED:" "$RES/build.log" | head -30
    say "full build FAILED for some targets (listed above; the others are built and tested)"
  }
  tail -3 "$RES/build.log"
}

tests() {
  deps_env
  "$BUILD/tests/kernels/seer_kernels_tests" > "$RES/kernels_tests.log" 2>&1 || say "kernels tests FAILED"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$RES/kernels_tests.log" | tee -a "$LOG"
  if [[ $DRY == 1 ]]; then return; fi
  (cd "$BUILD" && ctest --output-on-failure -j "$JOBS" --timeout 300) > "$RES/ctest.log" 2>&1 || say "ctest FAILED"
  tail -15 "$RES/ctest.log"
  # Which tests skipped, and why (on a GPU machine only CUDA-less behaviour may skip).
  grep -h -A1 "Skipped$" "$RES/ctest.log" | grep -v "^--" | sort | uniq -c | tee -a "$LOG" || true
}

planner() {
  deps_env
  local size=(--batches 100 --batch-ids 100000 --nodes 10000000)
  [[ $DRY == 1 ]] && size=(--batches 20 --batch-ids 10000 --nodes 1000000)
  "$BUILD/bench/planner_bench" "${size[@]}" --planner cpu,thrust-host,gpu --repeats 3 \
    --json "$RES/planner.json" 2>&1 | tee "$RES/planner.log"
  "$BUILD/bench/planner_bench" "${size[@]}" --planner cpu,thrust-host,gpu --repeats 3 --scores \
    --json "$RES/planner_scores.json" 2>&1 | tee -a "$RES/planner.log"
  if [[ $DRY == 0 ]] && (( $(left) > 240 )); then  # Ginex-size superbatch: S = 1000
    "$BUILD/bench/planner_bench" --batches 1000 --batch-ids 100000 --nodes 100000000 --planner cpu,gpu \
      --json "$RES/planner_large.json" 2>&1 | tee -a "$RES/planner.log"
  fi
}

e2e() {
  deps_env
  export NODES="${NODES:-4000000}" DIMS="${DIMS:-128}" LIMIT="${LIMIT:-384M}" BUDGET="${BUDGET_E2E:-256M}"
  export MODES="${MODES:-pyg-peer pyg+ seer}"
  if [[ $DRY == 1 ]]; then
    bash -n "$ROOT/bench/e2e.sh" && "$ROOT/bench/e2e.sh" --help >/dev/null && say "e2e.sh parses"
    if python3 -c 'import torch_geometric' 2>/dev/null; then
      python3 "$ROOT/bench/pyg_peer.py" --help >/dev/null && say "pyg_peer.py starts"
    else
      say "torch_geometric not installed here: pyg_peer.py checked for syntax only"
      python3 -m py_compile "$ROOT/bench/pyg_peer.py"
    fi
    say "would run: NODES=$NODES DIMS=$DIMS LIMIT=$LIMIT BUDGET=$BUDGET MODES='$MODES' bench/e2e.sh --quick --build $BUILD --only train --repeats 1 --out $RES/e2e"
    return
  fi
  python3 -c 'import torch_geometric; print("torch_geometric", torch_geometric.__version__)' 2>&1 | tee -a "$LOG"
  "$ROOT/bench/e2e.sh" --quick --build "$BUILD" --only train --repeats 1 --modes "$MODES" --out "$RES/e2e" \
    > "$RES/e2e.log" 2>&1 || say "e2e FAILED"
  tail -40 "$RES/e2e.log"
  [[ -f "$RES/e2e/summary.json" ]] && cp "$RES/e2e/summary.json" "$RES/e2e_summary.json"
  return 0
}


case "$STEP" in
  fetch) fetch "$@" ;;
  all)
    say "start $(date -u +%FT%TZ), budget ${BUDGET} s, dry-run $DRY, jobs $JOBS"
    unpack
    configure
    maybe 240 build
    maybe 60 tests
    maybe 60 planner
    maybe 180 e2e
    ls -la "$RES" | tee -a "$LOG"
    say "done in $SECONDS s"
    publish
    ;;
  build) unpack; configure; build; publish ;;
  tests|planner|e2e) "$STEP"; publish ;;
  *) sed -n '2,34p' "$0"; exit 2 ;;
esac
