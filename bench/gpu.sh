#!/usr/bin/env bash
# The GPU run (issues 6, 14, 26) in one call on a lent GPU machine: build Seer with CUDA
# against the machine's PyTorch, run the whole ctest (CUDA tests first), the planner bench
# GPU vs CPU (byte-identical check + accesses/s), and bench/e2e.sh with the PyTorch Geometric
# peer (bench/pyg_peer.py) on a dataset >= 5x a real memory limit; then a final table.
# The GPU machine has no network and none of liburing/TBB/fmt/CLI11/GTest/Thrust/
# nlohmann-json/xxHash/Google Benchmark: their Debian packages are fetched HERE and carried.
#
#   bench/gpu.sh fetch [DIR]     here (apt): download the .debs into DIR (default .deps,
#                                git-ignored) — libthrust-dev/libcub-dev included
#   bench/gpu.sh all             there: unpack, configure, build, ctest, planner bench,
#                                e2e, final table; each step is skipped when the time left
#                                (GPU_SH_BUDGET seconds, default 480) cannot hold it, and
#                                says so; a step that runs is also cut at the time left
#                                (timeout), keeping ~20 s for the table. Results in RES
#                                (default build-gpu/gpu-out); after every step they are
#                                published to $OUT when it is set (the device tool's folder):
#                                gpu-results.tgz (everything but the dataset) and the main
#                                logs, at most 8 files
#   bench/gpu.sh all --dry-run   here, without a GPU: every CPU part — the .deb unpacking
#                                into /tmp prefixes, the CUDA configure against them,
#                                building and running the kernels tests and the planner
#                                bench (gpu column skipped), checking that e2e.sh parses, that
#                                its memory limit bites (--check-limit), the peer's sampler
#                                self-test and (with a build/seer) its draws against Seer's —
#                                in /tmp/seer-gpu-dryrun
#   bench/gpu.sh build | tests | planner | e2e | table [--dry-run]   one step (after `all` or
#                                `build`); `table` prints the final table from RES again
#
# The call on the GPU machine (10-minute commands; carry the .deb folder):
#   carry [".deps"], command: bench/gpu.sh all
# If the build leaves too little time for e2e, a second call right after (the machine
# keeps build-gpu/ while it is warm, and the build is reused) runs it: bench/gpu.sh e2e
#
# Time plan of `all` (measured on the H200 box, 16 cores; machine start ~30 s comes first):
#   unpack + configure ~15 s | build ~110 s (skipped under 150 s left) | CUDA tests
#   (ctest -R 'Cuda|Gpu|GPU') ~20 s (40) | planner ~40 s (60) | e2e ~200 s (200: the peer's
#   sampler checks 3 s, seer gen of 16M nodes ~20 s, the storage ceiling 5 s, seer then the
#   peer then pyg+, two epochs each + start-up and evaluation, the Belady check; E2E_DEADLINE
#   stops starting runs that would eat the next step's 60 s: they are listed SKIPPED) | the
#   rest of ctest ~60 s at -j16 (60; cut by --stop-time at the budget) | table: 8 minutes
#   (GPU_SH_BUDGET=480) in all, ~8.5 with the machine's start.
# The GPU tests, the planner and e2e run before the CPU-only tests (which CI runs anyway),
# so that a short lease keeps what only the GPU box can measure.
#
# Packages are unpacked with dpkg -x (nothing installed system-wide) into $PREFIX; the
# Thrust/CUB headers go to a prefix of their own, given to CMake as SEER_THRUST_INCLUDE_DIR,
# so that nvcc (which must use the CUDA toolkit's own Thrust) never sees them.
#
# e2e (environment overrides): NODES x DIMS float32 features vs LIMIT, defaults 16M x 128
# under 1536M: features 16M x 128 x 4 B = 7.63 GiB = 5.1x the limit (5.6x with the
# topology, 0.72 GiB; ~9 GiB of disk); BUDGET_E2E (seer train --memory-budget, whole
# process: the CUDA runtime ~0.85 GiB is paid first) 1408M; TRAIN_FRACTION 0.0013 (~21
# batches of 1000 per epoch, as the 4M-node run of issue 26), VALID_FRACTION 0.0002 and
# TEST_FRACTION 0.0005 (evaluation stays short; 8000 test nodes); MODES "seer pyg-peer pyg+"
# (the goal's pair first), PEER_WORKERS 2 (8 were OOM-killed on the H200), one repeat, training only, EPOCHS 2 (epoch 1 =
# cold, the steady epoch = the median of epochs 2..n, both reported). e2e.sh stops when no
# memory limit can be set; E2E_NO_LIMIT=1 lets it run without one (every result says so).
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
# The script's time budget in seconds (not e2e.sh's memory BUDGET, which e2e() exports).
TIME_BUDGET_S="${GPU_SH_BUDGET:-480}"
TABLE_RESERVE=20  # seconds kept for the final table
REST_RESERVE=60   # seconds e2e leaves to the rest of ctest (its runs stop starting before)
GPU_TESTS='Cuda|Gpu|GPU'  # the CUDA subset of ctest (names), run first
PACKAGES="libgloo-dev liburing-dev liburing2 libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libhwloc15 \
libfmt-dev libfmt9 libcli11-dev libgtest-dev googletest zlib1g-dev nlohmann-json3-dev \
libxxhash-dev libxxhash0 libbenchmark-dev libbenchmark1debian libthrust-dev libcub-dev"
THRUST_PACKAGES="libthrust-dev libcub-dev"
PUBLISH="${OUT:-}"  # the device tool's result folder, when there
mkdir -p "$RES"
LOG="$RES/gpu-sh.log"
STEPS="$RES/steps.tsv"  # one line per step: name, status (ok / FAILED / SKIPPED / TIMED OUT), seconds

