#!/usr/bin/env bash
# Accuracy on graphs `seer gen` did not make (bench/README.md, "Real graphs"): builds the
# #include graph and the shared-library call graph from files on this machine, converts
# them with `seer prep --undirected --dedup --drop-self-loops`, trains SAGE/GCN/GAT/MLP with
# `seer train` over several training seeds, and computes the numpy/scipy baselines
# (baselines.py) on the same splits. The split is fixed (the builder's files, seed 0); the
# seed varies the model's initialisation, dropout and the sampled batches. The baselines are
# deterministic (convex logistic regression from a zero start), so they run once.
#
#   bench/real_graphs/run_accuracy.sh [WORK_DIR]      (default /tmp/seer-real-graphs)
# Env: SEER (build/seer), SEEDS ("0 1 2"), MODELS ("gcn gcn-block mlp sage gat"; gcn-block =
#      --model gcn --gcn-norm block, the sampled-block degrees), GRAPHS ("include symbols"),
#      THREADS (2: --threads and OMP_NUM_THREADS), EXTRA (more seer train flags),
#      EPOCHS / BATCH / EVAL_EVERY (per-graph defaults: include 30 / 512 / 3, symbols 10 / 1024 / 2),
#      LR (0.01).
# Every model gets the same flags (--fanouts 10,10 --hidden 128 --heads 4 --dropout default).
# A run whose log already holds a result is skipped (delete the log to redo it), so an
# interrupted sweep resumes. Prints one line per run and appends it to WORK_DIR/accuracy.tsv
# (graph, model, seed, flags, best valid, test, seconds); summarize.py WORK_DIR makes the
# mean +- std tables. Needs python3-numpy and python3-scipy, binutils, bc.
set -euo pipefail
cd "$(dirname "$0")/../.."
SEER=${SEER:-build/seer}
WORK=${1:-/tmp/seer-real-graphs}
LR=${LR:-0.01}
SEEDS=${SEEDS:-0 1 2}
MODELS=${MODELS:-gcn gcn-block mlp sage gat}
GRAPHS=${GRAPHS:-include symbols}
THREADS=${THREADS:-2}
EXTRA=${EXTRA:-}
PY=/usr/bin/python3
export OMP_NUM_THREADS=$THREADS
mkdir -p "$WORK"
OUT_TSV="$WORK/accuracy.tsv"
[ -f "$OUT_TSV" ] || printf 'graph\tmodel\tseed\tflags\tbest_valid\ttest\tseconds\n' > "$OUT_TSV"

for g in $GRAPHS; do
  src="$WORK/$g"
  case $g in
    include) maker=make_include_graph.py; d_epochs=30; d_batch=512; d_eval=3 ;;
    symbols) maker=make_symbol_graph.py; d_epochs=10; d_batch=1024; d_eval=2 ;;
    *) echo "unknown graph $g" >&2; exit 2 ;;
  esac
  epochs=${EPOCHS:-$d_epochs}; batch=${BATCH:-$d_batch}; eval_every=${EVAL_EVERY:-$d_eval}
  [ -f "$src/edges.txt" ] || $PY bench/real_graphs/$maker "$src"
  if [ ! -f "$src/ds/dataset.json" ]; then
    n=$($PY -c "import numpy; print(len(numpy.load('$src/labels.npy')))")
    "$SEER" prep --edges "$src/edges.txt" --num-nodes "$n" --features "$src/features.npy" \
      --labels "$src/labels.npy" --train "$src/train.npy" --valid "$src/valid.npy" --test "$src/test.npy" \
      --undirected --dedup --drop-self-loops --out "$src/ds" --force --quiet
  fi
  [ -f "$src/baselines.json" ] || $PY bench/real_graphs/baselines.py "$src" --json "$src/baselines.json"
  for m in $MODELS; do
    case $m in
      gcn-block) model_flags="--model gcn --gcn-norm block" ;;
      *) model_flags="--model $m" ;;
    esac
    for seed in $SEEDS; do
      log="$WORK/$g.$m.$seed${EXTRA:+.$(echo "$EXTRA" | tr -c 'a-z0-9' _)}.log"
      if [ -f "$log" ] && grep -q "seer train: best valid acc" "$log"; then
        echo "skip $log (done)"; continue
      fi
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$SEER" train "$src/ds" $model_flags --fanouts 10,10 --hidden 128 --heads 4 --batch-size "$batch" \
        --lr "$LR" --epochs "$epochs" --eval-every "$eval_every" --seed "$seed" --threads "$THREADS" \
        --memory-budget 2G $EXTRA > "$log" 2>&1
      end=$(date +%s.%N)
      line=$(grep "seer train: best valid acc" "$log" | tail -1)
      valid=$(echo "$line" | sed -E 's/.*best valid acc ([0-9.]+).*/\1/')
      test=$(echo "$line" | sed -E 's/.*test acc ([0-9.]+).*/\1/')
      secs=$(echo "$end - $start" | bc)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%.0f\n' "$g" "$m" "$seed" \
        "epochs $epochs lr $LR batch $batch threads $THREADS${EXTRA:+ $EXTRA}" "$valid" "$test" "$secs" | tee -a "$OUT_TSV"
    done
  done
done
