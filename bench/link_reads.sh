#!/usr/bin/env bash
# Link prediction out of core (issue 32): feature reads per epoch of `seer train --task
# link` under Belady, static-degree and no feature cache, against the same policies on
# node classification, on a generated graph several times the memory budget; then one
# real training epoch of --task link within the budget (peak RSS, MRR, time).
#   bench/link_reads.sh [WORK_DIR]          (default /tmp/seer-link-reads)
# Env: SEER (build/seer), NODES (1000000), DIM (512: float32 rows of 2 KiB; 2 GiB of
# features at the defaults), DEGREE (1), BUDGET (400M, --memory-budget of every run: the
# whole process), BATCH (1000: edges per link batch, seeds per node batch), FANOUTS (3,3),
# NEGATIVES (1), POLICIES ("belady static-degree none"), TRAIN (1: the training epoch).
# The counts (reads, misses) are the stable figures; times are single runs. Prints a
# table and writes WORK_DIR/link_reads.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."
SEER=${SEER:-build/seer}
WORK=${1:-/tmp/seer-link-reads}
NODES=${NODES:-1000000}
DIM=${DIM:-512}
DEGREE=${DEGREE:-1}
BUDGET=${BUDGET:-400M}
BATCH=${BATCH:-1000}
FANOUTS=${FANOUTS:-3,3}
NEGATIVES=${NEGATIVES:-1}
POLICIES=${POLICIES:-belady static-degree none}
TRAIN=${TRAIN:-1}
PY=/usr/bin/python3
mkdir -p "$WORK"
DS="$WORK/lp"
if [ ! -f "$DS/dataset.json" ]; then
  "$SEER" gen --nodes "$NODES" --avg-degree "$DEGREE" --feature-dim "$DIM" --classes 8 --seed 5 \
    --out "$WORK/raw" --force --quiet >/dev/null
  "$SEER" split-edges "$WORK/raw" --out "$DS" --valid-fraction 0.002 --test-fraction 0.002 --eval-negatives 100 \
    --seed 1 --force --quiet >/dev/null
  rm -rf "$WORK/raw"
fi
features=$(stat -c %s "$DS/features.bin")
echo "dataset $DS: $(grep -o '"num_nodes": [0-9]*' "$DS/dataset.json"), $(grep -o '"num_edges": [0-9]*' "$DS/dataset.json"), features $((features >> 20)) MiB, budget $BUDGET"

OUT="$WORK/link_reads.tsv"
printf 'task\tpolicy\taccesses\trow_misses\tfeature_reads\tfeature_MiB\tepoch_s\tfcache_rows\n' > "$OUT"
# One --no-train epoch: the data path only (sample, plan, gather), the counts of its metrics.
for task in link node; do
  for policy in $POLICIES; do
    m="$WORK/m_${task}_${policy}.jsonl"
    "$SEER" train "$DS" --task "$task" --negatives "$NEGATIVES" --no-train --epochs 1 --feature-cache "$policy" \
      --fanouts "$FANOUTS" --batch-size "$BATCH" --memory-budget "$BUDGET" --seed 1 --quiet --metrics "$m" >/dev/null
    $PY - "$m" "$task" "$policy" >> "$OUT" <<'EOF'
import json, sys
path, task, policy = sys.argv[1:4]
rows = 0
for line in open(path):
    j = json.loads(line)
    if j["type"] == "start":
        rows = j.get("fcache_rows", 0)
    if j["type"] == "epoch":
        a, h = j["fcache_accesses"], j["fcache_hits"]
        print(f"{task}\t{policy}\t{a}\t{a - h}\t{j['feature_ssd_reads']}\t{j['feature_ssd_bytes'] / 2**20:.1f}\t"
              f"{j['seconds']['epoch']:.1f}\t{rows}")
EOF
  done
done

if [ "$TRAIN" = 1 ]; then
  m="$WORK/m_train.jsonl"
  /usr/bin/time -v "$SEER" train "$DS" --task link --negatives "$NEGATIVES" --epochs 1 --fanouts "$FANOUTS" \
    --batch-size "$BATCH" --hidden 64 --memory-budget "$BUDGET" --seed 1 --quiet --metrics "$m" \
    > "$WORK/train.out" 2> "$WORK/train.err"
  maxrss=$(grep "Maximum resident" "$WORK/train.err" | awk '{print $NF}')
  echo "training epoch (--task link, belady): $(grep -E '^test (mrr|hits@10)' "$WORK/train.out" | tr '\n' ' ')" \
       "peak RSS $((maxrss >> 10)) MiB (budget $BUDGET), $(grep -o '"epoch": [0-9.]*' "$m" | head -1 || true)"
  $PY - "$m" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j["type"] == "epoch":
        s = j["seconds"]
        print(f"  epoch {s['epoch']:.1f} s (compute {s['compute']:.1f}, waiting {s['stall']:.1f}, eval {s['eval']:.1f}); "
              f"misses {j['fcache_accesses'] - j['fcache_hits']} of {j['fcache_accesses']}, {j['feature_ssd_reads']} reads")
    if j["type"] == "final":
        print(f"  peak RSS (VmHWM) {j['peak_rss_bytes'] >> 20} MiB; test MRR {j.get('test_mrr', -1):.4f}")
EOF
fi
column -t -s $'\t' "$OUT"
