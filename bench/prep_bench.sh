#!/usr/bin/env bash
# seer prep throughput on a generated, unsorted edge list, against a plain sequential
# read of the same file.
#   bench/prep_bench.sh [EDGES] [WORKDIR]      (defaults: 200000000 edges, ./prep_bench_work)
# Env: SEER (binary, default build/seer), AVG_DEGREE (20), BUDGET (default: a quarter of
# the edge-list size, as issue 2 asks), FORMAT (bin64 | txt, default bin64), THREADS
# (seer prep --threads; unset: every core; leave unset for a seer without --threads),
# DROP_CACHES (1: drop the page cache before each timing, needs root; 0: keep it, e.g. on
# a shared machine).
# A/B: run it with SEER=<base build>/seer and SEER=<new build>/seer in turns on the same
# WORKDIR (the edge list is generated once) and compare prep_edges_per_s.
# Prints the configuration, WARNING lines when the numbers are not to be trusted, the
# rates and the CPU seconds (user + sys: the signal to compare on a shared machine), and
# writes WORKDIR/prep_bench.json.
set -euo pipefail
EDGES=${1:-200000000}
WORK=${2:-./prep_bench_work}
SEER=${SEER:-build/seer}
AVG_DEGREE=${AVG_DEGREE:-20}
FORMAT=${FORMAT:-bin64}
NODES=$(( EDGES / AVG_DEGREE ))
mkdir -p "$WORK"
LIST="$WORK/edges.$FORMAT"

echo "config: edges=$EDGES nodes=$NODES format=$FORMAT seer=$SEER work=$WORK threads=${THREADS:-all}"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, $(uname -r)"
if [ ! -s "$LIST" ]; then
  "$SEER" gen --nodes "$NODES" --avg-degree "$AVG_DEGREE" --edge-list-out "$LIST" --quiet
fi
SIZE=$(stat -c %s "$LIST")
BUDGET=${BUDGET:-$(( SIZE / 4 ))}
echo "edge list: $LIST, $SIZE bytes; memory budget $BUDGET bytes"

drop_caches() {
  sync
  if [ "${DROP_CACHES:-1}" = 0 ]; then
    echo "NOTE: DROP_CACHES=0: the page cache is kept (warm reads for both runs)"
    CACHE_WARM=1
    return
  fi
  if ! (echo 3 > /proc/sys/vm/drop_caches) 2>/dev/null; then
    echo "WARNING: cannot drop the page cache (not root / container): reads may be served from RAM"
    CACHE_WARM=1
  fi
}
CACHE_WARM=0
if [ "$SIZE" -lt "$(awk '/MemAvailable/ {printf "%d", $2*1024}' /proc/meminfo)" ]; then
  echo "WARNING: the edge list fits in the page cache; both timings below may include cached reads"
fi
if ! "$SEER" --help >/dev/null 2>&1; then echo "no seer binary at $SEER"; exit 1; fi
if strings "$SEER" 2>/dev/null | grep -q "CMAKE_BUILD_TYPE=Debug"; then echo "WARNING: debug build"; fi

drop_caches
t0=$(date +%s.%N)
dd if="$LIST" of=/dev/null bs=4M status=none
t1=$(date +%s.%N)
READ_S=$(echo "$t1 - $t0" | bc -l)

drop_caches
rm -rf "$WORK/ds"
t0=$(date +%s.%N)
/usr/bin/time -f "%M %U %S" -o "$WORK/prep_rss_kb" "$SEER" prep --edges "$LIST" --num-nodes "$NODES" \
  --memory-budget "$BUDGET" --out "$WORK/ds" --force --quiet ${THREADS:+--threads "$THREADS"} | tee "$WORK/prep.log"
t1=$(date +%s.%N)
PREP_S=$(echo "$t1 - $t0" | bc -l)
read -r RSS_KB USER_S SYS_S < "$WORK/prep_rss_kb"
CPU_S=$(echo "$USER_S + $SYS_S" | bc -l)
PARTS=$(sed -n 's/.*, \([0-9]*\) partitions).*/\1/p' "$WORK/prep.log")

READ_MBS=$(echo "$SIZE / $READ_S / 1000000" | bc -l)
PREP_EPS=$(echo "$EDGES / $PREP_S" | bc -l)
READ_EPS=$(echo "$EDGES / $READ_S" | bc -l)
RATIO=$(echo "$READ_S / $PREP_S" | bc -l)
printf "sequential read: %.2f s (%.0f MB/s, %.1fM edges/s)\n" "$READ_S" "$READ_MBS" "$(echo "$READ_EPS/1000000" | bc -l)"
printf "seer prep:       %.2f s (%.2fM edges/s), peak RSS %.0f MiB, budget %.0f MiB, %s partitions\n" \
  "$PREP_S" "$(echo "$PREP_EPS/1000000" | bc -l)" "$(echo "$RSS_KB/1024" | bc -l)" \
  "$(echo "$BUDGET/1048576" | bc -l)" "$PARTS"
printf "prep CPU:        %.2f s (user %.2f + sys %.2f; %.2fM edges per CPU-second)\n" "$CPU_S" "$USER_S" "$SYS_S" \
  "$(echo "$EDGES / $CPU_S / 1000000" | bc -l)"
printf "prep / sequential-read throughput ratio: %.3f\n" "$RATIO"
f6() { printf "%.6f" "$1"; }
cat > "$WORK/prep_bench.json" <<JSON
{"edges": $EDGES, "nodes": $NODES, "format": "$FORMAT", "threads": "${THREADS:-all}", "edge_list_bytes": $SIZE,
 "memory_budget_bytes": $BUDGET, "partitions": ${PARTS:-0}, "read_seconds": $(f6 "$READ_S"),
 "prep_seconds": $(f6 "$PREP_S"), "prep_edges_per_s": $(f6 "$PREP_EPS"), "prep_peak_rss_kb": $RSS_KB,
 "prep_cpu_seconds": $(f6 "$CPU_S"), "prep_user_seconds": $(f6 "$USER_S"), "prep_sys_seconds": $(f6 "$SYS_S"),
 "ratio_prep_to_read": $(f6 "$RATIO"), "page_cache_dropped": $([ "$CACHE_WARM" = 0 ] && echo true || echo false)}
JSON
echo "wrote $WORK/prep_bench.json"