say() { echo "gpu.sh: $*" | tee -a "$LOG"; }
left() { echo $((TIME_BUDGET_S - SECONDS)); }
# Runs "$@" for at most $1 seconds (then TERM, KILL 10 s later); 124 when cut.
run_for() {
  local secs="$1"; shift
  (( secs > 0 )) || return 124
  timeout --kill-after=10 "$secs" "$@"
}
# Runs a step when at least $1 seconds are left, else says how to run it later; a step that
# runs is cut when only TABLE_RESERVE seconds are left.
maybe() {
  local need="$1" name="$2" t0=$SECONDS rc=0; shift
  if (( $(left) < need )); then
    say "SKIPPED '$*': $(left) s left, it needs ~${need} s. Run next: bench/gpu.sh $name"
    printf '%s\tSKIPPED\t0\n' "$name" >> "$STEPS"
    return 0
  fi
  say "step '$*' ($(left) s left)"
  export STEP_DEADLINE=$(( TIME_BUDGET_S - TABLE_RESERVE ))  # in $SECONDS of this script
  "$@" || rc=$?
  local status=ok
  if [[ $rc == 124 ]]; then status="TIMED OUT"; say "step '$*' TIMED OUT (cut to keep the budget)"
  elif [[ $rc != 0 ]]; then status=FAILED; say "step '$*' FAILED (exit $rc)"; fi
  printf '%s\t%s\t%d\n' "$name" "$status" $((SECONDS - t0)) >> "$STEPS"
  publish
}
# Seconds a step may still run (its deadline minus now).
step_left() { echo $(( ${STEP_DEADLINE:-$((TIME_BUDGET_S - TABLE_RESERVE))} - SECONDS )); }

