#!/usr/bin/env bash
# A billion nodes on one box (the rehearsal behind the headline): generates a
# NODES-node graph (default 1,000,000,000, average in-degree 2, 8 float16 features,
# 10 classes) with `seer gen --direct-csc` (no edge spill: the dataset is ~36 GB at 1e9),
# then runs, each under /usr/bin/time -v:
#   check    seer check (indptr, indices, labels, splits streamed)
#   ncache   seer ncache build --score out-in --budget NCACHE
#   sample   seer sample of the train split (a few superbatches, --ncache)
#   notrain  seer-train train --no-train (the whole data path, no model)
#   train    seer-train train: GraphSAGE, hidden 16, STOP_AFTER superbatches of S batches
# under --memory-budget BUDGET (<= 12G) with --ncache-budget NCACHE, so training uses the
# prebuilt DIR/ncache (an in-memory build would rank by expected lookups: 4 doubles per
# node). The train split is TRAIN_SEEDS nodes (a few
# hundred batches of 1000), so one epoch is a few superbatches.
#
# Per stage it records wall time, peak RSS, the bytes the process read and wrote
# (rchar/wchar of /proc/PID/io, sampled every 2 s, so the last 2 s may be missing; page
# cache hits included) and what of it reached the disk (time -v's file-system
# inputs/outputs, 512-byte blocks), the rates, and greps the feature-cache hit ratio and
# the split line (resident bytes per node) from the logs.
#
# Usage: bench/billion.sh [BUILD_DIR] [ROOT]
#   BUILD_DIR holds seer and seer-train (default: build)
#   ROOT      data and logs (default: /work/benchdata/billion); the dataset is kept and
#             reused by later runs (delete ROOT/ds to regenerate).
# Environment: NODES (1000000000), DEG (2), BUDGET (12G), NCACHE (1G), FCACHE (256M: the
#   feature cache's share, pinned because the planner and policy hold ~100 B per cache row
#   that the split does not count yet; auto would give the cache every byte left), S (50),
#   STOP_AFTER (4), TRAIN_SEEDS (200000), STAGES ("gen check ncache sample notrain train"),
#   THREADS (2).
# Output: ROOT/logs/<stage>.log, <stage>.time (time -v), <stage>.io (last /proc/PID/io),
# and ROOT/logs/summary.tsv, one line per stage.
set -uo pipefail

BUILD=${1:-build}
ROOT=${2:-/work/benchdata/billion}
NODES=${NODES:-1000000000}
DEG=${DEG:-2}
BUDGET=${BUDGET:-12G}
NCACHE=${NCACHE:-1G}
FCACHE=${FCACHE:-256M}
S=${S:-50}
STOP_AFTER=${STOP_AFTER:-4}
TRAIN_SEEDS=${TRAIN_SEEDS:-200000}
THREADS=${THREADS:-2}
STAGES=${STAGES:-"gen check ncache sample notrain train"}
DS=$ROOT/ds
LOGS=$ROOT/logs
mkdir -p "$ROOT" "$LOGS"
SEER=$(realpath "$BUILD/seer")
SEER_TRAIN=$(realpath "$BUILD/seer-train")

# Fractions for TRAIN_SEEDS training seeds and 1/10 of that each for valid and test.
TRAIN_FRACTION=$(python3 -c "print(repr($TRAIN_SEEDS / $NODES))")
EVAL_FRACTION=$(python3 -c "print(repr($TRAIN_SEEDS / 10 / $NODES))")
COMMON="--batch-size 1000 --fanouts 10,5 --threads $THREADS --seed 1"

