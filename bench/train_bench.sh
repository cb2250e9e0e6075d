#!/usr/bin/env bash
# Training benchmark (issue 5): `seer train --no-train` data-path throughput and full
# training epoch time on a generated graph larger than the memory budget, with the
# executor's breakdown, for both pipeline modes (default: sampling never overlaps
# executing; --overlap: sampling k+1 overlaps executing k).
#
# Usage: bench/train_bench.sh [BUILD_DIR]   (default build/; needs a Release `seer`)
# Environment knobs (defaults in brackets): NODES [1000000] DIM [128] AVG_DEGREE [10]
#   TRAIN_FRACTION [0.02] BUDGET [224M] FANOUTS [10,10] BATCH [1000] SUPERBATCH [5]
#   HIDDEN [256] EPOCHS [1] OUT [BUILD_DIR/bench-train]
# Writes OUT/results.jsonl (one line per run, the `final` + `epoch` metrics) and prints
# a table (epoch time without the end-of-run validation/test pass). Prints WARNING lines
# when the numbers are not to be trusted.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"
BUILD="${1:-build}"
SEER="$BUILD/seer"
NODES="${NODES:-1000000}"; DIM="${DIM:-128}"; AVG_DEGREE="${AVG_DEGREE:-10}"
TRAIN_FRACTION="${TRAIN_FRACTION:-0.02}"; BUDGET="${BUDGET:-224M}"; FANOUTS="${FANOUTS:-10,10}"
BATCH="${BATCH:-1000}"; SUPERBATCH="${SUPERBATCH:-5}"; HIDDEN="${HIDDEN:-256}"; EPOCHS="${EPOCHS:-1}"
OUT="${OUT:-$BUILD/bench-train}"
DATA="$OUT/graph"
mkdir -p "$OUT"
bench_require_seer "$SEER"
bench_graph "$SEER" "$DATA" "$NODES" "$AVG_DEGREE" "$DIM" "$TRAIN_FRACTION"
FEATURE_BYTES=$(stat -c %s "$DATA/features.bin")
echo "config: nodes=$NODES dim=$DIM avg_degree=$AVG_DEGREE train_fraction=$TRAIN_FRACTION" \
     "budget=$BUDGET fanouts=$FANOUTS batch=$BATCH superbatch=$SUPERBATCH hidden=$HIDDEN epochs=$EPOCHS"
echo "features.bin: $FEATURE_BYTES bytes; machine: $(bench_machine)"
bench_warn_build "$BUILD"
"$SEER" train --help >/dev/null
if [[ "$(nproc)" -le 4 ]]; then echo "WARNING: $(nproc) cores: sampling, gather and compute compete for the CPU"; fi
LOAD=$(cut -d' ' -f1 /proc/loadavg); echo "load average at start: $LOAD"
awk -v l="$LOAD" -v n="$(nproc)" 'BEGIN{ if (l > n) print "WARNING: load average above the core count: other work shares the machine" }'
command -v nvidia-smi >/dev/null 2>&1 || echo "WARNING: no GPU: training runs on the CPU"

: > "$OUT/results.jsonl"
run() {  # name, extra flags...
  local name="$1"; shift
  local metrics="$OUT/$name.jsonl"
  local start end
  start=$(date +%s.%N)
  "$SEER" train "$DATA" --memory-budget "$BUDGET" --fanouts "$FANOUTS" --batch-size "$BATCH" \
    --superbatch "$SUPERBATCH" --hidden "$HIDDEN" --epochs "$EPOCHS" --eval-every 0 --seed 1 \
    --metrics "$metrics" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  end=$(date +%s.%N)
  grep -m1 "memory budget" "$OUT/$name.err" | sed "s/^/[$name] /"
  python3 - "$name" "$metrics" "$start" "$end" >> "$OUT/results.jsonl" <<'PY'
import json, sys
name, path, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
lines = [json.loads(l) for l in open(path)]
epochs = [l for l in lines if l["type"] == "epoch"]
final = [l for l in lines if l["type"] == "final"][0]
e = epochs[-1]
print(json.dumps({"run": name, "wall_s": round(end - start, 2), "epoch_s": e["seconds"]["epoch"], "seeds": e["seeds"],
                  "samples_per_s": e["samples_per_second"], "breakdown_s": e["seconds"],
                  "fcache_hit_ratio": e["fcache_hit_ratio"], "ncache_hit_ratio": e["ncache_hit_ratio"],
                  "feature_ssd_bytes": e["feature_ssd_bytes"], "feature_ssd_reads": e["feature_ssd_reads"],
                  "topology_ssd_bytes": e["topology_ssd_bytes"], "train_loss": e["train_loss"],
                  "peak_rss_bytes": final["peak_rss_bytes"]}))
PY
}
run no-train --no-train --no-overlap
run no-train-overlap --no-train --overlap
run train --no-overlap
run train-overlap --overlap

python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| run | epoch s (excl. eval) | samples/s | inspect | plan | gather | I/O wait | cache upd | compute | stall | fcache hit | ncache hit | feature SSD MiB | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    b = r["breakdown_s"]
    train_s = r['epoch_s'] - b['eval']
    print(f"| {r['run']} | {train_s:.1f} | {r['seeds'] / train_s:.0f} | {b['inspect']:.1f} | {b['plan']:.1f} | "
          f"{b['gather']:.1f} | {b['io_wait']:.1f} | {b['cache_update']:.2f} | {b['compute']:.1f} | {b['stall']:.1f} | "
          f"{100*r['fcache_hit_ratio']:.1f}% | {100*r['ncache_hit_ratio']:.1f}% | {r['feature_ssd_bytes']/2**20:.0f} | "
          f"{r['peak_rss_bytes']/2**20:.0f} |")
PY