# Everything but the dataset as one archive, and the main logs, into $OUT (<= 8 files).
publish() {
  [[ -n "$PUBLISH" && "$PUBLISH" != "$RES" ]] || return 0
  tar czf "$PUBLISH/gpu-results.tgz" --exclude='graph-*' -C "$RES" . 2>/dev/null || true
  local f
  for f in gpu-sh.log ctest_gpu.log ctest.log planner.log e2e.log e2e_summary.json final_table.txt; do
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
  run_for "$(step_left)" cmake --build "$BUILD" -j "$JOBS" --target seer_kernels_tests planner_bench \
    > "$RES/build.log" 2>&1 ||
    { local rc=$?; tail -30 "$RES/build.log"; say "build of the kernels tests / planner bench FAILED"; return $rc; }
  if [[ $DRY == 1 ]]; then return; fi
  # Keep going past a failing target: every other target is built and tested, and the
  # log names each failure (make -k / ninja -k 0).
  local keep_going=(-k) rc=0
  [[ -f "$BUILD/build.ninja" ]] && keep_going=(-k 0)
  run_for "$(step_left)" cmake --build "$BUILD" -j "$JOBS" -- "${keep_going[@]}" >> "$RES/build.log" 2>&1 || rc=$?
  if [[ $rc != 0 ]]; then
    grep -E "error:|Error [0-9]+|FAILED:" "$RES/build.log" | head -30
    say "full build FAILED for some targets (listed above; the others are built and tested)"
    [[ $rc == 124 ]] && return 124
  fi
  tail -3 "$RES/build.log"
}

# ctest over the tests whose names match (-R) or do not match (-E) the CUDA subset; cut
# (--stop-time, then timeout) at the step's deadline.
run_ctest() {
  local sel="$1" log="$2" secs stop
  secs=$(step_left)
  (( secs > 5 )) || return 124
  stop=$(date -d "+$((secs - 5)) seconds" +%H:%M:%S)
  # "Total Tests: N" first: tests that the stop time leaves unstarted are in no ctest count.
  (cd "$BUILD" && ctest -N "$sel" "$GPU_TESTS" | grep "Total Tests:") > "$log" 2>&1 || true
  # One OpenMP thread per test when ctest runs JOBS at once: libtorch's CPU ops otherwise
  # start a thread per core in every test and they spin against each other (on the
  # 16-core H200 box, CPU-only training tests that take 0.2 s alone ran 60-150 s at -j8).
  local omp=$(( $(nproc) / JOBS )); (( omp >= 1 )) || omp=1
  (cd "$BUILD" && OMP_NUM_THREADS="${OMP_NUM_THREADS:-$omp}" run_for "$secs" ctest "$sel" "$GPU_TESTS" \
     --output-on-failure -j "$JOBS" --timeout 300 --stop-time "$stop") >> "$log" 2>&1
}

tests_gpu() {
  deps_env
  if [[ $DRY == 1 ]]; then
    "$BUILD/tests/kernels/seer_kernels_tests" > "$RES/kernels_tests.log" 2>&1 || say "kernels tests FAILED"
    grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$RES/kernels_tests.log" | tee -a "$LOG"
    return
  fi
  local rc=0
  run_ctest -R "$RES/ctest_gpu.log" || rc=$?
  tail -15 "$RES/ctest_gpu.log"
  [[ $rc == 0 ]] || say "CUDA tests: some FAILED or did not run (ctest_gpu.log)"
  # What a first training step still adds to the process after the runtime's warm-up
  # (the memory budget's runtime term; the test prints it, ctest shows it only on failure).
  local exe="$BUILD/tests/executor/seer_executor_tests"
  if [[ -x "$exe" ]]; then
    run_for 60 "$exe" --gtest_filter='RuntimeBudgetTest.CudaWarmUpCoversTheFirstTrainingSteps' 2>&1 |
      grep -E "^RSS after warm-up" | sed 's/^/warm-up: /' | tee -a "$LOG" || true
  fi
  return $rc
}

tests_rest() {
  deps_env
  [[ $DRY == 0 ]] || return 0
  local rc=0
  run_ctest -E "$RES/ctest.log" || rc=$?
  tail -8 "$RES/ctest.log"
  # Which tests skipped, and why (on a GPU machine only CUDA-less behaviour may skip).
  grep -h -A1 "Skipped$" "$RES/ctest.log" "$RES/ctest_gpu.log" 2>/dev/null | grep -v "^--" | sort | uniq -c | tee -a "$LOG" || true
  return $rc
}

