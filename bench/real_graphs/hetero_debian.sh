#!/usr/bin/env bash
# A real heterogeneous graph (issue #31): Debian bookworm's package index on this machine
# (make_debian_graph.py: package / source / maintainer nodes, depends / recommends / suggests /
# built_from / maintained_by relations, the package Section as the label, name-only features).
#   (i)   builds the graph files into WORK/graph;
#   (ii)  preps the homogeneous datasets with `seer prep --remap-ids ... --undirected --dedup
#         --drop-self-loops` -- "homo": the packages and their depends+recommends+suggests edges;
#         "all": every relation collapsed onto one id space (sources and maintainers as extra
#         nodes with zero features) -- and trains sage, gcn, gat, mlp on each;
#   (iii) runs the independent numpy baselines (hetero_baselines.py) on the same split;
#   (iv)  only when `seer prep --help` offers --relation and `seer train --help` offers rgcn:
#         preps the typed dataset (one relation per file, --reverse adds the reverses) and
#         trains rgcn, rsage, rgat on it;
# then prints one table: test accuracy on the package nodes (mean +- std over the seeds, best
# valid accuracy in brackets) for every model and baseline.
#
#   bench/real_graphs/hetero_debian.sh [WORK_DIR]      (default /tmp/seer-debian)
# Env: SEER (build/seer), SEEDS ("0 1 2"), MODELS ("sage gcn gat mlp"), RMODELS ("rgcn rsage
#      rgat"), HOMO ("homo all": which homogeneous datasets), STAGES ("graph homo baselines
#      typed"), THREADS (1: --threads, --threads of prep and OMP_NUM_THREADS), EPOCHS (20),
#      BATCH (512), EVAL_EVERY (2), LR (0.01), EXTRA (more seer train flags).
# Every model gets the same flags (--fanouts 10,10 --hidden 128 --heads 4, run_accuracy.sh's).
# A run whose log already holds a result is skipped (delete the log to redo it). One line per
# run is appended to WORK/accuracy.tsv (graph, model, seed, flags, best valid, test, seconds).
# Needs python3-numpy and lz4 (lz4cat), bc.
set -euo pipefail
cd "$(dirname "$0")/../.."
SEER=${SEER:-build/seer}
WORK=${1:-/tmp/seer-debian}
SEEDS=${SEEDS:-0 1 2}
MODELS=${MODELS:-sage gcn gat mlp}
RMODELS=${RMODELS:-rgcn rsage rgat}
HOMO=${HOMO:-homo all}
STAGES=${STAGES:-graph homo baselines typed}
THREADS=${THREADS:-1}
EPOCHS=${EPOCHS:-20}
BATCH=${BATCH:-512}
EVAL_EVERY=${EVAL_EVERY:-2}
LR=${LR:-0.01}
EXTRA=${EXTRA:-}
PY=/usr/bin/python3
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
G=$WORK/graph
mkdir -p "$WORK/logs"
OUT_TSV="$WORK/accuracy.tsv"
[ -f "$OUT_TSV" ] || printf 'graph\tmodel\tseed\tflags\tbest_valid\ttest\tseconds\n' > "$OUT_TSV"
stage() { [[ " $STAGES " == *" $1 "* ]]; }

# train GRAPH_NAME DATASET MODEL...: every model x seed, skipping runs already done.
train() {
  local g=$1 ds=$2; shift 2
  local m seed log start end line valid test secs
  for m in "$@"; do
    for seed in $SEEDS; do
      log="$WORK/logs/$g.$m.$seed${EXTRA:+.$(echo "$EXTRA" | tr -c 'a-z0-9' _)}.log"
      if [ -f "$log" ] && grep -q "seer train: best valid acc" "$log"; then
        echo "skip $log (done)"; continue
      fi
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      if ! "$SEER" train "$ds" --model "$m" --fanouts 10,10 --hidden 128 --heads 4 --batch-size "$BATCH" \
          --lr "$LR" --epochs "$EPOCHS" --eval-every "$EVAL_EVERY" --seed "$seed" --threads "$THREADS" \
          --memory-budget 2G $EXTRA > "$log" 2>&1; then
        echo "FAILED: $g $m seed $seed (log $log):"; tail -3 "$log"; continue
      fi
      end=$(date +%s.%N)
      line=$(grep "seer train: best valid acc" "$log" | tail -1)
      valid=$(echo "$line" | sed -E 's/.*best valid acc ([0-9.]+).*/\1/')
      test=$(echo "$line" | sed -E 's/.*test acc ([0-9.]+).*/\1/')
      secs=$(echo "$end - $start" | bc)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%.0f\n' "$g" "$m" "$seed" \
        "epochs $EPOCHS lr $LR batch $BATCH threads $THREADS${EXTRA:+ $EXTRA}" "$valid" "$test" "$secs" | tee -a "$OUT_TSV"
    done
  done
}

