# Sourced by the training benchmarks (dist.sh, train_bench.sh): the seer binary check, the
# generated graph they train on (kept while it passes `seer check`), the machine line and
# the Release-build warning. Defines functions only.

# bench_require_seer SEER: exits 1, saying so on stderr, unless SEER is an executable.
bench_require_seer() {
  [[ -x "$1" ]] || { echo "no seer binary at $1 (build it first)" >&2; exit 1; }
}

# bench_graph SEER DATA NODES AVG_DEGREE DIM TRAIN_FRACTION: generates the graph into DATA
# unless a dataset that passes `seer check` is there already.
bench_graph() {
  local seer="$1" data="$2"
  if ! "$seer" check "$data" >/dev/null 2>&1; then
    "$seer" gen --nodes "$3" --avg-degree "$4" --feature-dim "$5" \
      --train-fraction "$6" --out "$data" --force --quiet
  fi
}

# bench_machine: "N cores, M GiB" (this machine's CPUs and memory).
bench_machine() {
  echo "$(nproc) cores, $(grep MemTotal /proc/meminfo | awk '{print $2/1048576 " GiB"}')"
}

# bench_warn_build BUILD: a WARNING line unless BUILD is a Release build.
bench_warn_build() {
  grep -q "CMAKE_BUILD_TYPE:STRING=Release" "$1/CMakeCache.txt" 2>/dev/null || echo "WARNING: not a Release build"
}