tests() {
  local rc=0
  tests_gpu || rc=$?
  tests_rest || rc=$?
  return $rc
}

planner() {
  deps_env
  local size=(--batches 100 --batch-ids 100000 --nodes 10000000) rc=0
  [[ $DRY == 1 ]] && size=(--batches 20 --batch-ids 10000 --nodes 1000000)
  rm -f "$RES"/planner*.json
  run_for "$(step_left)" "$BUILD/bench/planner_bench" "${size[@]}" --planner cpu,thrust-host,gpu --repeats 3 \
    --json "$RES/planner.json" 2>&1 | tee "$RES/planner.log" || rc=$?
  run_for "$(step_left)" "$BUILD/bench/planner_bench" "${size[@]}" --planner cpu,thrust-host,gpu --repeats 3 --scores \
    --json "$RES/planner_scores.json" 2>&1 | tee -a "$RES/planner.log" || rc=$?
  # The block rule of --read-block (4 KiB blocks of 512 B rows): the GPU's block planner,
  # on 20 batches (the CPU block planner plans ~0.2M accesses/s: ~10 s).
  local block_size=(--batches 20 --batch-ids 100000 --nodes 10000000)
  [[ $DRY == 1 ]] && block_size=("${size[@]}")
  run_for "$(step_left)" "$BUILD/bench/planner_bench" "${block_size[@]}" --planner cpu,thrust-host,gpu --repeats 1 \
    --scores --read-block 4K --row-bytes 512 --json "$RES/planner_blocks.json" 2>&1 | tee -a "$RES/planner.log" || rc=$?
  if [[ $DRY == 0 ]] && (( $(left) > 300 )); then  # Ginex-size superbatch: S = 1000 (~15 s)
    run_for "$(step_left)" "$BUILD/bench/planner_bench" --batches 1000 --batch-ids 100000 --nodes 100000000 \
      --planner cpu,gpu --json "$RES/planner_large.json" 2>&1 | tee -a "$RES/planner.log" || rc=$?
  fi
  return $rc
}