# (i) the graph files
if stage graph && [ ! -f "$G/counts.json" ]; then
  $PY bench/real_graphs/make_debian_graph.py "$G"
fi

# (ii) homogeneous datasets and models
if stage homo; then
  for h in $HOMO; do
    case $h in
      homo) edges=$G/homo_edges.csv; ids=$G/package_ids.txt; feat=$G/package_feat.npy ;;
      all) edges=$G/all_edges.csv; ids=$G/all_ids.txt; feat=$G/all_feat.npy ;;
      *) echo "unknown homogeneous graph $h" >&2; exit 2 ;;
    esac
    if [ ! -f "$WORK/ds_$h/dataset.json" ]; then
      "$SEER" prep --edges "$edges" --src-col src --dst-col dst --remap-ids --node-ids "$ids" \
        --features "$feat" --labels "$G/labels.csv" --label-id-col package --label-col section_index \
        --train "$G/train.txt" --valid "$G/valid.txt" --test "$G/test.txt" \
        --undirected --dedup --drop-self-loops --threads "$THREADS" --out "$WORK/ds_$h" --force --quiet
    fi
    # shellcheck disable=SC2086
    train "$h" "$WORK/ds_$h" $MODELS
  done
fi

# (iii) independent baselines on the same split
if stage baselines && [ ! -f "$G/baselines.json" ]; then
  $PY bench/real_graphs/hetero_baselines.py "$G" --json "$G/baselines.json"
fi

# (iv) the typed dataset and the relational models, once Seer has them
if stage typed; then
  # (help texts read whole first: grep -q under pipefail would fail on the writer's SIGPIPE)
  prep_help=$("$SEER" prep --help 2>&1 || true)
  train_help=$("$SEER" train --help 2>&1 || true)
  if grep -q -- "--relation" <<<"$prep_help" && grep -q "rgcn" <<<"$train_help"; then
    if [ ! -f "$WORK/ds_typed/dataset.json" ]; then
      "$SEER" prep --out "$WORK/ds_typed" --remap-ids --src-col src --dst-col dst \
        --relation "package,depends,package=$G/rel_depends.csv" \
        --relation "package,recommends,package=$G/rel_recommends.csv" \
        --relation "package,suggests,package=$G/rel_suggests.csv" \
        --relation "package,built_from,source=$G/rel_built_from.csv" \
        --relation "package,maintained_by,maintainer=$G/rel_maintained_by.csv" \
        --reverse \
        --type-node-ids "package=$G/package_ids.txt" --type-features "package=$G/package_feat.npy" \
        --type-labels "package=$G/labels.csv" --label-id-col package --label-col section_index \
        --type-train "package=$G/train.txt" --type-valid "package=$G/valid.txt" --type-test "package=$G/test.txt" \
        --threads "$THREADS" --force --quiet
    fi
    # shellcheck disable=SC2086
    train typed "$WORK/ds_typed" $RMODELS
  else
    echo "typed stage skipped: this seer has no 'prep --relation' and/or 'train --model rgcn' yet"
  fi
fi

# The table: test accuracy on the package nodes.
$PY - "$OUT_TSV" "$G/baselines.json" <<'EOF'
import collections, json, os, statistics, sys
runs = collections.OrderedDict()
with open(sys.argv[1]) as f:
    next(f)
    for line in f:
        g, m, seed, flags, valid, test, secs = line.rstrip("\n").split("\t")
        runs.setdefault((g, m), {})[seed] = (float(valid), float(test), float(secs))  # last line per seed wins
names = {"homo": "homogeneous (package edges)", "all": "homogeneous (all relations collapsed)", "typed": "typed (relational)"}
print("\n| model | dataset | test acc (mean +- std) | best valid | seeds | s/run |\n|---|---|---|---|---|---|")
for (g, m), by_seed in runs.items():
    v = [r[0] for r in by_seed.values()]; t = [r[1] for r in by_seed.values()]; s = [r[2] for r in by_seed.values()]
    sd = f" +- {statistics.stdev(t):.4f}" if len(t) > 1 else ""
    print(f"| seer {m} | {names.get(g, g)} | {statistics.mean(t):.4f}{sd} | {statistics.mean(v):.4f} | {len(t)} | {statistics.mean(s):.0f} |")
if os.path.exists(sys.argv[2]):
    for k, r in json.load(open(sys.argv[2])).items():
        print(f"| {k} (numpy baseline) | package files | {r['test']:.4f} | {r['valid']:.4f} | - | - |")
EOF
