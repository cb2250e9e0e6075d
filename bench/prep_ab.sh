#!/usr/bin/env bash
# Interleaved A/B of `seer prep` wall/CPU time: BASE (any seer build, run with its default
# threads) against HEAD at --threads 1 and 2, on WORK/edges.bin64 and WORK/edges.txt
# (make them once: seer gen --nodes 1000000 --avg-degree 20 --seed 1 --edge-list-out ...),
# each at the default budget and at a quarter of the file (the spilling case). Prints
# "round format budget variant wall user sys maxrss_kb" per run and flags any output that
# differs from WORK/ds_base (a dataset BASE made from edges.bin64).
#   BASE=old/seer HEAD=build/seer ROUNDS=5 bench/prep_ab.sh WORK
set -uo pipefail
WORK=${1:?usage: BASE=.. HEAD=.. bench/prep_ab.sh WORK}
BASE=$(realpath "${BASE:?set BASE to the baseline seer binary}")
HEAD=$(realpath "${HEAD:-build/seer}")
cd "$WORK" || exit 1
ROUNDS=${ROUNDS:-5}
for r in $(seq 1 $ROUNDS); do
  for fmt in bin64 txt; do
    size=$(stat -c %s edges.$fmt)
    for b in default $((size/4)); do
      bflag=""; [ $b != default ] && bflag="--memory-budget $b"
      for v in base h1 h2; do
        bin=$HEAD; tf="--threads 1"; [ "$v" = h2 ] && tf="--threads 2"; [ "$v" = base ] && { bin=$BASE; tf=""; }
        /usr/bin/time -f "$r $fmt $b $v %e %U %S %M" $bin prep --edges edges.$fmt --num-nodes 1000000 $bflag --out ds_ab --force --quiet $tf 2>&1 | tail -1
        cmp -s ds_ab/indices.bin ds_base/indices.bin && cmp -s ds_ab/indptr.bin ds_base/indptr.bin || echo "$r $fmt $b $v OUTPUT DIFFERS"
      done
    done
  done
done