e2e() {
  deps_env
  export NODES="${NODES:-16000000}" DIMS="${DIMS:-128}" LIMIT="${LIMIT:-1536M}" BUDGET="${BUDGET_E2E:-1408M}"
  export TRAIN_FRACTION="${TRAIN_FRACTION:-0.0013}" VALID_FRACTION="${VALID_FRACTION:-0.0002}"
  export TEST_FRACTION="${TEST_FRACTION:-0.0005}" EPOCHS="${EPOCHS:-2}"
  # Seer and the peer first (the goal's pair); pyg+ and the Belady check only when the time
  # left holds them (E2E_DEADLINE: no run starts that would not end before the rest of ctest).
  # The peer: 2 loader workers, each keeping one batch ready (PEER_PREFETCH=1). On the H200
  # (2026-11-27) 8 workers were killed by the 1536M limit after ~45 s and the retry with 2
  # (peak RSS 1255 MiB) is what finished; starting with 2 saves that time for the rest of
  # ctest. Killed by the limit anyway, it runs once more with PEER_RETRY_WORKERS.
  export MODES="${MODES:-seer pyg-peer pyg+}" PEER_WORKERS="${PEER_WORKERS:-2}" PEER_PREFETCH="${PEER_PREFETCH:-1}"
  export PEER_RETRY_WORKERS="${PEER_RETRY_WORKERS:-1}"
  export E2E_DEADLINE="${E2E_DEADLINE:-$(( $(date +%s) + TIME_BUDGET_S - TABLE_RESERVE - REST_RESERVE - SECONDS ))}"
  local flags=(--quick --build "$BUILD" --only train --repeats 1 --modes "$MODES" --out "$RES/e2e")
  [[ "${E2E_NO_LIMIT:-0}" == 1 ]] && flags+=(--no-limit)
  mkdir -p "$RES/e2e"
  if [[ $DRY == 1 ]]; then
    bash -n "$ROOT/bench/e2e.sh" && "$ROOT/bench/e2e.sh" --help >/dev/null && say "e2e.sh parses"
    "$ROOT/bench/e2e.sh" "${flags[@]}" --check-limit 2>&1 | tee -a "$LOG" || say "e2e.sh --check-limit FAILED"
    local py=python3  # the peer's self-test needs numpy only: any python3 that has it
    python3 -c 'import numpy' 2>/dev/null || py=/usr/bin/python3
    "$py" "$ROOT/bench/pyg_peer.py" --self-test 2>&1 | tee -a "$LOG"
    if [[ -x "$ROOT/build/seer" ]]; then  # the sampler's draws against Seer's (a built seer here)
      "$py" "$ROOT/bench/pyg_peer.py" --check-vs-seer "$ROOT/build/seer" 2>&1 | grep -v "^seer gen" | tee -a "$LOG"
    fi
    if python3 -c 'import torch_geometric' 2>/dev/null; then
      python3 "$ROOT/bench/pyg_peer.py" --help >/dev/null && say "pyg_peer.py starts"
    else
      say "torch_geometric not installed here: pyg_peer.py checked by its self-test only"
    fi
    say "would run: NODES=$NODES DIMS=$DIMS LIMIT=$LIMIT BUDGET=$BUDGET TRAIN_FRACTION=$TRAIN_FRACTION MODES='$MODES' bench/e2e.sh ${flags[*]}"
    return
  fi
  python3 -c 'import torch_geometric; print("torch_geometric", torch_geometric.__version__)' 2>&1 | tee -a "$LOG"
  python3 -c 'import pyg_lib' 2>/dev/null && say "pyg-lib present: the peer uses NeighborLoader" ||
    say "no pyg-lib: the peer uses NeighborLoader with torch-sparse if present, else its vectorised sampler"
  # The peer's sampler: its self-test and its draws against `seer sample` (seconds).
  { python3 "$ROOT/bench/pyg_peer.py" --self-test
    python3 "$ROOT/bench/pyg_peer.py" --check-vs-seer "$BUILD/seer"; } 2>&1 | grep -v "^seer gen" |
    tee "$RES/peer_check.log" | tee -a "$LOG" || true
  # The limit first (seconds): a box where none can be set says so before the dataset is made.
  local rc=0
  run_for 60 "$ROOT/bench/e2e.sh" "${flags[@]}" --check-limit > "$RES/e2e_limit.log" 2>&1 || rc=$?
  cat "$RES/e2e_limit.log" | tee -a "$LOG"
  if [[ $rc != 0 ]]; then
    say "e2e NOT RUN: no memory limit could be set or it does not bite (e2e_limit.log); E2E_NO_LIMIT=1 runs without one"
    return 3
  fi
  rc=0
  run_for "$(step_left)" "$ROOT/bench/e2e.sh" "${flags[@]}" > "$RES/e2e.log" 2>&1 || rc=$?
  [[ $rc == 124 ]] && say "e2e cut at the budget: the table has the runs that finished"
  tail -25 "$RES/e2e.log"
  [[ -f "$RES/e2e/summary.json" ]] && cp "$RES/e2e/summary.json" "$RES/e2e_summary.json"
  return $rc
}

