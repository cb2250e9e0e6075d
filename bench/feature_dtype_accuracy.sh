#!/usr/bin/env bash
# Accuracy impact of storing features as float16 / bfloat16 / int8 instead of float32: the same
# generated graph (same seed) written with each --feature-dtype, trained with the same
# seed and flags, test accuracy of the best-validation model compared.
#   bench/feature_dtype_accuracy.sh [WORKDIR]     (default ./dtype_bench_work)
# Env: SEER (default build/seer), NODES (50000), FEATURE_DIM (64), EPOCHS (5), MODEL
# (sage), SEEDS ("1 2 3": training seeds), SIGNAL (gen --feature-signal, default: gen's),
# TRAIN_FLAGS (extra seer train flags, e.g. "--feature-cache none"), DTYPES ("float32 bfloat16 float16 int8").
# Prints one line per dtype and seed, and the mean per dtype; writes WORKDIR/results.txt.
set -euo pipefail
WORK=${1:-./dtype_bench_work}
SEER=${SEER:-build/seer}
NODES=${NODES:-50000}
FEATURE_DIM=${FEATURE_DIM:-64}
EPOCHS=${EPOCHS:-5}
MODEL=${MODEL:-sage}
SEEDS=${SEEDS:-1 2 3}
mkdir -p "$WORK"
: > "$WORK/results.txt"
echo "config: nodes=$NODES feature_dim=$FEATURE_DIM epochs=$EPOCHS model=$MODEL seeds=$SEEDS seer=$SEER"
for dtype in ${DTYPES:-float32 bfloat16 float16 int8}; do
  if [ ! -s "$WORK/$dtype/dataset.json" ]; then
    "$SEER" gen --nodes "$NODES" --feature-dim "$FEATURE_DIM" --classes 8 --seed 7 ${SIGNAL:+--feature-signal "$SIGNAL"} \
      --feature-dtype "$dtype" --out "$WORK/$dtype" --force --quiet
  fi
  for seed in $SEEDS; do
    "$SEER" train "$WORK/$dtype" --model "$MODEL" --epochs "$EPOCHS" --seed "$seed" --cpu --buffered --quiet \
      --metrics "$WORK/$dtype.$seed.jsonl" ${TRAIN_FLAGS:-} > /dev/null 2>&1 || { echo "train failed for $dtype seed $seed"; exit 1; }
    acc=$(grep -o '"test_accuracy": *[0-9.]*' "$WORK/$dtype.$seed.jsonl" | tail -1 | grep -o '[0-9.]*$')
    echo "$dtype seed $seed test_accuracy $acc" | tee -a "$WORK/results.txt"
  done
done
awk '{sum[$1] += $5; n[$1]++} END {for (d in sum) printf "%s mean test accuracy %.4f over %d seeds\n", d, sum[d]/n[d], n[d]}' \
  "$WORK/results.txt" | sort
