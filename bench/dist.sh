#!/usr/bin/env bash
# Data-parallel training (c10d, Gloo on the CPU): epoch time and time-to-accuracy for
# W = 1, 2, 4 ranks on one machine (`seer train --nproc W`), the same global batch
# (BATCH seeds per step in all: BATCH/W per rank), interleaved repeats. Scaling
# efficiency = (epoch time at W=1 / epoch time at W) / W. Where the time goes per rank:
# each rank's metrics file (--metrics m{rank}.jsonl), the executor's breakdown summed
# over the epochs.
#
# Usage: bench/dist.sh [BUILD_DIR]   (default build/; needs a Release build with torch)
# Environment (defaults in brackets): NODES [200000] DIM [64] AVG_DEGREE [10]
#   TRAIN_FRACTION [0.1] FANOUTS [10,10] HIDDEN [64] BATCH [1000] EPOCHS [4]
#   WORLDS ["1 2 4"] REPEATS [2] BUDGET [512M] TARGET [0.9: of the W=1 run's best valid acc]
#   OUT [/work/benchdata/dist or BUILD_DIR/bench-dist]
# Writes OUT/results.jsonl (one line per run and rank: world, repeat, rank, epochs) and
# prints the tables. WARNING lines say when numbers are not to be trusted (more ranks
# than cores, load from other work, no GPU).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"
BUILD="${1:-build}"
SEER="$BUILD/seer"
NODES="${NODES:-200000}"; DIM="${DIM:-64}"; AVG_DEGREE="${AVG_DEGREE:-10}"; TRAIN_FRACTION="${TRAIN_FRACTION:-0.1}"
FANOUTS="${FANOUTS:-10,10}"; HIDDEN="${HIDDEN:-64}"; BATCH="${BATCH:-1000}"; EPOCHS="${EPOCHS:-4}"
WORLDS="${WORLDS:-1 2 4}"; REPEATS="${REPEATS:-2}"; BUDGET="${BUDGET:-512M}"; TARGET="${TARGET:-0.9}"
if [[ -d /work/benchdata ]]; then OUT="${OUT:-/work/benchdata/dist}"; else OUT="${OUT:-$BUILD/bench-dist}"; fi
DATA="$OUT/graph"
mkdir -p "$OUT"
bench_require_seer "$SEER"
bench_graph "$SEER" "$DATA" "$NODES" "$AVG_DEGREE" "$DIM" "$TRAIN_FRACTION"
CORES=$(nproc)
echo "config: nodes=$NODES dim=$DIM avg_degree=$AVG_DEGREE train_fraction=$TRAIN_FRACTION fanouts=$FANOUTS" \
     "hidden=$HIDDEN global_batch=$BATCH epochs=$EPOCHS worlds=($WORLDS) repeats=$REPEATS budget/rank=$BUDGET"
echo "machine: $(bench_machine)"
bench_warn_build "$BUILD"
for w in $WORLDS; do
  if (( w > CORES )); then echo "WARNING: W=$w ranks on $CORES cores oversubscribe the CPU (ranks time-share cores)"; fi
done
LOAD=$(cut -d' ' -f1 /proc/loadavg); echo "load average at start: $LOAD"
awk -v l="$LOAD" -v n="$CORES" 'BEGIN{ if (l > n / 2) print "WARNING: load average " l ": other work shares the machine" }'
command -v nvidia-smi >/dev/null 2>&1 || echo "WARNING: no GPU: Gloo on the CPU (NCCL is for GPU builds)"