# The final table: short (it must fit in the last 12,000 characters of the output), from
# the files in RES only, so `bench/gpu.sh table` prints it again.
table() {
  python3 - "$RES" "${BUDGET:-${BUDGET_E2E:-1408M}}" <<'PY' | tee "$RES/final_table.txt"
import glob, json, os, re, sys
res = sys.argv[1]
def read(name):
    p = os.path.join(res, name)
    return open(p, errors="replace").read() if os.path.exists(p) else None
def load(name):
    try:
        return json.loads(read(name) or "null")
    except ValueError:
        return None
out = []
p = out.append
p("=" * 100)
p("gpu.sh FINAL TABLE (RES %s)" % res)
log = read("gpu-sh.log") or ""
gpu = next((l.strip() for l in log.splitlines() if l.startswith("GPU 0:")), "no GPU seen")
torch = next((l.strip() for l in log.splitlines() if l.startswith("torch ")), "torch ?")
p("machine: %s; %s" % (re.sub(r"\s*\(UUID:.*\)", "", gpu), torch))
steps = [l.split("\t") for l in (read("steps.tsv") or "").splitlines() if l.count("\t") == 2]
p("steps: " + ", ".join("%s %s%s" % (n, s, " %ss" % t if s != "SKIPPED" else "") for n, s, t in steps))
warm = next((l.strip() for l in log.splitlines() if l.startswith("warm-up: ")), None)
if warm:
    p(warm + " (the runtime term of --memory-budget: the rest should be the pinned staging)")

# Build: the targets that failed (ninja "FAILED: path", make "*** [path] Error").
b = read("build.log")
if b is None:
    p("build: not run")
else:
    bad = []
    for line in b.splitlines():
        if not re.match(r"FAILED: |g?make(\[\d+\])?: \*\*\* \[", line):
            continue
        names = re.findall(r"CMakeFiles/([^/\s\]]+)\.dir/", line)
        m = re.match(r"FAILED: (?:\[code=\d+\] )?(\S+)", line)
        name = names[-1] if names else os.path.basename(m.group(1)) if m else None
        if name and name not in bad:
            bad.append(name)
    p("build: " + ("ok" if not bad else "FAILED targets (%d): %s" % (len(bad), ", ".join(bad[:12]) + (" ..." if len(bad) > 12 else ""))))

# ctest: the CUDA subset and the rest, test by test.
res_t, seen_logs, total = {}, [], 0
for name in ("ctest_gpu.log", "ctest.log"):
    t = read(name)
    if t is None:
        continue
    seen_logs.append(name)
    for m in re.finditer(r"^\s*\d+/\d+ Test\s+#\d+: (\S+).*?\.{2,}\s*(?:\*\*\*)?([A-Za-z][^\n]*?)\s+[0-9.]+ sec\s*$", t, re.M):
        st = m.group(2)
        res_t[m.group(1)] = ("Not Run" if st.startswith("Not Run") else st[:30] if st.startswith("Exception")
                             else st.split()[0])
    for m in re.finditer(r"^\s*\d+ - (\S+).*\(([^()]*)\)\s*$", t, re.M):  # the lists at the end
        res_t.setdefault(m.group(1), m.group(2))
    m = re.search(r"Total Tests: (\d+)", t) or re.search(r"tests? failed out of (\d+)", t)
    total += int(m.group(1)) if m else 0
if not seen_logs:
    p("ctest: not run")
else:
    passed = [n for n, s in res_t.items() if s == "Passed"]
    skipped = [n for n, s in res_t.items() if s == "Skipped"]
    notrun = [n for n, s in res_t.items() if s in ("Not Run", "Disabled")]
    failed = [n for n, s in res_t.items() if n not in passed + skipped + notrun]
    cuda = [n for n in res_t if re.search(r"Cuda|Gpu|GPU", n)]
    cuda_pass = [n for n in cuda if res_t[n] == "Passed"]
    unseen = max(0, total - len(res_t))  # stopped at the budget (--stop-time) or not reported
    p("ctest (%s): %d passed, %d failed, %d skipped, %d not run%s; CUDA subset %d/%d passed" % (
        " + ".join(seen_logs), len(passed), len(failed), len(skipped), len(notrun),
        ", %d not reached (budget)" % unseen if unseen else "", len(cuda_pass), len(cuda)))
    for n in failed[:15]:
        p("  FAILED %s (%s)" % (n, res_t[n]))
    if len(failed) > 15:
        p("  ... %d more failed (ctest*.log)" % (len(failed) - 15))
    if skipped:
        p("  skipped: " + ", ".join(skipped[:8]) + (" ..." if len(skipped) > 8 else ""))
    if notrun:
        p("  not run: " + ", ".join(notrun[:8]) + (" ..." if len(notrun) > 8 else ""))

# Planner: accesses/s GPU over CPU, byte-identical plans.
for name, what in (("planner.json", "S=100"), ("planner_scores.json", "S=100 scores"),
                   ("planner_blocks.json", "S=100 scores, 4K blocks"), ("planner_large.json", "S=1000")):
    j = load(name)
    if not j:
        continue
    cpu = j.get("cpu_seconds") or -1
    g = j.get("gpu_seconds") or -1
    acc = j.get("accesses", 0)
    if g > 0 and cpu > 0:
        p("planner %s: CPU %.3g accesses/s, GPU %.3g accesses/s = %.2fx (goal >= 10x: %s), %s" % (
            what, acc / cpu, acc / g, cpu / g, "met" if cpu / g >= 10 else "MISSED",
            "byte-identical" if j.get("gpu_identical") else "PLANS DIFFER"))
    else:
        p("planner %s: CPU %.3g accesses/s, GPU not timed" % (what, acc / cpu if cpu > 0 else 0))

# e2e: epoch 1 and the steady epoch per mode, Seer vs the peer, memory.
pc = read("peer_check.log")
if pc:
    st = ("passed" if "pyg_peer self-test: passed" in pc else "FAILED" if "pyg_peer self-test: FAILED" in pc
          else "did not run")
    vs = next((l for l in pc.splitlines() if l.startswith("pyg_peer vs seer:")), None)
    if vs:
        z = re.findall(r"z ([+-]?[0-9.]+)", vs)
        vs = "%s (z: seer %s, peer %s, seer vs peer %s)" % (vs.rsplit(": ", 1)[-1], *(z + ["?"] * 3)[:3])
    p("peer sampler: self-test %s; draws vs seer sample: %s" % (st, vs or "did not run (peer_check.log)"))
s = load("e2e/summary.json")
lim = read("e2e_limit.log")
if lim:
    lines = [l for l in lim.splitlines() if l.startswith("e2e:")]
    p("memory limit: " + " | ".join(l[5:] for l in lines[:1] + lines[-1:]))
    err = [l for l in lim.splitlines() if "ERROR" in l]
    if err:
        p("  " + err[0][:400])
if not s:
    p("e2e: no summary (%s)" % ("not run" if read("e2e.log") is None else "see e2e.log"))
else:
    modes = {(m["kind"], m["mode"]): m for m in s["modes"] if m["kind"] == "train"}
    f = lambda x, fmt="%.2f": "-" if x is None else fmt % x
    steady = next((m.get("steady_epochs") for m in modes.values() if m.get("steady_epochs")), "-")
    drops = sorted({m.get("cache_drop") or "?" for m in modes.values()})
    p("e2e (train, dim %s; page cache dropped before each run by %s): mode | epoch 1 s | steady s (median of epochs %s) |"
      " peak RSS MiB / budget MiB | cgroup peak MiB | test acc | limit" % (
        ",".join(sorted({str(m["dim"]) for m in s["modes"]})), "/".join(drops), steady))
    for (kind, mode), m in sorted(modes.items(), key=lambda kv: ["seer", "pyg-peer", "pyg+"].index(kv[0][1])
                                  if kv[0][1] in ("pyg-peer", "pyg+", "seer") else 9):
        rss, bud = m.get("peak_rss_bytes_max") or -1, m.get("budget_bytes")
        p("  %-9s | %6s | %6s | %6s / %-6s%s | %6s | %s | %s" % (
            mode, f(m.get("first_epoch_s_median")), f(m["epoch_s_median"]), f(rss / 2**20 if rss > 0 else None, "%.0f"),
            f(bud / 2**20 if bud else None, "%.0f"),
            (" (%+.1f%%)" % (100.0 * (rss - bud) / bud)) if bud and rss > 0 else "",
            f(m["cgroup_peak_bytes"] / 2**20 if m["cgroup_peak_bytes"] > 0 else None, "%.0f"),
            f(m.get("test_accuracy_median"), "%.4f"), "NO LIMIT" if m.get("memory_limit") == "none" else m.get("memory_limit", "?")))
    seer, peer, pygp = modes.get(("train", "seer")), modes.get(("train", "pyg-peer")), modes.get(("train", "pyg+"))
    if seer and peer:
        c, st = seer.get("first_epoch_speedup_vs_pyg-peer"), seer.get("speedup_vs_pyg-peer")
        p("Seer vs PyG peer: epoch 1 Seer/peer time %s (speed-up %sx), steady Seer/peer time %s (speed-up %sx); goal"
          " speed-up >= 3x both: %s" % (f(1 / c if c else None), f(c), f(1 / st if st else None), f(st),
                                        "met" if c and st and min(c, st) >= 3 else "MISSED"))
        p("  peer: sampler %s; model %s; %s loader workers, prefetch factor %s" % (
            peer.get("sampler"), peer.get("model_impl"), peer.get("loader_workers"), peer.get("prefetch_factor")))
        if seer.get("test_accuracy_median") is not None and peer.get("test_accuracy_median") is not None:
            d = 100 * (seer["test_accuracy_median"] - peer["test_accuracy_median"])
            p("accuracy: Seer %.4f, peer %.4f: %+.2f points (goal within 1: %s)" % (
                seer["test_accuracy_median"], peer["test_accuracy_median"], d, "met" if abs(d) <= 1 else "MISSED"))
    elif seer or peer:
        p("Seer vs PyG peer: no ratio (%s did not finish)" % ("the peer" if seer else "Seer"))
    if seer and pygp:
        p("Seer vs pyg+: epoch 1 speed-up %sx, steady %sx" % (f(seer.get("first_epoch_speedup_vs_pyg+")),
                                                             f(seer.get("speedup_vs_pyg+"))))
    if seer and seer.get("budget_bytes") and (seer.get("peak_rss_bytes_max") or -1) > 0:
        r = seer["peak_rss_bytes_max"] / seer["budget_bytes"]
        p("Seer peak RSS / budget = %.3f (goal <= 1.05: %s)" % (r, "met" if r <= 1.05 else "MISSED"))
    for fl in s.get("failed", []):
        p("  %s run %s: %s%s" % ("SKIPPED" if fl.get("skipped") else "FAILED", fl["run"], fl["why"][:200],
                                 ": " + fl["last_line"][:200] if fl.get("last_line") else ""))
    if any(m.get("memory_limit") == "none" for m in s["modes"]):
        p("  NOTE: NO MEMORY LIMIT in these runs (E2E_NO_LIMIT=1): not the fair comparison")
bel = read("e2e/belady.jsonl")
if bel and bel.strip():
    r = json.loads(bel.strip().splitlines()[-1])
    p("Belady: train misses %d, seer stats superbatch scope %d (%s), trace lower bound %d" % (
        r["train_misses"], r["stats_superbatch_misses"], "equal" if r["equal"] else "DIFFER", r["trace_lower_bound_misses"]))
p("=" * 100)
print("\n".join(out))
PY
}

case "$STEP" in
  fetch) fetch "$@" ;;
  all)
    : > "$STEPS"  # results of an earlier call go (the e2e dataset stays: it is reused)
    rm -f "$RES"/{ctest_gpu.log,ctest.log,planner.json,planner_scores.json,planner_large.json,e2e_limit.log,e2e.log} \
      "$RES"/{e2e_summary.json,final_table.txt} "$RES"/e2e/{summary.json,results.jsonl,failed.jsonl,belady.jsonl} "$RES"/peer_check.log
    say "start $(date -u +%FT%TZ), budget ${TIME_BUDGET_S} s, dry-run $DRY, jobs $JOBS"
    unpack
    configure
    maybe 150 build
    maybe 40 tests_gpu
    maybe 60 planner
    maybe 200 e2e
    maybe 60 tests_rest
    ls -la "$RES" | tee -a "$LOG"
    say "done in $SECONDS s"
    table
    publish
    ;;
  build) : > "$STEPS"; unpack; configure; maybe 0 build; publish ;;
  tests|tests_gpu|tests_rest|planner|e2e) maybe 0 "$STEP"; table; publish ;;
  table) table ;;
  *) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d'; exit 2 ;;
esac
