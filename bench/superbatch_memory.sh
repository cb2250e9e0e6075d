#!/usr/bin/env bash
# Memory independent of S (issue 12): peak RSS of the inspector + Belady planner, of
# `seer train --no-train` and of a short training run at S = 50, 500 and 2000 batches per
# superbatch, on one graph with the same seeds; S = 2000 trains within --memory-budget 1G.
#
# Graph: seer gen --nodes 2000000 --avg-degree 10 --feature-dim 64, 12.8 % of the nodes as
# training seeds (255,643), batch 128, fan-outs 10,5 -> 1998 batches per epoch, so
# S = 2000 is the whole epoch (~9M feature accesses) and still affordable on 2 cores.
#
# Usage: bench/superbatch_memory.sh [BUILD_DIR] [DATA_ROOT] [RESULTS_DIR]
#   BUILD_DIR  holds seer, seer-train and bench/superbatch_memory_bench (default: build)
#   DATA_ROOT  where the dataset is generated once (default: /tmp/seer-sbmem)
# Prints one table line per run; every run's output is kept in RESULTS_DIR.
set -euo pipefail

BUILD=${1:-build}
ROOT=${2:-/tmp/seer-sbmem}
OUT=${3:-$ROOT/results}
DS=$ROOT/g2m
RT=$ROOT/runtime
SIZES=${SIZES:-"50 500 2000"}
COMMON="--fanouts 10,5 --batch-size 128 --threads 2 --seed 1"
mkdir -p "$ROOT" "$OUT" "$RT"

if [ ! -f "$DS/dataset.json" ]; then
  "$BUILD/seer" gen --nodes 2000000 --avg-degree 10 --feature-dim 64 --classes 10 --train-fraction 0.128 \
    --valid-fraction 0.002 --test-fraction 0.002 --seed 1 --out "$DS" --quiet
fi

peak_kib() { sed -n 's/^maxrss \([0-9]*\)$/\1/p' "$1"; }

# 1. The inspector + planner alone (streaming = now; in-ram = before; inspector = no planner),
#    interleaved so the other processes on the machine load every mode alike.
echo "== inspector + planner (superbatch_memory_bench, capacity 10 % of the nodes, working memory 8M)"
for S in $SIZES; do
  for mode in streaming in-ram inspector; do
    log=$OUT/bench_${mode}_S$S.txt
    /usr/bin/time -f "maxrss %M" -o "$log.time" \
      "$BUILD/bench/superbatch_memory_bench" "$DS" --mode "$mode" --superbatch "$S" $COMMON \
      --runtime-dir "$RT" --json "$OUT/bench_${mode}_S$S.json" > "$log" 2>&1
    echo "S=$S $mode: $(grep -o 'misses at.*' "$log" | sed 's/misses at capacity [0-9]* rows; //')"
  done
done

# 2. seer train --no-train (the whole data path) and 3. a short training run, within 1 GiB.
#    The cache budgets are pinned so every S gets the same caches (the automatic split
#    still sizes its inspector reservation from S); --superbatch is the only change.
PIN="--memory-budget 1G --fcache-budget 256M --ncache-budget 64M"
for S in $SIZES; do
  for kind in notrain train; do
    extra="--no-train"
    [ "$kind" = train ] && extra="--hidden 64 --eval-every 0"
    log=$OUT/${kind}_S$S.txt
    /usr/bin/time -f "maxrss %M" -o "$log.time" \
      "$BUILD/seer-train" train "$DS" $COMMON $PIN --superbatch "$S" --epochs 1 $extra \
      --runtime-dir "$RT/train" --metrics "$OUT/${kind}_S$S.jsonl" > "$log" 2>&1
    echo "S=$S $kind: peak RSS $(( $(peak_kib "$log.time") / 1024 )) MiB; $(grep -o 'feature cache hit [^,]*' "$log" | head -1); $(grep -o 'train loss [0-9.]*' "$log" | head -1)"
  done
done

# 4. Misses: training against seer stats --belady-scope superbatch (the in-RAM planner
#    over the trace `seer sample` streams), same S, same seeds, the training run's rows.
for S in $SIZES; do
  rows=$(sed -n 's/.*feature cache [0-9.]* [KMG]iB (\([0-9]*\) rows).*/\1/p' "$OUT/notrain_S$S.txt" | head -1)
  "$BUILD/seer" sample "$DS" $COMMON --superbatch "$S" --epochs 1 --out "$ROOT/trace_S$S" --force > /dev/null 2>&1
  "$BUILD/seer" stats "$DS" --trace "$ROOT/trace_S$S" --capacities "$rows" --policies belady \
    --belady-scope superbatch --json "$OUT/stats_S$S.json" > "$OUT/stats_S$S.txt" 2>&1
  echo "S=$S: seer stats belady superbatch misses at $rows rows: $(grep -i 'belady' "$OUT/stats_S$S.txt" | head -1)"
done