: > "$OUT/results.jsonl"
for rep in $(seq 1 "$REPEATS"); do
  for w in $WORLDS; do  # interleaved: W=1,2,4,1,2,4,...
    run="$OUT/w${w}_r${rep}"
    rm -rf "$run"; mkdir -p "$run"
    per_rank=$(( BATCH / w ))
    start=$(date +%s.%N)
    "$SEER" train "$DATA" --nproc "$w" --batch-size "$per_rank" --epochs "$EPOCHS" --fanouts "$FANOUTS" \
      --hidden "$HIDDEN" --cpu --memory-budget "$BUDGET" --threads 1 --superbatch auto --quiet \
      --metrics "$run/m{rank}.jsonl" > "$run/stdout.txt" 2> "$run/stderr.txt" || { cat "$run/stderr.txt"; exit 1; }
    end=$(date +%s.%N)
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b - a}')
    echo "W=$w repeat $rep: ${wall} s wall, $(grep 'test accuracy' "$run/stdout.txt")"
    /usr/bin/python3 - "$run" "$w" "$rep" "$wall" >> "$OUT/results.jsonl" <<'EOF'
import json, sys, glob, os
run, w, rep, wall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
for path in sorted(glob.glob(os.path.join(run, "m*.jsonl"))):
    name = os.path.basename(path)[1:-6]
    rank = int(name) if name.isdigit() else 0  # W=1: no process group, "{rank}" is not replaced
    lines = [json.loads(l) for l in open(path)]
    print(json.dumps({"world": w, "repeat": rep, "rank": rank, "wall": wall,
                      "epochs": [l for l in lines if l.get("type") == "epoch"],
                      "final": [l for l in lines if l.get("type") == "final"]}))
EOF
  done
done

/usr/bin/python3 - "$OUT/results.jsonl" "$TARGET" "$BATCH" <<'EOF'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
target_frac = float(sys.argv[2])
batch = int(sys.argv[3])
worlds = sorted({r["world"] for r in rows})
def med(xs): return statistics.median(xs) if xs else float("nan")
# Epoch time: rank 0's epochs after the first (the first includes the cache fill), median over repeats.
ep = {}; tta = {}; acc = {}
base_best = med([max(e.get("valid_accuracy", 0) for e in r["epochs"]) for r in rows if r["world"] == 1 and r["rank"] == 0])
target = target_frac * base_best
for w in worlds:
    r0 = [r for r in rows if r["world"] == w and r["rank"] == 0]
    ep[w] = med([med([e["seconds"]["epoch"] for e in r["epochs"][1:]] or [r["epochs"][0]["seconds"]["epoch"]]) for r in r0])
    times = []
    for r in r0:
        t = 0
        hit = float("nan")
        for e in r["epochs"]:
            t += e["seconds"]["epoch"]
            if e.get("valid_accuracy", -1) >= target:
                hit = t; break
        times.append(hit)
    tta[w] = med(times)
    acc[w] = med([r["final"][0]["test_accuracy"] for r in r0 if r["final"]])
print(f"\nepoch time (rank 0, epochs 2.., median of repeats); target valid acc {target:.4f} = {target_frac} x W=1 best {base_best:.4f}")
print("| W | per-rank batch | epoch s | speed-up | efficiency | time to target s | test acc |")
print("|---|---|---|---|---|---|---|")
for w in worlds:
    s = ep[1] / ep[w] if 1 in ep else float("nan")
    print(f"| {w} | {batch // w} | {ep[w]:.2f} | {s:.2f}x | {s / w:.2f} | {tta[w]:.2f} | {acc[w]:.4f} |")
print("\nwhere the time goes per rank (seconds per epoch, epochs 2.., median of repeats)")
keys = ["epoch", "inspect", "plan", "gather", "io_wait", "compute", "stall", "eval"]
print("| W | rank | " + " | ".join(keys) + " |")
print("|---|---|" + "---|" * len(keys))
for w in worlds:
    for rank in sorted({r["rank"] for r in rows if r["world"] == w}):
        rr = [r for r in rows if r["world"] == w and r["rank"] == rank]
        vals = [med([med([e["seconds"][k] for e in r["epochs"][1:]] or [0]) for r in rr]) for k in keys]
        print(f"| {w} | {rank} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
EOF
