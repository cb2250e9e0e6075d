#!/usr/bin/env bash
# Neighbor-cache score A/B: hits per cached byte of `seer ncache build --score out-in`
# (Ginex's out-degree/in-degree) vs `--score lookups` (expected list reads per byte) at the
# same budgets, counted by `seer sample` over one epoch of the train split (same seed, so
# both scores see the same batches; counts, not timings, so other load does not matter).
#
#   bench/real_graphs/ncache_score.sh DATASET_DIR... > table.tsv
# Env: SEER (build/seer), BUDGETS ("2% 10% 30%"), FANOUTS (10,10,10), BATCH (1000).
# Columns: dataset, budget, score, cache bytes, nodes cached, lookups, hits, hit %, hits per
# cached MiB, blocks read by the sampler.
set -euo pipefail
cd "$(dirname "$0")/../.."
SEER=${SEER:-build/seer}
BUDGETS=${BUDGETS:-2% 10% 30%}
FANOUTS=${FANOUTS:-10,10,10}
BATCH=${BATCH:-1000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf 'dataset\tbudget\tscore\tbytes\tnodes_cached\tlookups\thits\thit_pct\thits_per_MiB\tblocks_read\n'
for ds in "$@"; do
  for budget in $BUDGETS; do
    for score in out-in lookups; do
      build=$("$SEER" ncache build "$ds" --budget "$budget" --score "$score" --fanouts "$FANOUTS" \
                --batch-size "$BATCH" --out "$TMP/nc" --force --quiet)
      bytes=$(echo "$build" | sed -nE 's/.*uses ([0-9]+) bytes.*/\1/p')
      nodes=$(echo "$build" | sed -nE 's/.*; ([0-9]+) of [0-9]+ nodes.*/\1/p')
      # seer sample --ncache reads DATASET/ncache: point it there for this run only.
      rm -rf "$TMP/ds" && mkdir "$TMP/ds" && for f in "$ds"/*; do ln -s "$(realpath "$f")" "$TMP/ds/"; done
      rm -f "$TMP/ds/ncache" && ln -s "$TMP/nc" "$TMP/ds/ncache"
      "$SEER" sample "$TMP/ds" --ncache --fanouts "$FANOUTS" --batch-size "$BATCH" --epochs 1 --seed 1 \
        --threads 1 --out "$TMP/trace" --force --jsonl "$TMP/log.jsonl" > /dev/null
      read -r lookups hits blocks < <(/usr/bin/python3 -c "
import json
rows = [json.loads(l) for l in open('$TMP/log.jsonl')]
def total(key): return sum(r.get(key, 0) for r in rows)
print(total('ncache_lookups'), total('ncache_hits'), total('blocks_read'))")
      rm -f "$TMP/log.jsonl"
      name=$(basename "$(dirname "$ds")")/$(basename "$ds")
      /usr/bin/python3 - "$name" "$budget" "$score" "$bytes" "$nodes" "$lookups" "$hits" "$blocks" <<'PY'
import sys
name, budget, score, b, nodes, l, h, blocks = sys.argv[1:]
b, l, h = int(b), int(l), int(h)
print("\t".join([name, budget, score, str(b), nodes, str(l), str(h), "%.2f" % (100.0 * h / max(l, 1)),
                 "%.1f" % (h / (b / 2**20)), blocks]))
PY
    done
  done
done