# run STAGE CMD...: runs CMD under time -v, sampling /proc/PID/io every 5 s.
run() {
  local stage=$1
  shift
  local log=$LOGS/$stage.log tm=$LOGS/$stage.time io=$LOGS/$stage.io
  echo "== $stage: $*" | tee -a "$LOGS/commands.txt"
  /usr/bin/time -v -o "$tm" "$@" > "$log" 2>&1 &
  local tpid=$!
  local pid=""
  for _ in $(seq 50); do
    pid=$(pgrep -P "$tpid" | head -1)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  while kill -0 "$tpid" 2> /dev/null; do
    [ -n "$pid" ] && cat "/proc/$pid/io" > "$io.tmp" 2> /dev/null && mv "$io.tmp" "$io"
    sleep 2
  done
  wait "$tpid"
  local rc=$?
  local wall rss rbytes wbytes
  wall=$(python3 - "$tm" << 'EOF'
import sys
for line in open(sys.argv[1]):
    if "Elapsed (wall clock)" in line:
        t = line.rsplit(" ", 1)[1].strip().split(":")
        s = 0.0
        for part in t:
            s = s * 60 + float(part)
        print(f"{s:.1f}")
EOF
)
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tm")
  rbytes=$(sed -n 's/^rchar: //p' "$io" 2> /dev/null || echo 0)
  wbytes=$(sed -n 's/^wchar: //p' "$io" 2> /dev/null || echo 0)
  local din dout
  din=$(sed -n 's/.*File system inputs: //p' "$tm")
  dout=$(sed -n 's/.*File system outputs: //p' "$tm")
  local hit split
  hit=$(grep -o 'feature cache hit [0-9.]*%' "$log" | tail -1)
  split=$(grep -m1 -o 'B/node[^,;]*\|[0-9.]* B per node' "$log" | head -1)
  python3 - "$stage" "$rc" "${wall:-0}" "${rss:-0}" "${rbytes:-0}" "${wbytes:-0}" "${din:-0}" "${dout:-0}" \
    "$hit" "$split" >> "$LOGS/summary.tsv" << 'EOF'
import sys
stage, rc, wall, rss, rb, wb, din, dout, hit, split = sys.argv[1:11]
wall = float(wall); rss = int(rss); rb = int(rb or 0); wb = int(wb or 0)
din = int(din or 0) * 512; dout = int(dout or 0) * 512
rate = lambda b: f"{b / wall / 1e6:.0f} MB/s" if wall > 0 else "-"
print("\t".join([stage, f"rc={rc}", f"{wall:.0f} s", f"peak RSS {rss / 2**20:.2f} GiB",
                 f"read {rb / 1e9:.2f} GB ({rate(rb)}; disk {din / 1e9:.2f} GB)",
                 f"written {wb / 1e9:.2f} GB ({rate(wb)}; disk {dout / 1e9:.2f} GB)",
                 hit or "-", split or "-"]))
EOF
  tail -1 "$LOGS/summary.tsv"
  return $rc
}

for stage in $STAGES; do
  case $stage in
    gen)
      if [ -f "$DS/dataset.json" ]; then
        echo "== gen: $DS exists, reused"
        continue
      fi
      run gen "$SEER" gen --direct-csc --nodes "$NODES" --avg-degree "$DEG" --feature-dim 8 \
        --feature-dtype float16 --classes 10 --train-fraction "$TRAIN_FRACTION" \
        --valid-fraction "$EVAL_FRACTION" --test-fraction "$EVAL_FRACTION" --seed 1 \
        --memory-budget 1G --out "$DS" --force || exit 1
      du -sh "$DS" | tee -a "$LOGS/commands.txt"
      ;;
    check) run check "$SEER" check "$DS" ;;
    ncache) run ncache "$SEER" ncache build "$DS" --score out-in --budget "$NCACHE" --force ;;
    sample)
      run sample "$SEER" sample "$DS" --out "$ROOT/traces" $COMMON --superbatch "$S" --epochs 1 --ncache --force
      rm -rf "$ROOT/traces"
      ;;
    notrain)
      run notrain "$SEER_TRAIN" train "$DS" $COMMON --memory-budget "$BUDGET" --ncache-budget "$NCACHE" --fcache-budget "$FCACHE" --superbatch "$S" --epochs 1 \
        --no-train --runtime-dir "$ROOT/runtime" --metrics "$LOGS/notrain.jsonl"
      ;;
    train)
      run train "$SEER_TRAIN" train "$DS" $COMMON --memory-budget "$BUDGET" --ncache-budget "$NCACHE" --fcache-budget "$FCACHE" --superbatch "$S" --epochs 1 \
        --model sage --hidden 16 --eval-every 0 --stop-after "$STOP_AFTER" --runtime-dir "$ROOT/runtime" \
        --metrics "$LOGS/train.jsonl"
      ;;
    *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
done
echo "summary: $LOGS/summary.tsv"
