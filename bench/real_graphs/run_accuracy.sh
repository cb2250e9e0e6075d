#!/usr/bin/env bash
# Accuracy on graphs `seer gen` did not make (bench/README.md, "Real graphs"): builds the
# #include graph and the shared-library call graph from files on this machine, converts
# them with `seer prep --undirected --dedup --drop-self-loops`, trains SAGE/GCN/GAT/MLP with
# `seer train`, and computes the numpy/scipy baselines (baselines.py) on the same splits.
#
#   bench/real_graphs/run_accuracy.sh [WORK_DIR]      (default /tmp/seer-real-graphs)
# Env: SEER (build/seer), EPOCHS (30), LR (0.01), BATCH (512), EVAL_EVERY (3), SEEDS ("0"),
#      MODELS ("sage gcn gat mlp"),
#      GRAPHS ("include symbols"), EXTRA (more seer train flags, e.g. "--gcn-norm block").
# Prints one line per run and writes WORK_DIR/accuracy.tsv (graph, model, seed, flags,
# best valid, test, seconds). Needs python3-numpy and python3-scipy, binutils.
set -euo pipefail
cd "$(dirname "$0")/../.."
SEER=${SEER:-build/seer}
WORK=${1:-/tmp/seer-real-graphs}
EPOCHS=${EPOCHS:-30}
LR=${LR:-0.01}
BATCH=${BATCH:-512}
EVAL_EVERY=${EVAL_EVERY:-3}
SEEDS=${SEEDS:-0}
MODELS=${MODELS:-sage gcn gat mlp}
GRAPHS=${GRAPHS:-include symbols}
EXTRA=${EXTRA:-}
PY=/usr/bin/python3
mkdir -p "$WORK"
OUT_TSV="$WORK/accuracy.tsv"
[ -f "$OUT_TSV" ] || printf 'graph\tmodel\tseed\tflags\tbest_valid\ttest\tseconds\n' > "$OUT_TSV"

for g in $GRAPHS; do
  src="$WORK/$g"
  case $g in
    include) maker=make_include_graph.py ;;
    symbols) maker=make_symbol_graph.py ;;
    *) echo "unknown graph $g" >&2; exit 2 ;;
  esac
  [ -f "$src/edges.txt" ] || $PY bench/real_graphs/$maker "$src"
  if [ ! -f "$src/ds/dataset.json" ]; then
    n=$($PY -c "import numpy; print(len(numpy.load('$src/labels.npy')))")
    "$SEER" prep --edges "$src/edges.txt" --num-nodes "$n" --features "$src/features.npy" \
      --labels "$src/labels.npy" --train "$src/train.npy" --valid "$src/valid.npy" --test "$src/test.npy" \
      --undirected --dedup --drop-self-loops --out "$src/ds" --force --quiet
  fi
  [ -f "$src/baselines.json" ] || $PY bench/real_graphs/baselines.py "$src" --json "$src/baselines.json"
  for seed in $SEEDS; do
    for m in $MODELS; do
      log="$WORK/$g.$m.$seed${EXTRA:+.$(echo "$EXTRA" | tr -c 'a-z0-9' _)}.log"
      start=$(date +%s.%N)
      "$SEER" train "$src/ds" --model "$m" --fanouts 10,10 --hidden 128 --heads 4 --batch-size "$BATCH" \
        --lr "$LR" --epochs "$EPOCHS" --eval-every "$EVAL_EVERY" --seed "$seed" --memory-budget 2G $EXTRA > "$log" 2>&1
      end=$(date +%s.%N)
      line=$(grep "seer train: best valid acc" "$log" | tail -1)
      valid=$(echo "$line" | sed -E 's/.*best valid acc ([0-9.]+).*/\1/')
      test=$(echo "$line" | sed -E 's/.*test acc ([0-9.]+).*/\1/')
      secs=$(echo "$end - $start" | bc)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%.0f\n' "$g" "$m" "$seed" "epochs $EPOCHS lr $LR batch $BATCH ${EXTRA}" "$valid" "$test" "$secs" | tee -a "$OUT_TSV"
    done
  done
done
