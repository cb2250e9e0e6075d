#!/usr/bin/env bash
# "Read less" (issue 28): feature reads, bytes and row misses per epoch, and epoch times,
# for today's Seer and with each of: a locality order (seer reorder --order bfs|degree),
# block-granular reads (--read-block 4K, when the binary has it), int8 features, and all
# of them — same memory budget, same feature-cache bytes, same seeds, on
#   gen:      a generated R-MAT graph (random ids: little locality to find),
#   include:  the #include graph of this machine (bench/real_graphs),
#   symbols:  the shared-library symbol graph (bench/real_graphs).
#   bench/read_less.sh [WORK_DIR]      (default /tmp/seer-read-less)
# Env: SEER (build/seer), GRAPHS ("gen include symbols"), EPOCHS (3), FCACHE_FRACTION
# (0.1: the feature cache holds this fraction of the float32 feature bytes, for every
# variant), ORDERS ("bfs degree"), GEN_NODES (200000), TRAIN ("1": train the model; 0 =
# --no-train, the data path only). The counts (reads, misses) are the stable figures; the
# times are single runs on whatever machine this is. Prints one table row per graph x
# variant (epoch_s: the last epoch without its evaluation) and writes WORK_DIR/read_less.tsv.
# BATCH (1000): seeds per batch; BUDGET (1G): every run's --memory-budget (the whole process); GEN_TRAIN_FRACTION (0.1) and
# GEN_EVAL_FRACTION (0.05, valid and test each): the generated graph's splits (a graph many
# times the budget needs fewer seeds per epoch on a small machine).
set -euo pipefail
cd "$(dirname "$0")/.."
SEER=${SEER:-build/seer}
WORK=${1:-/tmp/seer-read-less}
GRAPHS=${GRAPHS:-gen include symbols}
EPOCHS=${EPOCHS:-3}
FRACTION=${FCACHE_FRACTION:-0.1}
ORDERS=${ORDERS:-bfs degree}
GEN_NODES=${GEN_NODES:-200000}
TRAIN=${TRAIN:-1}
BUDGET=${BUDGET:-1G}
BATCH=${BATCH:-1000}
GEN_TRAIN_FRACTION=${GEN_TRAIN_FRACTION:-0.1}
GEN_EVAL_FRACTION=${GEN_EVAL_FRACTION:-0.05}
PY=/usr/bin/python3
mkdir -p "$WORK"
OUT="$WORK/read_less.tsv"
printf 'graph\tvariant\tfeature_reads\tfeature_MiB\trow_misses\tepoch_s\tio_wait_s\ttest_acc\n' > "$OUT"
block_flag=""
help_text=$("$SEER" train --help 2>&1 || true)  # (grep -q in a pipe would SIGPIPE seer under pipefail)
if grep -q -- "--read-block" <<< "$help_text"; then block_flag="--read-block 4K"; fi
[ -n "$block_flag" ] || echo "note: this seer has no --read-block: the block variants are skipped"

# The dataset of graph $1 with dtype $2 (float32|int8), made once.
dataset() {
  local g=$1 dtype=$2 dir="$WORK/$1/ds-$2"
  if [ ! -f "$dir/dataset.json" ]; then
    case $g in
      gen)
        "$SEER" gen --nodes "$GEN_NODES" --avg-degree 15 --feature-dim 128 --classes 8 --seed 3 \
          --train-fraction "$GEN_TRAIN_FRACTION" --valid-fraction "$GEN_EVAL_FRACTION" \
          --test-fraction "$GEN_EVAL_FRACTION" --feature-dtype "$dtype" --out "$dir" --force --quiet >/dev/null ;;
      include|symbols)
        local src="$WORK/$g/src" maker
        [ "$g" = include ] && maker=make_include_graph.py || maker=make_symbol_graph.py
        [ -f "$src/edges.txt" ] || $PY bench/real_graphs/$maker "$src" >/dev/null
        local n
        n=$($PY -c "import numpy; print(len(numpy.load('$src/labels.npy')))")
        "$SEER" prep --edges "$src/edges.txt" --num-nodes "$n" --features "$src/features.npy" \
          --labels "$src/labels.npy" --train "$src/train.npy" --valid "$src/valid.npy" --test "$src/test.npy" \
          --undirected --dedup --drop-self-loops --feature-dtype "$dtype" --out "$dir" --force --quiet >/dev/null ;;
    esac
  fi
  echo "$dir"
}

