#!/usr/bin/env bash
# The Seer demo: installs missing packages, builds the two binaries (`seer`, `seer-train`;
# Release) into build/ (the tests are tools/test.sh's), generates a small synthetic graph
# with a learnable task, checks it, builds a neighbor cache, samples a trace and prints
# cache statistics, then trains GraphSAGE out of core (a feature cache of a quarter of
# the features: rows are read from the SSD every epoch) next to a features-only baseline
# and prints both test accuracies and the last epoch's SSD reads.
# Idempotent: a second run reuses the build and the generated dataset.
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"
seer_install_packages
seer_build seer seer-train

SEER="$SEER_BUILD/seer"
DEMO="${SEER_DEMO_DIR:-$SEER_ROOT/build/demo}"
DATA="$DEMO/graph"
mkdir -p "$DEMO"

step() { printf '\n==> %s\n' "$*"; }

if ! "$SEER" check "$DATA" >/dev/null 2>&1; then
  step "seer gen: 100k nodes, ~2M edges, 64-dim features, 8 classes"
  "$SEER" gen --nodes 100000 --avg-degree 20 --feature-dim 64 --classes 8 \
    --seed 1 --memory-budget 256M --out "$DATA" --force
fi

step "seer check --deep"
"$SEER" check "$DATA" --deep

step "seer ncache build (4 MiB budget)"
"$SEER" ncache build "$DATA" --budget 4M --force

step "seer sample: 1 epoch of traces"
"$SEER" sample "$DATA" --out "$DEMO/trace" --fanouts 10,10 --batch-size 500 \
  --superbatch 10 --epochs 1 --seed 1 --force

step "seer stats: hit ratio per cache policy (Belady is the lower bound on misses)"
"$SEER" stats "$DATA" --trace "$DEMO/trace" --capacities 1%,5%,10%,20% \
  --svg "$DEMO/hit_ratio.svg" --json "$DEMO/stats.json"

step "seer train: features-only baseline (MLP)"
"$SEER" train "$DATA" --model mlp --epochs 3 --hidden 64 --fanouts 10,10 \
  --memory-budget 320M --seed 1 --metrics "$DEMO/mlp_metrics.jsonl" | tee "$DEMO/mlp.log"

# 100 000 rows x 64 float32 = 24.4 MiB of features; a 6 MiB feature cache holds a quarter
# of them, so every epoch reads the rest from the SSD (O_DIRECT, no page cache).
step "seer train: GraphSAGE out of core through a Belady feature cache of 1/4 of the features"
"$SEER" train "$DATA" --model sage --epochs 3 --hidden 64 --fanouts 10,10 \
  --memory-budget 320M --fcache-budget 6M --seed 1 --metrics "$DEMO/sage_metrics.jsonl" \
  --save-model "$DEMO/sage.pt" 2>&1 | tee "$DEMO/sage.log"

step "summary"
grep -h "test accuracy" "$DEMO/mlp.log" | tail -1 | sed 's/^/features-only (MLP): /'
grep -h "test accuracy" "$DEMO/sage_metrics.jsonl" "$DEMO/sage.log" 2>/dev/null | tail -1 | sed 's/^/GraphSAGE:           /'
grep -h "feature cache hit" "$DEMO/sage.log" | tail -1 | sed 's/^ */last epoch:          /'
echo "hit-ratio chart: $DEMO/hit_ratio.svg"