# reordered copy of dataset $1 by order $2
reordered() {
  local dir=$1 order=$2
  [ -f "$dir-$order/dataset.json" ] || "$SEER" reorder "$dir" --order "$order" --out "$dir-$order" --force --quiet >/dev/null
  echo "$dir-$order"
}

run() {  # graph variant dataset fcache_bytes extra-flags...
  local g=$1 v=$2 ds=$3 fc=$4
  shift 4
  local m="$WORK/$g.$v.jsonl"
  local train_flag=""
  [ "$TRAIN" = 1 ] || train_flag="--no-train"
  # A run whose metrics already end with the final record is not repeated (delete
  # WORK_DIR/GRAPH.VARIANT.jsonl to redo it), so an interrupted sweep resumes.
  if ! grep -q '"type": *"final"' "$m" 2>/dev/null; then
  # shellcheck disable=SC2086
  "$SEER" train "$ds" --model sage --epochs "$EPOCHS" --hidden 64 --fanouts 10,10 --batch-size "$BATCH" \
    --memory-budget "$BUDGET" --fcache-budget "$fc" --seed 1 $train_flag "$@" --metrics "$m" \
    > "$WORK/$g.$v.log" 2>&1 || { echo "$g $v: seer train failed (see $WORK/$g.$v.log)"; return 0; }
  fi
  $PY - "$m" "$g" "$v" >> "$OUT" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
epochs = [r for r in rows if r.get("type") == "epoch"]
final = [r for r in rows if r.get("type") == "final"]
e = epochs[-1]  # the steady epoch (the cache is warm)
misses = e["fcache_accesses"] - e["fcache_hits"]
acc = final[-1]["test_accuracy"] if final else -1
print(f'{sys.argv[2]}\t{sys.argv[3]}\t{e["feature_ssd_reads"]}\t{e["feature_ssd_bytes"] / 2**20:.1f}\t{misses}\t'
      f'{e["seconds"]["epoch"] - e["seconds"].get("eval", 0):.2f}\t{e["seconds"]["io_wait"]:.2f}\t{acc:.4f}')
PYEOF
  tail -1 "$OUT"
}

for g in $GRAPHS; do
  f32=$(dataset "$g" float32)
  i8=$(dataset "$g" int8)
  # The same cache bytes for every variant: FRACTION of the float32 feature bytes.
  fc=$($PY -c "import json; m = json.load(open('$f32/dataset.json')); print(int(m['num_nodes'] * m['feature_dim'] * 4 * $FRACTION))")
  run "$g" base "$f32" "$fc"
  for o in $ORDERS; do run "$g" "order-$o" "$(reordered "$f32" "$o")" "$fc"; done
  if [ -n "$block_flag" ]; then
    # shellcheck disable=SC2086
    run "$g" block "$f32" "$fc" $block_flag
  fi
  run "$g" int8 "$i8" "$fc"
  for o in $ORDERS; do
    if [ -n "$block_flag" ]; then
      # shellcheck disable=SC2086
      run "$g" "order-$o+block" "$(reordered "$f32" "$o")" "$fc" $block_flag
      # shellcheck disable=SC2086
      run "$g" "all-$o" "$(reordered "$i8" "$o")" "$fc" $block_flag
    else
      run "$g" "order-$o+int8" "$(reordered "$i8" "$o")" "$fc"
    fi
  done
done
echo "table: $OUT"
column -t -s $'\t' "$OUT"
