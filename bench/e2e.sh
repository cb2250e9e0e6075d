#!/usr/bin/env bash
# End-to-end comparison (issue 6): Seer against the baselines of Ginex §5, side by side,
# on the same data, under the same memory limit.
#
#   pyg+        --preset pyg+    conventional pipeline, mmap through the page cache
#                                (read-ahead off), no application caches
#   ali+pg      --preset ali+pg  + static neighbor cache + static-degree feature cache,
#                                cache split swept over 0:100 25:75 50:50 75:25 100:0;
#                                the best split is the "ali+pg" row
#   seer        --preset seer    superbatch pipeline, exact Belady feature cache, O_DIRECT
#   seer-pg     seer with --feature-cache static-degree (Ginex's "Ginex-PG" ablation)
#   seer-presc  seer with --feature-cache presc
#   seer:NC:FC  seer with --cache-split NC:FC (opt-in, --modes); when any is run, a
#               "seer-best" row reports the best of seer (auto split) and these splits
#   seer@S[:NC:FC]  seer with --superbatch S (and optionally a split), opt-in: a longer
#               lookahead costs memory (traces in flight, planner) the cache then lacks
#   pyg-peer    (opt-in, --modes) bench/pyg_peer.py: PyTorch Geometric GraphSAGE over the
#               same CSC and an np.memmap of the same features.bin (bench/gpu.sh)
#
# Usage: bench/e2e.sh [--quick|--medium|--large|--ginex] [--build DIR] [--out DIR]
#                     [--repeats N] [--only no-train|train] [--modes "pyg+ seer ..."]
#                     [--append]   (add runs to OUT's earlier results; one table over all)
#                     [--truncate N] (the slow baselines, pyg+ and ali+pg, run only their first N
#                     batches of epoch 1, see below)
#                     [--no-limit]  (run without a memory limit; see "Memory limit" below)
#                     [--check-limit] (set the limit up, show that it bites, and stop)
# Every knob can also be set in the environment (defaults per scale below): NODES DIMS
# AVG_DEGREE TRAIN_FRACTION VALID_FRACTION TEST_FRACTION (of the generated dataset, default
# 0.002 each) FANOUTS BATCH SUPERBATCH HIDDEN EPOCHS LIMIT BUDGET BELADY_CHECK, and for the
# pyg-peer mode PEER_PYTHON (default: the first of python3, /usr/bin/python3 with torch and
# numpy), PEER_WORKERS (its DataLoader workers, default min(8, cores)), PEER_PREFETCH (batches
# each worker keeps ready, default 2), PEER_RETRY_WORKERS
# (a peer killed by the limit runs once more with this many, default a quarter, >= 1; 0 =
# no retry); E2E_DEADLINE (unix seconds: no run starts that would not end by then, judged
# by the longest run so far; such runs are listed SKIPPED; gpu.sh sets it).
#   LIMIT   the memory limit of every run (cgroup: process memory + its page cache)
#   BUDGET  seer train --memory-budget, the same for every mode and kind: the whole process
#           (the runtime measured at start — libtorch, the CUDA context — is paid first, then
#           tables, staging, the model's training working set, caches), so LIMIT minus what
#           the budget does not hold (page cache of mmapped files, thread stacks).
#
# Per run: the page cache dropped (below), a fresh child memory cgroup with the limit, then
# `seer train ... --metrics` (or bench/pyg_peer.py). Each mode runs REPEATS times in
# two kinds: "no-train" (--no-train: the data path only) and "train" (GraphSAGE, hidden
# HIDDEN, on the GPU when present, else the CPU). Two epoch times per run, both without the
# end-of-run evaluation: epoch 1 (cold: the caches' initial fill, an empty page cache,
# the peer's worker start-up) and the steady epoch = the median of epochs 2..EPOCHS (epoch 2
# alone at the default EPOCHS=2); the "epoch_s" of results.jsonl/summary.json and the
# ratios "vs ..." are the steady epoch's, "first_epoch_s" and "ep1 ..." the cold one's.
# Page cache: `sync; echo 1 > /proc/sys/vm/drop_caches` before every run where permitted,
# else posix_fadvise(POSIX_FADV_DONTNEED) on every dataset file (containers: /proc/sys is
# read-only there); which one worked is printed and in every result ("cache_drop"), with
# what stayed cached of the dataset (fincore, when present).
# After every run OUT/summary.json is rewritten (a harness that cuts this script keeps the
# finished runs); at the end the full table and a short one: per mode epoch 1, the steady
# epoch, test accuracy, peak RSS / budget, cgroup peak, the limit; then Seer against the
# PyG peer and pyg+: time ratios Seer/other and speed-ups other/Seer for both epochs, and
# the accuracy difference. Every line names its limit ("no limit" under --no-limit).
# The storage ceiling is direct_reader_bench at QD 64 (io_uring) on features.bin.
#
# Memory limit (cgroup: process memory + its page cache, swap 0): cgroup v2 directly when
# this process can write the cgroup tree (a child of its own cgroup, the memory controller
# enabled in the parent's cgroup.subtree_control first, moving this script into a leaf child
# "seer-e2e-leaf" when the parent holds processes; else a child of the cgroup2 root), else
# cgroup v1 (memory.limit_in_bytes), else systemd-run --scope -p MemoryMax. A limit counts
# only when it reads back from memory.max / memory.limit_in_bytes, and each run checks from
# inside, before it starts, that its pid is in its cgroup's cgroup.procs and that the cgroup
# has the limit (exit 125 if not). The cgroup's memory.peak and oom_kill count are recorded.
# Cleanup: processes a run leaves in its cgroup once its own process has exited (orphaned
# loader workers) are ended, each run's cgroup is removed after it, the leaf and +memory
# undone at exit, and
# run cgroups left by a killed earlier run of this script (seer-e2e-PID-N of a dead PID)
# removed at start; no other cgroup is touched. When no limit can be set the script stops
# (exit 3) with one line naming what it tried, unless --no-limit: then no run is limited and
# every result line and table row says "no memory limit".
#
# --truncate N (env TRUNCATE; TRUNCATE_MODES, default "pyg+ ali+pg", are the modes it applies to,
# by prefix): those runs stop after N batches of epoch 1 (--stop-after counts groups of
# --prefetch 2 batches) with one progress line per batch, timestamped here. Their "epoch s" is
# EXTRAPOLATED: the steady time per batch (batches N/4+1..N, after the page cache and the static
# caches are warm) times the epoch's batch count; the first batch (process start to batch 1 done:
# start-up, cache fill, first reads) is reported apart. Their time breakdown, read counts and
# neighbor-cache hits are not measured ("-"); the feature-cache hit ratio is the progress line's.
# Every other mode runs whole epochs as above.
#
# CPU time: with /usr/bin/time present, each run's user + system CPU seconds (the whole
# process: start-up and every epoch, or a truncated run's batches) and its file-system
# writes (traces, planner runs and changesets spilled to the runtime dir; bytes) are in
# results.jsonl ("cpu_s", "fs_write_bytes") and the table's "CPU s/run" column.
#
# Output: OUT/results.jsonl (one line per run), OUT/summary.json and a table on stdout;
# OUT/belady.jsonl: the seer run's Belady misses vs `seer stats` (BELADY_CHECK=0 skips).
set -euo pipefail

SCALE=quick BUILD=build OUT="" REPEATS="${REPEATS:-3}" ONLY="" MODES="" APPEND=0 TRUNCATE="${TRUNCATE:-}"
NO_LIMIT=0 CHECK_LIMIT=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) SCALE=quick ;;
    --medium) SCALE=medium ;;
    --large) SCALE=large ;;
    --ginex) SCALE=ginex ;;
    --build) BUILD="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --repeats) REPEATS="$2"; shift ;;
    --only) ONLY="$2"; shift ;;
    --modes) MODES="$2"; shift ;;
    --append) APPEND=1 ;;
    --truncate) TRUNCATE="$2"; shift ;;
    --no-limit) NO_LIMIT=1 ;;
    --check-limit) CHECK_LIMIT=1 ;;
    -h|--help) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "e2e.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

case "$SCALE" in
  # quick: 2M nodes x 128 (1.1 GiB with the topology) = 2.1x the limit; 10 training batches
  # per epoch (minutes on 2 vCPUs). BUDGET was 192M until the split reserved the model, 256M
  # until --memory-budget covered the whole process (the CPU runtime, ~152 MiB, is paid
  # first: train needs >= 282M at 1M nodes). LIMIT 512M: 112M above the budget for what the
  # budget does not hold (page cache of the topology, thread stacks); the PyG peer (torch +
  # its loader workers) needs ~400M here with one worker.
  quick)   : "${NODES:=2000000}" "${DIMS:=128}" "${TRAIN_FRACTION:=0.005}" "${FANOUTS:=10,10}" \
             "${LIMIT:=512M}" "${BUDGET:=400M}" "${SUPERBATCH:=5}" ;;
  medium)  : "${NODES:=2000000}" "${DIMS:=256}" "${TRAIN_FRACTION:=0.01}" "${FANOUTS:=10,10}" \
             "${LIMIT:=1G}" "${BUDGET:=640M}" "${SUPERBATCH:=20}" ;;
  # Ginex §5.1's setting scaled to one small machine: dataset >= 5x the limit (7.9 GiB at
  # dim 128 under 1.5G, 15 GiB at dim 256 under 2.5G), fan-outs 10,10,10, batch 1000,
  # feature dims 128 and 256. A 3-hop batch touches ~300K rows here, so seer needs ~1 GiB
  # before any cache (two batch buffers, tables, traces in flight); the limit follows the
  # dim (LIMIT_<dim>/BUDGET_<dim>). Training nodes: 21 batches per epoch, not Ginex's 10%
  # (1500 batches/epoch would take hours per mode on a 2-core VM).
  large)   : "${NODES:=15000000}" "${DIMS:=128 256}" "${TRAIN_FRACTION:=0.0014}" "${FANOUTS:=10,10,10}" \
             "${LIMIT_128:=1536M}" "${BUDGET_128:=1200M}" "${LIMIT_256:=2560M}" "${BUDGET_256:=2200M}" \
             "${SUPERBATCH:=21}" ;;
  # Ginex-like (issue 12): Ginex's seed fraction (10 % of the nodes) and >= 200 batches per
  # epoch with fan-outs 10,10,10 and batch 1000, i.e. 2M nodes, scaled down from Ginex's
  # graphs in node count only. Average degree 3 keeps a 3-hop batch at ~60K rows so that
  # two batch buffers and the caches fit a limit 5x below the 2 GiB dataset (384M; budget
  # 256M leaves ~130 MiB for libtorch and the page cache). Training does not fit this limit
  # (the model's working set at ~74K rows is ~166 MiB): --only no-train here, and training
  # with LIMIT=640M BUDGET=448M (3.1x below the dataset). pyg+ and ali+pg run ~150-350
  # seeds/s here (10-25 min per epoch): use --truncate 30.
  # SUPERBATCH empty: no --superbatch flag, every seer mode runs at its default (auto);
  # seer@S modes sweep S. The ali+pg sweep keeps three splits (CPU time on 2 cores).
  ginex)   : "${NODES:=2000000}" "${DIMS:=256}" "${AVG_DEGREE:=3}" "${TRAIN_FRACTION:=0.1}" "${FANOUTS:=10,10,10}" \
             "${LIMIT:=384M}" "${BUDGET:=256M}" "${SUPERBATCH:=}" ;;
esac
: "${AVG_DEGREE:=10}" "${BATCH:=1000}" "${HIDDEN:=64}" "${EPOCHS:=2}" "${TRUNCATE_MODES:=pyg+ ali+pg}"
[[ -z "$TRUNCATE" || "$TRUNCATE" =~ ^[1-9][0-9]*$ ]] || { echo "e2e.sh: --truncate '$TRUNCATE': expected a batch count" >&2; exit 2; }
PREFETCH=2
OUT="${OUT:-$BUILD/bench-e2e-$SCALE}"
SEER="$BUILD/seer"
CEILING_BENCH="$BUILD/bench/direct_reader_bench"
if [[ -z "$MODES" && "$SCALE" == ginex ]]; then
  MODES="pyg+ ali+pg:0:100 ali+pg:25:75 ali+pg:50:50 seer seer-pg seer-presc"
fi
[[ -n "$MODES" ]] || MODES="pyg+ ali+pg:0:100 ali+pg:25:75 ali+pg:50:50 ali+pg:75:25 ali+pg:100:0 seer seer-pg seer-presc"
KINDS="no-train train"
[[ -n "$ONLY" ]] && KINDS="$ONLY"
mkdir -p "$OUT"
[[ -x "$SEER" || $CHECK_LIMIT == 1 ]] || { echo "e2e.sh: no seer binary at $SEER (cmake --build $BUILD --target seer)" >&2; exit 1; }

to_bytes() { python3 -c 'import sys
t=sys.argv[1].strip().upper(); m={"K":1<<10,"M":1<<20,"G":1<<30,"T":1<<40}
print(int(float(t[:-1])*m[t[-1]]) if t[-1] in m else int(t))' "$1"; }
# LIMIT_<dim> / BUDGET_<dim> override LIMIT / BUDGET for one feature dim (set per loop).
: "${LIMIT:=1G}" "${BUDGET:=640M}"
LIMIT_BYTES=$(to_bytes "$LIMIT")

# ---- memory limit: one fresh child cgroup per run --------------------------------------
# In order: (1) cgroup v2 directly, in this process's own cgroup: its children get the memory
# controller (+memory in its cgroup.subtree_control; a non-root cgroup holding processes may
# not do that — "no internal processes" — so this script first moves itself into a leaf child
# "seer-e2e-leaf", and, where PID 1 is not systemd, the other processes of that cgroup too;
# they keep every limit they had), else in the root of the cgroup2 mount; (2) cgroup v1 (the
# memory hierarchy's own cgroup); (3) systemd-run --scope -p MemoryMax. Each is accepted only
# when the limit written reads back (memory.max / memory.limit_in_bytes, page-rounded), and
# every run checks, inside its cgroup before it starts, that its cgroup has that limit.
# Nothing settable: exit 3, unless --no-limit (then every result says "no memory limit").
# Between markers so that a test can source these functions alone.
# BEGIN memory-limit functions
PAGE=$(getconf PAGESIZE 2>/dev/null || echo 4096)
V2_ROOT=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
V1_MEM_ROOT=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ {print $2; exit}' /proc/mounts)
CG_FS=""  # where the memory controller lives: v2 or v1
if [[ -n "$V2_ROOT" ]] && grep -qw memory "$V2_ROOT/cgroup.controllers" 2>/dev/null; then CG_FS=v2
elif [[ -n "$V1_MEM_ROOT" ]]; then CG_FS=v1; fi
CG_KIND=none CG_PARENT="" CG_WHY="" CG_LEAF="" CG_ENABLED="" CG_CTL=memory

cg_own() {  # this process's cgroup directory in the memory hierarchy ($CG_FS)
  local rel
  if [[ "$CG_FS" == v1 ]]; then
    rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3; exit}' /proc/self/cgroup); echo "$V1_MEM_ROOT${rel%/}"
  else
    rel=$(awk -F: '$1 == "0" {print $3; exit}' /proc/self/cgroup); echo "$V2_ROOT${rel%/}"
  fi
}

# cg2_enable DIR [CONTROLLER]: give DIR's children CONTROLLER (default memory); 0 when they have it.
cg2_enable() {
  local dir="$1" ctl="${2:-memory}" pid left
  CG_CTL="$ctl"
  grep -qw "$ctl" "$dir/cgroup.subtree_control" 2>/dev/null && return 0
  if ! grep -qw "$ctl" "$dir/cgroup.controllers" 2>/dev/null; then
    CG_WHY+="$dir: '$ctl' is not in its cgroup.controllers (its parent does not delegate it); "; return 1
  fi
  { echo "+$ctl" > "$dir/cgroup.subtree_control"; } 2>/dev/null && { CG_ENABLED="$dir"; return 0; }
  # EBUSY: DIR holds processes. Move this script into a leaf child, then try again.
  local leaf="$dir/seer-e2e-leaf"
  if ! mkdir -p "$leaf" 2>/dev/null || ! { echo $$ > "$leaf/cgroup.procs"; } 2>/dev/null; then
    CG_WHY+="$dir: cannot enable +$ctl and cannot move this script into a leaf child; "; rmdir "$leaf" 2>/dev/null; return 1
  fi
  CG_LEAF="$leaf"
  if ! { echo "+$ctl" > "$dir/cgroup.subtree_control"; } 2>/dev/null &&
     [[ "$(cat /proc/1/comm 2>/dev/null)" != systemd ]]; then
    # Other processes share DIR (the shell that started this script, ...): into the leaf too.
    left=$(tr '\n' ' ' < "$dir/cgroup.procs")
    for pid in $left; do { echo "$pid" > "$leaf/cgroup.procs"; } 2>/dev/null || true; done
    [[ -n "$left" ]] && echo "e2e: moved processes $left of $dir into $leaf (to enable +$ctl for its children)" >&2
  fi
  if { echo "+$ctl" > "$dir/cgroup.subtree_control"; } 2>/dev/null; then CG_ENABLED="$dir"; return 0; fi
  CG_WHY+="$dir: cannot enable +$ctl (processes $(tr '\n' ' ' < "$dir/cgroup.procs")remain in it); "
  cg_restore
  return 1
}

# Undoes what cg2_enable did: -controller, the processes moved back, the leaf removed (best effort).
cg_restore() {
  local pid
  # (|| true: under set -e a failing last command of an && list in the EXIT trap would turn
  # the script's exit status into 1 — a --check-limit that passed read as failed.)
  [[ -n "$CG_PARENT" ]] && { rmdir "$CG_PARENT"/seer-e2e-$$-* 2>/dev/null || true; }  # runs cut short
  [[ -n "$CG_ENABLED" && -n "$CG_LEAF" ]] && { { echo "-$CG_CTL" > "$CG_ENABLED/cgroup.subtree_control"; } 2>/dev/null || true; }
  if [[ -n "$CG_LEAF" && -d "$CG_LEAF" ]]; then
    for pid in $(cat "$CG_LEAF/cgroup.procs" 2>/dev/null); do
      { echo "$pid" > "$(dirname "$CG_LEAF")/cgroup.procs"; } 2>/dev/null || true
    done
    rmdir "$CG_LEAF" 2>/dev/null && CG_LEAF="" && CG_ENABLED=""
  fi
  return 0
}

# cg_make DIR BYTES: DIR as a fresh cgroup limited to BYTES (no swap), checked by reading it back.
cg_make() {
  local dir="$1" want=$(( $2 / PAGE * PAGE )) got file
  mkdir "$dir" 2>/dev/null || { CG_WHY+="cannot create $dir; "; return 1; }
  if [[ "$CG_FS" == v2 ]]; then
    file="$dir/memory.max"
    [[ -f "$file" ]] || { CG_WHY+="$dir has no memory.max (memory controller not enabled); "; rmdir "$dir"; return 1; }
    { echo "$want" > "$file"; } 2>/dev/null
    [[ -f "$dir/memory.swap.max" ]] && { echo 0 > "$dir/memory.swap.max"; } 2>/dev/null
    [[ -f "$dir/memory.oom.group" ]] && { echo 1 > "$dir/memory.oom.group"; } 2>/dev/null  # kill the run whole
  else
    file="$dir/memory.limit_in_bytes"
    { echo "$want" > "$file"; } 2>/dev/null
    [[ -f "$dir/memory.memsw.limit_in_bytes" ]] && { echo "$want" > "$dir/memory.memsw.limit_in_bytes"; } 2>/dev/null
  fi
  got=$(cat "$file" 2>/dev/null)
  if [[ "$got" != "$want" ]]; then
    CG_WHY+="$file reads '$got' after writing $want; "; rmdir "$dir" 2>/dev/null; return 1
  fi
  return 0
}

# Inside the run's process (a fresh bash, exported): join CGDIR (empty: already placed, by
# systemd-run), check that this process's cgroup has the limit WANT, then exec the command.
limited_exec() {
  local cg="$1" want="$2" got; shift 2
  if [[ -n "$cg" ]] && ! { echo $BASHPID > "$cg/cgroup.procs"; } 2>/dev/null; then
    echo "e2e.sh: cannot join cgroup $cg: the run would have no memory limit" >&2; exit 125
  fi
  if [[ -n "$cg" ]] && ! grep -qx "$BASHPID" "$cg/cgroup.procs"; then
    echo "e2e.sh: this run (pid $BASHPID) is not in $cg/cgroup.procs: it would have no memory limit" >&2; exit 125
  fi
  if [[ "$CG_FS" == v1 ]]; then got=$(cat "$(cg_own)/memory.limit_in_bytes" 2>/dev/null); else got=$(cat "$(cg_own)/memory.max" 2>/dev/null); fi
  if [[ "$got" != "$want" ]]; then
    echo "e2e.sh: memory limit NOT in force: this run's cgroup $(cg_own) has limit '$got', expected $want" >&2; exit 125
  fi
  if [[ -z "$cg" ]]; then  # systemd scope: report its peak from inside (the scope goes with the run)
    local rc=0 peak=-1
    "$@" || rc=$?
    [[ -f "$(cg_own)/memory.peak" ]] && peak=$(cat "$(cg_own)/memory.peak")
    [[ -f "$(cg_own)/memory.max_usage_in_bytes" ]] && peak=$(cat "$(cg_own)/memory.max_usage_in_bytes")
    echo "$peak -1 -1" >&3 2>/dev/null || true
    exit $rc
  fi
  exec 3>&- "$@"
}
export -f limited_exec cg_own
export CG_FS V2_ROOT V1_MEM_ROOT

# cg_sweep DIR: removes the run cgroups (seer-e2e-PID-N, seer-e2e-probe-PID) that an earlier
# run of this script left in DIR when it was killed (its PID gone, no process inside); only
# those: every other cgroup is left alone.
cg_sweep() {
  local d pid
  for d in "$1"/seer-e2e-[0-9]*-[0-9]* "$1"/seer-e2e-probe-[0-9]*; do
    [[ -d "$d" ]] || continue
    pid="${d##*/seer-e2e-}"; pid="${pid#probe-}"; pid="${pid%%-*}"
    [[ "$pid" == "$$" ]] && continue
    kill -0 "$pid" 2>/dev/null && continue
    rmdir "$d" 2>/dev/null || true  # fails (EBUSY) while a process is inside
  done
}

# Picks how runs are limited (CG_KIND v2 | v1 | systemd | none) for BYTES; explains in CG_WHY.
cg_setup() {
  local bytes="$1" own cand probe
  CG_WHY=""
  if [[ "$CG_FS" == v2 ]]; then
    own=$(cg_own)
    local cands=("$own")  # this process's cgroup, else the root (exempt from the rule above)
    [[ "$own" != "$V2_ROOT" ]] && cands+=("$V2_ROOT")
    for cand in "${cands[@]}"; do
      probe="$cand/seer-e2e-probe-$$"
      if [[ ! -d "$cand" || ! -w "$cand" ]]; then
        if awk -v m="$V2_ROOT" '$2 == m && $3 == "cgroup2" && $4 ~ /(^|,)ro(,|$)/ {f = 1} END {exit !f}' /proc/mounts; then
          CG_WHY+="$cand: not writable (cgroup2 at $V2_ROOT is mounted read-only); "
        else
          CG_WHY+="$cand: not writable$([[ $EUID != 0 ]] && echo " (not root)"); "
        fi
        continue
      fi
      cg_sweep "$cand"
      cg2_enable "$cand" memory || continue
      if cg_make "$probe" "$bytes"; then rmdir "$probe"; CG_KIND=v2 CG_PARENT="$cand"; return 0; fi
    done
  elif [[ "$CG_FS" == v1 ]]; then
    own=$(cg_own)
    probe="$own/seer-e2e-probe-$$"
    cg_sweep "$own"
    if cg_make "$probe" "$bytes"; then rmdir "$probe"; CG_KIND=v1 CG_PARENT="$own"; return 0; fi
  else
    CG_WHY+="no memory controller mounted (cgroup v2 at '${V2_ROOT:-none}' without memory, no v1 memory hierarchy); "
  fi
  if command -v systemd-run >/dev/null 2>&1; then
    local want=$(( bytes / PAGE * PAGE ))
    if systemd-run --scope --quiet -p MemoryMax="$bytes" -p MemorySwapMax=0 \
         bash -c 'limited_exec "" "$1" true' _ "$want" >/dev/null 2>&1 3>/dev/null; then
      CG_KIND=systemd; return 0
    fi
    CG_WHY+="systemd-run --scope -p MemoryMax=$bytes did not give a verified limit; "
  else
    CG_WHY+="no systemd-run; "
  fi
  CG_KIND=none
  return 1
}

# cg_end_rest DIR: ends the processes still in the run cgroup DIR once the run's own process
# has exited (seen here: DataLoader workers of a peer whose main process was killed by the
# limit, or that hung on exit, lived on for many minutes holding ~300 MiB); only the run's
# descendants can be in DIR. Prints how many there were.
cg_end_rest() {
  local cg="$1" pid n=0 i
  for pid in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null && n=$((n + 1)); done
  for ((i = 0; i < 50; i++)); do [[ -z "$(cat "$cg/cgroup.procs" 2>/dev/null)" ]] && break; sleep 0.1; done
  echo "$n"
}

# Runs "$@" under the limit LIMIT_BYTES; prints "PEAK OOM_KILLS LEFTOVER" (bytes, count, processes
# of the run ended after it; -1 unknown) to fd 3.
run_limited() {
  local want=$(( LIMIT_BYTES / PAGE * PAGE ))
  case "$CG_KIND" in
    v1|v2)
      local cg="$CG_PARENT/seer-e2e-$$-$RANDOM" rc=0 peak=-1 ooms=-1 rest=0
      cg_make "$cg" "$LIMIT_BYTES" || { echo "e2e.sh: cannot set the limit for this run: $CG_WHY" >&2; echo "-1 -1 -1" >&3; return 125; }
      bash -c 'limited_exec "$@"' _ "$cg" "$want" "$@" || rc=$?
      rest=$(cg_end_rest "$cg")
      if [[ -f "$cg/memory.peak" ]]; then peak=$(cat "$cg/memory.peak");
      elif [[ -f "$cg/memory.max_usage_in_bytes" ]]; then peak=$(cat "$cg/memory.max_usage_in_bytes"); fi
      if [[ -f "$cg/memory.events" ]]; then ooms=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.events")
      elif [[ -f "$cg/memory.oom_control" ]]; then ooms=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control"); fi
      # Empty the group (page cache charged to it) before removing it.
      [[ -f "$cg/memory.force_empty" ]] && { echo 0 > "$cg/memory.force_empty"; } 2>/dev/null
      rmdir "$cg" 2>/dev/null || echo "e2e.sh: WARNING: could not remove $cg" >&2
      echo "$peak ${ooms:--1} $rest" >&3
      return $rc ;;
    systemd)
      systemd-run --scope --quiet -p MemoryMax="$LIMIT_BYTES" -p MemorySwapMax=0 \
        bash -c 'limited_exec "" "$@"' _ "$want" "$@" ;;
    *) echo "-1 -1 -1" >&3; "$@" ;;
  esac
}
# END memory-limit functions

if [[ $NO_LIMIT == 1 ]]; then
  LIMIT_DESC="no memory limit"
  echo "WARNING: --no-limit: NO MEMORY LIMIT; the mmap baselines may use the whole page cache and no result is"
  echo "WARNING: comparable to a limited run (every result line says 'no memory limit')."
elif cg_setup "$LIMIT_BYTES"; then
  trap cg_restore EXIT
  trap 'exit 143' TERM INT  # so that the EXIT trap runs when the script is stopped
  LIMIT_DESC="limit $LIMIT ($CG_KIND${CG_PARENT:+ under $CG_PARENT}, read back)"
else
  cg_restore
  # One line: what was tried and why each failed; --no-limit measures without (said everywhere).
  echo "e2e.sh: ERROR: no memory limit $LIMIT can be set, so no fair comparison (tried: ${CG_WHY%; }); run as root with a writable cgroup v2 or v1 memory tree or systemd-run, or pass --no-limit" >&2
  exit 3
fi

# --check-limit: show that the limit bites (a run allocating 256 MiB over it is killed, one at a
# quarter of it runs) and stop.
if [[ $CHECK_LIMIT == 1 ]]; then
  echo "e2e: $LIMIT_DESC"
  [[ $NO_LIMIT == 1 ]] && exit 0
  alloc='import sys; b = b"\x01" * int(sys.argv[1]); print(len(b) >> 20, "MiB touched")'
  small=$(( LIMIT_BYTES / 4 )) big=$(( LIMIT_BYTES + (256 << 20) )) rc_s=0 rc_b=0
  run_limited python3 -c "$alloc" "$small" 3> "$OUT/check-limit-small.peak" || rc_s=$?
  run_limited python3 -c "$alloc" "$big" > /dev/null 2>&1 3> "$OUT/check-limit-big.peak" || rc_b=$?
  read -r peak_s _ < "$OUT/check-limit-small.peak"; read -r peak_b ooms_b _ < "$OUT/check-limit-big.peak"
  echo "e2e: check: $(( small >> 20 )) MiB under the limit: exit $rc_s, cgroup peak $(( peak_s >> 20 )) MiB;" \
       "$(( big >> 20 )) MiB: exit $rc_b, cgroup peak $(( peak_b >> 20 )) MiB, oom kills $ooms_b"
  if [[ $rc_s == 0 && $rc_b != 0 ]]; then echo "e2e: memory limit $LIMIT is enforced"; exit 0; fi
  echo "e2e: ERROR: memory limit $LIMIT is NOT enforced as expected" >&2; exit 3
fi

# drop_caches DIR...: the page cache emptied before every run (each contender's epoch 1 is
# cold): `echo 1 > /proc/sys/vm/drop_caches` where permitted (root outside a container),
# else posix_fadvise(POSIX_FADV_DONTNEED) on every file under DIR (the dataset, and the
# peer's int64 copy of the indices): clean pages of those files leave the cache whoever
# read them. CACHE_DROP says which worked (drop_caches | fadvise | none); with fincore
# (util-linux) CACHE_LEFT is what stayed cached of DIR afterwards.
CACHE_DROP="" CACHE_LEFT=""
drop_caches() {
  local how=none
  sync
  if { echo 1 > /proc/sys/vm/drop_caches; } 2>/dev/null; then how=drop_caches
  elif python3 - "$@" <<'PY'
import os, sys
n = 0
for top in sys.argv[1:]:
    paths = [top] if os.path.isfile(top) else [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs]
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            n += 1
        finally:
            os.close(fd)
sys.exit(0 if n else 1)
PY
  then how=fadvise; fi
  if [[ "$how" != "$CACHE_DROP" ]]; then
    case "$how" in
      drop_caches) echo "e2e: page cache dropped before every run: echo 1 > /proc/sys/vm/drop_caches" ;;
      fadvise) echo "e2e: page cache: /proc/sys/vm/drop_caches not writable; posix_fadvise DONTNEED on the dataset files before every run" ;;
      *) echo "WARNING: cannot drop the page cache (drop_caches and fadvise both failed): runs after the first may read cached data" ;;
    esac
  fi
  CACHE_DROP="$how"
  CACHE_LEFT=""
  if command -v fincore >/dev/null 2>&1; then
    local f left=0
    for f in "$@"; do
      [[ -e "$f" ]] || continue
      left=$(( left + $(find "$f" -type f -exec fincore -b -n -o RES {} + 2>/dev/null | awk '{s += $1} END {print s + 0}') ))
    done
    CACHE_LEFT=$left
  fi
}

# ---- configuration and warnings ----------------------------------------------------------
echo "e2e: scale=$SCALE nodes=$NODES dims=[$DIMS] avg_degree=$AVG_DEGREE train_fraction=$TRAIN_FRACTION" \
     "fanouts=$FANOUTS batch=$BATCH superbatch=${SUPERBATCH:-auto} hidden=$HIDDEN epochs=$EPOCHS repeats=$REPEATS"
echo "e2e: memory: $LIMIT_DESC, --memory-budget $BUDGET; modes: $MODES; kinds: $KINDS"
[[ -n "$TRUNCATE" ]] && echo "e2e: modes starting with [$TRUNCATE_MODES] run their first $TRUNCATE batches only (epoch time extrapolated)"
echo "e2e: machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r)"
grep -q "CMAKE_BUILD_TYPE:STRING=Release" "$BUILD/CMakeCache.txt" 2>/dev/null || echo "WARNING: not a Release build"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | head -1 || echo "WARNING: no GPU: training runs on the CPU"
[[ "$(nproc)" -le 4 ]] && echo "WARNING: $(nproc) cores: sampling, gather and compute compete for the CPU"
# The peer's interpreter: PEER_PYTHON, else the first of python3, /usr/bin/python3 that has
# torch and numpy; what it has is printed (torch_geometric absent: plain-torch SAGEConv).
if [[ " $MODES " == *" pyg-peer "* ]]; then
  if [[ -z "${PEER_PYTHON:-}" ]]; then
    for py in python3 /usr/bin/python3; do
      "$py" -c 'import torch, numpy' >/dev/null 2>&1 && { PEER_PYTHON="$py"; break; }
    done
    [[ -n "${PEER_PYTHON:-}" ]] || { echo "e2e.sh: mode pyg-peer needs a python3 with torch and numpy (set PEER_PYTHON)" >&2; exit 2; }
  fi
  echo "e2e: pyg-peer: $PEER_PYTHON, $("$PEER_PYTHON" -c 'import importlib, torch
def v(m):
    try:
        return importlib.import_module(m).__version__
    except Exception:
        return "absent"
print("torch %s, torch_geometric %s, pyg_lib %s, torch_sparse %s" % (torch.__version__, v("torch_geometric"),
      v("pyg_lib"), v("torch_sparse")))' 2>&1 | tail -1)"
fi
LOAD=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$LOAD" -v n="$(nproc)" 'BEGIN { if (l > n / 2) print "WARNING: load average " l " at start: other work shares the machine" }'

# ---- table + summary ---------------------------------------------------------------------
# summarize quiet|print: OUT/summary.json from the runs so far (after every run, so that a
# harness that cuts this script at its time budget still finds the finished runs), and with
# "print" the full table and the short one (epoch 1, steady, Seer vs the peer, accuracy).
summarize() {
python3 - "$OUT/results.jsonl" "$OUT/ceiling.jsonl" "$OUT/summary.json" "$OUT/failed.jsonl" "$1" "$LIMIT_DESC" <<'PY'
import json, os, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
PRINT = sys.argv[5] == "print"
LIMIT_DESC = sys.argv[6]
failed = [json.loads(l) for l in open(sys.argv[4]) if l.strip()] if os.path.exists(sys.argv[4]) else []
ceil = {c["dim"]: c for c in (json.loads(l) for l in open(sys.argv[2]) if l.strip())}
groups = {}
for r in rows:
    groups.setdefault((r["dim"], r["kind"], r["mode"]), []).append(r)
def med(rs, f):  # None when a run did not measure it (truncated runs)
    v = [f(r) for r in rs]
    return None if any(x is None for x in v) else statistics.median(v)
summary = []
for (dim, kind, mode), rs in groups.items():
    b = lambda k: med(rs, lambda r: r["breakdown_s"][k] if r["breakdown_s"] else None)
    t = [r["epoch_s"] for r in rs]
    t1 = [r.get("first_epoch_s") for r in rs]
    io_wait = b("io_wait")
    reads = med(rs, lambda r: r["feature_ssd_reads"])
    ceiling = ceil.get(dim, {}).get("uring_qd64_iops", 0)
    trunc = {}
    if any(r.get("truncated_batches") for r in rs):
        trunc = {"truncated_batches": min(r.get("truncated_batches") or 0 for r in rs),
                 "first_batch_s_median": med(rs, lambda r: r.get("first_batch_s")),
                 "steady_batch_s_median": med(rs, lambda r: r.get("steady_batch_s"))}
    limits = sorted({r.get("memory_limit", "?") for r in rs})
    summary.append({"dim": dim, "kind": kind, "mode": mode, "runs": len(rs), "epoch_s_median": statistics.median(t),
                    "epoch_s_min": min(t), "epoch_s_max": max(t),
                    # epoch_s_* = the steady epoch (median of epochs 2..n); first_epoch_s_* = epoch 1 (cold)
                    "steady_epochs": rs[0].get("steady_epochs"),
                    "first_epoch_s_median": None if None in t1 else statistics.median(t1),
                    "first_epoch_s_min": None if None in t1 else min(t1),
                    "first_epoch_s_max": None if None in t1 else max(t1),
                    "memory_limit": limits[0] if len(limits) == 1 else ",".join(limits),
                    "budget_bytes": rs[0].get("budget_bytes"),
                    "peak_rss_bytes_max": max((r.get("peak_rss_bytes") or -1) for r in rs),
                    "test_accuracy_median": med(rs, lambda r: r.get("test_accuracy")),
                    "oom_kills": max((r.get("oom_kills") or 0) for r in rs),
                    "sampler": rs[0].get("sampler"), "model_impl": rs[0].get("model_impl"),
                    "loader_workers": rs[0].get("loader_workers"), "prefetch_factor": rs[0].get("prefetch_factor"),
                    "cache_drop": ",".join(sorted({r.get("cache_drop") or "?" for r in rs})), **trunc,
                    "breakdown_s": {k: b(k) for k in ("inspect", "plan", "gather", "io_wait", "cache_update",
                                                      "transfer", "compute", "stall")},
                    "feature_ssd_reads": reads, "feature_ssd_bytes": med(rs, lambda r: r["feature_ssd_bytes"]),
                    "topology_ssd_reads": med(rs, lambda r: r["topology_ssd_reads"]),
                    "fcache_hit_ratio": med(rs, lambda r: r["fcache_hit_ratio"]),
                    "ncache_hit_ratio": med(rs, lambda r: r["ncache_hit_ratio"]),
                    "cgroup_peak_bytes": max(r["cgroup_peak_bytes"] for r in rs),
                    "cpu_s_median": med(rs, lambda r: r.get("cpu_s")),
                    "fs_write_bytes_median": med(rs, lambda r: r.get("fs_write_bytes")),
                    "miss_reads_per_s_in_io_wait": reads / io_wait if io_wait and reads is not None else None,
                    "io_efficiency": (reads / io_wait / ceiling) if io_wait and ceiling > 0 and reads is not None and
                                     reads >= 0 else None,
                    "ceiling_iops": ceiling})
# ali+pg = its best split per (dim, kind); seer-best = the best of seer (auto split) and
# any swept seer:NC:FC splits, so seer is also reported "at its best settings".
for dim, kind in {(s["dim"], s["kind"]) for s in summary}:
    for prefixes, name, extra in ((("ali+pg:",), "ali+pg", ()), (("seer:", "seer@"), "seer-best", ("seer",))):
        cands = [s for s in summary if s["dim"] == dim and s["kind"] == kind and
                 (s["mode"].startswith(prefixes) or s["mode"] in extra)]
        if cands and (name == "ali+pg" or any(s["mode"].startswith(prefixes) for s in cands)):
            best = dict(min(cands, key=lambda s: s["epoch_s_median"]))
            best["best_split"] = (best["mode"][len("ali+pg:"):] if name == "ali+pg" else
                                  "auto" if best["mode"] == "seer" else best["mode"])
            best["mode"] = name
            summary.append(best)
def ratio(a, b):
    return a / b if a is not None and b is not None and b > 0 else None
for s in summary:
    same = [p for p in summary if p["dim"] == s["dim"] and p["kind"] == s["kind"]]
    steady = {p["mode"]: p["epoch_s_median"] for p in same}
    cold = {p["mode"]: p["first_epoch_s_median"] for p in same}
    for base in ("pyg+", "ali+pg", "pyg-peer"):  # > 1: this mode is faster than the base
        s["speedup_vs_" + base] = ratio(steady.get(base), s["epoch_s_median"])
        s["first_epoch_speedup_vs_" + base] = ratio(cold.get(base), s["first_epoch_s_median"])
order = {"pyg-peer": -1, "pyg+": 0, "ali+pg": 2, "seer": 3, "seer-best": 4, "seer-pg": 5, "seer-presc": 6, "seer-lru": 7}
rank = lambda m: order.get(m, 1 if m.startswith("ali+pg:") else 3.5 if m.startswith(("seer:", "seer@")) else 8)
summary.sort(key=lambda s: (s["dim"], s["kind"] != "no-train", rank(s["mode"]), s["mode"]))
json.dump({"ceiling": list(ceil.values()), "modes": summary, "failed": failed}, open(sys.argv[3], "w"), indent=1)
if not PRINT:
    sys.exit(0)
fmt = lambda x, f="{:.2f}": "-" if x is None else f.format(x)
pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"
cold_steady = lambda s, base: (f"{fmt(s['first_epoch_speedup_vs_' + base])}x / {fmt(s['speedup_vs_' + base])}x"
                               if s["speedup_vs_" + base] is not None else "-")
has_peer = any(s["mode"] == "pyg-peer" for s in summary)
print("| dim | kind | mode | epoch 1 s | steady epoch s median (min-max) | inspect | plan | gather | I/O wait | compute | stall |"
      " feature reads | feature MiB | topo reads | fcache hit | ncache hit | cgroup peak MiB | peak RSS MiB | CPU s/run |"
      " vs pyg+ (ep1 / steady) | vs ali+pg |" + (" vs pyg-peer (ep1 / steady) |" if has_peer else "") + " I/O eff | limit |")
print("|" + "---|" * (23 + has_peer))
for s in summary:
    b = s["breakdown_s"]
    mode = s["mode"] + (f" (best {s['best_split']})" if "best_split" in s else "")
    if s.get("truncated_batches"): mode += f" [extrapolated from {s['truncated_batches']} batches]"
    mib = None if s["feature_ssd_bytes"] is None or s["feature_ssd_bytes"] < 0 else s["feature_ssd_bytes"] / 2**20
    rss = s.get("peak_rss_bytes_max", -1)
    limit = "NO LIMIT" if s.get("memory_limit") == "none" else s.get("memory_limit", "?")
    print(f"| {s['dim']} | {s['kind']} | {mode} | {fmt(s.get('first_epoch_s_median'))} | "
          f"{s['epoch_s_median']:.2f} ({s['epoch_s_min']:.2f}-{s['epoch_s_max']:.2f}) | "
          f"{fmt(b['inspect'])} | {fmt(b['plan'])} | {fmt(b['gather'])} | {fmt(b['io_wait'])} | {fmt(b['compute'])} | "
          f"{fmt(b['stall'])} | {fmt(s['feature_ssd_reads'], '{:.0f}')} | {fmt(mib, '{:.0f}')} | "
          f"{fmt(s['topology_ssd_reads'], '{:.0f}')} | {pct(s['fcache_hit_ratio'])} | {pct(s['ncache_hit_ratio'])} | "
          f"{s['cgroup_peak_bytes'] / 2**20 if s['cgroup_peak_bytes'] > 0 else -1:.0f} | "
          f"{rss / 2**20 if rss and rss > 0 else -1:.0f} | {fmt(s['cpu_s_median'], '{:.0f}')} | "
          f"{cold_steady(s, 'pyg+')} | {fmt(s['speedup_vs_ali+pg'])}x |" +
          (f" {cold_steady(s, 'pyg-peer')} |" if has_peer else "") + f" {fmt(s['io_efficiency'])} | {limit} |")
for s in summary:
    if s.get("truncated_batches") and "best_split" not in s:
        print(f"{s['kind']} {s['mode']}: EXTRAPOLATED epoch = steady {s['steady_batch_s_median']:.3f} s/batch (median; "
              f"batches {max(1, s['truncated_batches'] // 4) + 1}-{s['truncated_batches']} of epoch 1) x the epoch's "
              f"batches; first batch (process start to batch 1 done) {s['first_batch_s_median']:.2f} s")
for c in ceil.values():
    print(f"ceiling (dim {c['dim']}): io_uring QD 64 {c['uring_qd64_iops']:.0f} reads/s, pread x64 {c['pread64_iops']:.0f} reads/s")
for f in failed:
    print(f"{'SKIPPED' if f.get('skipped') else 'FAILED'}: {f['run']} ({f['why']}){': ' + f['last_line'] if f['last_line'] else ''}")
if any(s.get("memory_limit") == "none" for s in summary):
    print("NOTE: rows marked NO LIMIT ran with no memory limit (--no-limit): not comparable to limited runs")
print(f"wrote {sys.argv[3]}")

# The short table: per (dim, kind), epoch 1 (cold) and the steady epoch (median of epochs
# 2..n) of every mode, then Seer against the PyG peer (else pyg+): time ratios both ways
# and the accuracy difference. Every line names its memory limit ("no limit" when none).
print()
print("e2e SUMMARY (%s)" % LIMIT_DESC)
for dim, kind in sorted({(s["dim"], s["kind"]) for s in summary + failed}, key=lambda k: (k[0], k[1] != "no-train")):
    same = [s for s in summary if s["dim"] == dim and s["kind"] == kind and "best_split" not in s]
    lim = lambda s: "no limit" if s.get("memory_limit") == "none" else "limit " + str(s.get("memory_limit"))
    print(f"dim {dim}, {kind}: mode | epoch 1 s | steady s (epochs {same[0].get('steady_epochs') if same else '-'}) | "
          f"test acc | peak RSS / budget MiB | cgroup peak MiB | page cache dropped by | limit")
    for s in same:
        rss, bud = s.get("peak_rss_bytes_max") or -1, s.get("budget_bytes")
        print(f"  {s['mode']:<10} | {fmt(s.get('first_epoch_s_median')):>7} | {s['epoch_s_median']:7.2f} | "
              f"{fmt(s.get('test_accuracy_median') if (s.get('test_accuracy_median') or 0) >= 0 else None, '{:.4f}'):>6} | "
              f"{fmt(rss / 2**20 if rss > 0 else None, '{:.0f}')} / {fmt(bud / 2**20 if bud else None, '{:.0f}')} | "
              f"{fmt(s['cgroup_peak_bytes'] / 2**20 if s['cgroup_peak_bytes'] > 0 else None, '{:.0f}')} | "
              f"{s.get('cache_drop')} | {lim(s)}")
    for f in failed:
        if f["dim"] == dim and f["kind"] == kind:
            print(f"  {f['mode']:<10} | {'SKIPPED' if f.get('skipped') else 'FAILED'}: {f['why']}")
    seer = next((s for s in same if s["mode"] == "seer"), None)
    for base in ("pyg-peer", "pyg+"):
        other = next((s for s in same if s["mode"] == base), None)
        if not seer or not other:
            continue
        parts = []
        for what, a, b in (("epoch 1", seer.get("first_epoch_s_median"), other.get("first_epoch_s_median")),
                           ("steady", seer["epoch_s_median"], other["epoch_s_median"])):
            parts.append(f"{what}: Seer/{base} time {fmt(ratio(a, b))} (speed-up {fmt(ratio(b, a))}x)")
        acc_s, acc_o = seer.get("test_accuracy_median"), other.get("test_accuracy_median")
        acc = (f"accuracy Seer {acc_s:.4f} vs {base} {acc_o:.4f} ({100 * (acc_s - acc_o):+.2f} points)"
               if acc_s is not None and acc_o is not None and acc_s >= 0 and acc_o >= 0 else "accuracy -")
        print(f"  Seer vs {base}: " + "; ".join(parts) + f"; {acc}; {lim(seer)}")
        if base == "pyg-peer":
            print(f"  {base}: sampler {other.get('sampler')}; model {other.get('model_impl')}; "
                  f"{other.get('loader_workers')} loader workers, prefetch factor {other.get('prefetch_factor')}")
PY
}

# --append: add these modes' runs to an earlier run in the same OUT (same scale and knobs);
# the table and ratios are then computed over all of them.
if [[ $APPEND == 0 ]]; then
  : > "$OUT/results.jsonl"
  : > "$OUT/ceiling.jsonl"
  : > "$OUT/failed.jsonl"
else
  touch "$OUT/results.jsonl" "$OUT/ceiling.jsonl" "$OUT/failed.jsonl"
fi
BASE_LIMIT="$LIMIT" BASE_BUDGET="$BUDGET"
for DIM in $DIMS; do
  lv="LIMIT_$DIM" bv="BUDGET_$DIM"
  LIMIT="${!lv:-$BASE_LIMIT}" BUDGET="${!bv:-$BASE_BUDGET}"
  LIMIT_BYTES=$(to_bytes "$LIMIT")
  [[ $NO_LIMIT == 1 ]] && echo "e2e: dim $DIM: NO memory limit, --memory-budget $BUDGET" ||
    echo "e2e: dim $DIM: memory limit $LIMIT, --memory-budget $BUDGET"
  DATA="$OUT/graph-n$NODES-d$DIM"
  if ! "$SEER" check "$DATA" >/dev/null 2>&1; then
    echo "e2e: generating $DATA"
    "$SEER" gen --nodes "$NODES" --avg-degree "$AVG_DEGREE" --feature-dim "$DIM" --train-fraction "$TRAIN_FRACTION" \
      --valid-fraction "${VALID_FRACTION:-0.002}" --test-fraction "${TEST_FRACTION:-0.002}" --seed 1 --out "$DATA" --force --quiet
  fi
  DATA_BYTES=$(du -sbL --exclude=ncache "$DATA" | cut -f1)
  echo "e2e: dataset $DATA: $(numfmt --to=iec "$DATA_BYTES") ($(awk -v d="$DATA_BYTES" -v l="$LIMIT_BYTES" 'BEGIN {printf "%.1f", d/l}')x the limit)"
  awk -v d="$DATA_BYTES" -v l="$LIMIT_BYTES" 'BEGIN { if (d <= l) print "WARNING: the dataset fits in the memory limit" }'

  # Storage ceiling: random reads/s at QD 64 on features.bin (O_DIRECT io_uring).
  FEATURES="$DATA/features.bin"
  if [[ $APPEND == 1 ]] && grep -q "\"dim\": $DIM," "$OUT/ceiling.jsonl"; then
    echo "e2e: --append: keeping the storage ceiling measured for dim $DIM"
  elif [[ -x "$CEILING_BENCH" ]]; then
    drop_caches "$DATA"
    "$CEILING_BENCH" --file "$FEATURES" --size "$(stat -c %s "$FEATURES")" --qd 64 --threads 64 --seconds 5 \
      --json "$OUT/ceiling-d$DIM.json" > "$OUT/ceiling-d$DIM.out" 2>&1 || echo "WARNING: direct_reader_bench failed (see $OUT/ceiling-d$DIM.out)"
    grep WARNING "$OUT/ceiling-d$DIM.out" || true
    python3 - "$DIM" "$OUT/ceiling-d$DIM.json" >> "$OUT/ceiling.jsonl" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[2]))
pts = {p["backend"]: p for p in d["points"]}
print(json.dumps({"dim": int(sys.argv[1]), "uring_qd64_iops": pts.get("uring", {}).get("iops", 0),
                  "pread64_iops": pts.get("pread", {}).get("iops", 0)}))
PY
  else
    echo "WARNING: no $CEILING_BENCH (cmake --build $BUILD --target direct_reader_bench): no I/O efficiency"
  fi

  # Repeats are the outer loop: every mode runs once before any runs again, so load from
  # other work on the machine spreads over the modes instead of hitting one.
  for KIND in $KINDS; do
   for ((rep = 1; rep <= REPEATS; rep++)); do
    for MODE in $MODES; do
      case "$MODE" in
        pyg+) FLAGS=(--preset pyg+) ;;
        ali+pg:*) FLAGS=(--preset ali+pg --cache-split "${MODE#ali+pg:}") ;;
        seer) FLAGS=(--preset seer) ;;
        seer:*) FLAGS=(--preset seer --cache-split "${MODE#seer:}") ;;
        seer@*) sb_split="${MODE#seer@}"  # seer@S or seer@S:NC:FC: superbatch S (and a split)
                FLAGS=(--preset seer --superbatch "${sb_split%%:*}")
                [[ "$sb_split" == *:* ]] && FLAGS+=(--cache-split "${sb_split#*:}") ;;
        seer-pg) FLAGS=(--preset seer --feature-cache static-degree) ;;
        seer-presc) FLAGS=(--preset seer --feature-cache presc) ;;
        seer-lru) FLAGS=(--preset seer --feature-cache lru) ;;
        pyg-peer) FLAGS=() ;;  # bench/pyg_peer.py: PyTorch Geometric on the same files
        *) echo "e2e.sh: unknown mode '$MODE'" >&2; exit 2 ;;
      esac
      if [[ "$KIND" == no-train ]]; then FLAGS+=(--no-train); else FLAGS+=(--hidden "$HIDDEN"); fi
      if [[ "$MODE" == pyg-peer ]]; then
        CMD=("${PEER_PYTHON:-python3}" "$(dirname "$0")/pyg_peer.py" "$DATA" "${FLAGS[@]}" --fanouts "$FANOUTS" --batch-size "$BATCH"
             --epochs "$EPOCHS" --seed 1)
        [[ -n "${PEER_WORKERS:-}" ]] && CMD+=(--workers "$PEER_WORKERS")
        [[ -n "${PEER_PREFETCH:-}" ]] && CMD+=(--prefetch-factor "$PEER_PREFETCH")
      else
        CMD=("$SEER" train "$DATA" "${FLAGS[@]}" --memory-budget "$BUDGET" --fanouts "$FANOUTS" --batch-size "$BATCH"
             --epochs "$EPOCHS" --eval-every 0 --seed 1)
        [[ "$MODE" == seer@* || -z "$SUPERBATCH" ]] || CMD+=(--superbatch "$SUPERBATCH")
      fi
        TRUNC=0
        if [[ -n "$TRUNCATE" && "$MODE" != pyg-peer ]]; then
          for t in $TRUNCATE_MODES; do [[ "$MODE" == "$t"* ]] && TRUNC="$TRUNCATE"; done
        fi
        [[ $TRUNC == 0 ]] || CMD+=(--prefetch "$PREFETCH" --stop-after $(( (TRUNC + PREFETCH - 1) / PREFETCH ))
                                   --progress-interval 0)
        name="d$DIM-$KIND-${MODE//[:+]/_}-r$rep"
        # E2E_DEADLINE (unix seconds, set by gpu.sh): a run that would not finish by then (the
        # longest run so far, else 60 s) is skipped and listed as such, not started and cut.
        if [[ -n "${E2E_DEADLINE:-}" ]] && (( E2E_DEADLINE - $(date +%s) < ${LONGEST_RUN_S:-60} )); then
          why="not started: $(( E2E_DEADLINE - $(date +%s) )) s left before E2E_DEADLINE, a run takes ~${LONGEST_RUN_S:-60} s"
          echo "e2e: $name SKIPPED ($why)"
          python3 -c 'import json, sys; print(json.dumps({"run": sys.argv[1], "dim": int(sys.argv[2]), "kind": sys.argv[3],
  "mode": sys.argv[4], "rep": int(sys.argv[5]), "exit": None, "oom_kills": 0, "memory_limit": sys.argv[6], "why": sys.argv[7],
  "last_line": "", "skipped": True}))' "$name" "$DIM" "$KIND" "$MODE" "$rep" \
            "$([[ $NO_LIMIT == 1 ]] && echo none || echo "$LIMIT")" "$why" >> "$OUT/failed.jsonl"
          summarize quiet || true
          continue
        fi
        rm -f "$OUT/$name.cpu"
        [[ -x /usr/bin/time ]] && CMD=(/usr/bin/time -f "%U %S %O" -o "$OUT/$name.cpu" "${CMD[@]}")
        # A peer killed by the limit runs once more with PEER_RETRY_WORKERS loader workers
        # (default a quarter of its first count, at least 1; 0 = no retry; each worker holds
        # its batches in flight): its best chance under the same limit.
        PEER_WORKERS_USED="${PEER_WORKERS:-$(( $(nproc) < 8 ? $(nproc) : 8 ))}"
        : "${PEER_RETRY_WORKERS:=$(( PEER_WORKERS_USED / 4 > 0 ? PEER_WORKERS_USED / 4 : 1 ))}"
        attempt=1
        while :; do
          drop_caches "$DATA" "$DATA.pyg-indices64.bin"
          echo "$CACHE_DROP ${CACHE_LEFT:--1}" > "$OUT/$name.drop"
          start=$(date +%s.%N)
          rc=0
          if [[ $TRUNC == 0 ]]; then
            run_limited "${CMD[@]}" --metrics "$OUT/$name.jsonl" > "$OUT/$name.out" 2> "$OUT/$name.err" \
              3> "$OUT/$name.peak" || rc=$?
          else  # stderr timestamped line by line (wall seconds, then the line)
            run_limited "${CMD[@]}" --metrics "$OUT/$name.jsonl" 2>&1 > "$OUT/$name.out" 3> "$OUT/$name.peak" |
              python3 -u -c 'import sys, time
for l in iter(sys.stdin.readline, ""): sys.stdout.write("%.3f %s" % (time.time(), l)); sys.stdout.flush()' \
              > "$OUT/$name.err" || rc=$?
          fi
          end=$(date +%s.%N)
          read -r PEAK OOMS REST < "$OUT/$name.peak" || { PEAK=-1 OOMS=-1 REST=-1; }
          [[ "${REST:-0}" -gt 0 ]] && echo "e2e: WARNING: $name left $REST process(es) in its cgroup after it exited: ended (kill -9)"
          if [[ $rc != 0 && "$MODE" == pyg-peer && "${OOMS:--1}" -gt 0 && $attempt == 1 &&
                "$PEER_RETRY_WORKERS" != 0 ]]; then
            echo "e2e: $name: the peer was KILLED BY THE MEMORY LIMIT $LIMIT with $PEER_WORKERS_USED loader" \
                 "workers; once more with --workers $PEER_RETRY_WORKERS"
            CMD+=(--workers "$PEER_RETRY_WORKERS")  # the last --workers counts
            attempt=2
            continue
          fi
          break
        done
        run_s=$(python3 -c 'import sys; print(int(float(sys.argv[2]) - float(sys.argv[1]) + 0.999))' "$start" "$end")
        (( run_s > ${LONGEST_RUN_S:-0} )) && LONGEST_RUN_S=$run_s
        if [[ $rc != 0 ]]; then
          why="exit $rc"
          [[ "${OOMS:--1}" -gt 0 ]] && why="KILLED BY THE MEMORY LIMIT $LIMIT (oom_kill $OOMS, exit $rc)"
          echo "e2e: $name FAILED ($why; $OUT/$name.err): $(tail -1 "$OUT/$name.err")"
          python3 -c 'import json, sys; print(json.dumps({"run": sys.argv[1], "dim": int(sys.argv[2]), "kind": sys.argv[3],
  "mode": sys.argv[4], "rep": int(sys.argv[5]), "exit": int(sys.argv[6]), "oom_kills": int(sys.argv[7]),
  "memory_limit": sys.argv[8], "why": sys.argv[9], "last_line": sys.argv[10]}))' "$name" "$DIM" "$KIND" "$MODE" "$rep" \
            "$rc" "${OOMS:--1}" "$([[ $NO_LIMIT == 1 ]] && echo none || echo "$LIMIT")" "$why" \
            "$(tail -1 "$OUT/$name.err" | cut -c1-300)" >> "$OUT/failed.jsonl"
          summarize quiet || true
          continue
        fi
        python3 - "$name" "$DIM" "$KIND" "$MODE" "$rep" "$OUT/$name.jsonl" "$PEAK" \
          "$start" "$end" "$TRUNC" "$OUT/$name.err" "$OUT/$name.cpu" "${OOMS:--1}" \
          "$([[ $NO_LIMIT == 1 ]] && echo none || echo "$LIMIT")" "$LIMIT_BYTES" "$(to_bytes "$BUDGET")" \
          "$OUT/$name.drop" >> "$OUT/results.jsonl" <<'PY' || { echo "e2e: $name: metrics unreadable (above): not tabulated"; continue; }
import json, os, re, statistics, sys
(name, dim, kind, mode, rep, path, peak, start, end, trunc, err, cpu_path, ooms, limit, limit_bytes,
 budget, drop) = sys.argv[1:]
# What every line carries: the limit it ran under ("none": --no-limit), the budget given to
# seer train (the peer has none), the whole process's peak RSS (the final metrics line).
common = {"memory_limit": limit, "limit_bytes": int(limit_bytes) if limit != "none" else None,
          "budget_bytes": None if mode == "pyg-peer" else int(budget), "oom_kills": int(ooms)}
cpu = {"cpu_s": None, "fs_write_bytes": None}
if os.path.exists(cpu_path):
    f = open(cpu_path).read().split()
    if len(f) >= 3:
        cpu = {"cpu_s": float(f[-3]) + float(f[-2]), "fs_write_bytes": int(f[-1]) * 512}
lines = [json.loads(l) for l in open(path)]
st = [l for l in lines if l["type"] == "start"][0]
ep = [l for l in lines if l["type"] == "epoch"]
fin = ([l for l in lines if l["type"] == "final"] or [{}])[0]
common.update({"peak_rss_bytes": fin.get("peak_rss_bytes", -1), "test_accuracy": fin.get("test_accuracy"),
               "sampler": st.get("sampler"), "model_impl": st.get("model_impl"),
               "loader_workers": st.get("loader_workers"), "prefetch_factor": st.get("prefetch_factor")})
# How the page cache was emptied before the run, and what of the dataset stayed cached (bytes).
how, left = (open(drop).read().split() + ["none", "-1"])[:2]
common.update({"cache_drop": how, "cache_left_bytes": int(left) if int(left) >= 0 else None})
if int(trunc) > 0:
    # "TIME epoch 1/2 sb s/S batch k/B | ... | fcache hit H%": batch k done at TIME.
    done, total, hit = {}, 0, None
    for l in open(err):
        m = re.match(r"([0-9.]+) epoch 1/\d+ sb \d+/\d+ batch (\d+)/(\d+) .*fcache hit ([0-9.]+)%", l)
        if m:
            done[int(m.group(2))] = float(m.group(1))
            total, hit = int(m.group(3)), float(m.group(4)) / 100
    n = max(done) if done else 0
    k0 = max(1, n // 4)
    if n - k0 < 2 or any(k not in done for k in (1, k0, n)):
        sys.exit("e2e: %s: too few timed batches (%d) in %s" % (name, n, err))
    per_batch = (done[n] - done[k0]) / (n - k0)
    print(json.dumps({"run": name, "dim": int(dim), "kind": kind, "mode": mode, "rep": int(rep),
                      "wall_s": float(end) - float(start), "epoch_s": per_batch * total, "first_epoch_s": None,
                      "truncated_batches": n, "steady_from_batch": k0 + 1, "batches_per_epoch": total,
                      "steady_batch_s": per_batch, "first_batch_s": done[1] - float(start),
                      "breakdown_s": None, "seeds": None, "fcache_hit_ratio": hit, "ncache_hit_ratio": None,
                      "fcache_fill_rows": None, "feature_ssd_reads": None, "feature_ssd_bytes": None,
                      "topology_ssd_reads": None, "topology_ssd_bytes": None, "train_loss": None,
                      "cgroup_peak_bytes": int(peak), **cpu,
                      "split": {k: st[k] for k in ("ncache_bytes", "fcache_bytes", "fcache_rows", "staging_bytes",
                                                     "trace_bytes", "table_bytes")},
                      "pipeline": st.get("pipeline"), "io": st.get("io"), "policy": st.get("policy"),
                      "superbatch": st.get("batches_per_superbatch"), "superbatch_reason": st.get("superbatch_reason"),
                      "warnings": st.get("warnings", []), **common}))
    sys.exit(0)
e = ep[-1]
s = e["seconds"]
epochs = [x["seconds"]["epoch"] - x["seconds"]["eval"] for x in ep]  # without evaluation
# epoch 1 = cold; the steady epoch = the median of epochs 2..n (epoch 1 alone when n = 1).
steady = statistics.median(epochs[1:]) if len(epochs) > 1 else epochs[0]
print(json.dumps({"run": name, "dim": int(dim), "kind": kind, "mode": mode, "rep": int(rep),
                  "wall_s": float(end) - float(start), "epoch_s": steady,
                  "steady_epochs": "2..%d" % len(epochs) if len(epochs) > 2 else str(len(epochs)),
                  "first_epoch_s": epochs[0], "epochs_s": epochs,
                  "breakdown_s": s, "seeds": e["seeds"], "fcache_hit_ratio": e["fcache_hit_ratio"],
                  "ncache_hit_ratio": e["ncache_hit_ratio"], "fcache_fill_rows": e["fcache_fill_rows"],
                  "feature_ssd_reads": e["feature_ssd_reads"], "feature_ssd_bytes": e["feature_ssd_bytes"],
                  "topology_ssd_reads": e["topology_ssd_reads"], "topology_ssd_bytes": e["topology_ssd_bytes"],
                  "train_loss": e["train_loss"], "cgroup_peak_bytes": int(peak), **cpu,
                  "split": {k: st[k] for k in ("ncache_bytes", "fcache_bytes", "fcache_rows", "staging_bytes",
                                                 "trace_bytes", "table_bytes")},
                  "pipeline": st.get("pipeline"), "io": st.get("io"), "policy": st.get("policy"),
                  "superbatch": st.get("batches_per_superbatch"), "superbatch_reason": st.get("superbatch_reason"),
                  "warnings": st.get("warnings", []), **common}))
PY
        tail -1 "$OUT/results.jsonl" | python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
if r.get("truncated_batches"):
    print("e2e: %s: first %d batches: first batch %.2f s, steady %.3f s/batch (batches %d-%d) -> epoch %.2f s"
          " EXTRAPOLATED (%d batches), fcache hit %.1f%%, cgroup peak %d MiB, %s" % (
        r["run"], r["truncated_batches"], r["first_batch_s"], r["steady_batch_s"], r["steady_from_batch"],
        r["truncated_batches"], r["epoch_s"], r["batches_per_epoch"], 100 * r["fcache_hit_ratio"],
        r["cgroup_peak_bytes"] >> 20, "NO MEMORY LIMIT" if r["memory_limit"] == "none" else "limit " + r["memory_limit"]))
else:
    print("e2e: %s: epoch 1 %.2f s, steady (epoch %s%s) %.2f s, fcache hit %.1f%%, ncache hit %.1f%%, feature reads %d,"
          " cgroup peak %d MiB, peak RSS %d MiB%s, test acc %s, %s, page cache: %s%s" % (
        r["run"], r["first_epoch_s"], r["steady_epochs"], ", median" if ".." in r["steady_epochs"] else "", r["epoch_s"],
        100 * r["fcache_hit_ratio"], 100 * r["ncache_hit_ratio"], r["feature_ssd_reads"], r["cgroup_peak_bytes"] >> 20,
        r["peak_rss_bytes"] >> 20, "" if r["budget_bytes"] is None else " (budget %d MiB)" % (r["budget_bytes"] >> 20),
        "-" if r["test_accuracy"] is None or r["test_accuracy"] < 0 else "%.4f" % r["test_accuracy"],
        "NO MEMORY LIMIT" if r["memory_limit"] == "none" else "limit " + r["memory_limit"], r["cache_drop"],
        "" if r["cache_left_bytes"] is None else " (%d MiB of the dataset left cached)" % (r["cache_left_bytes"] >> 20)))'
        summarize quiet || true
    done
   done
  done
done

# ---- Belady misses vs seer stats (issue 6) --------------------------------------------------
# The seer run's feature-cache misses (all epochs, fill excluded) against `seer stats` on a
# trace of the same settings: superbatch scope (what training plans: must be equal) and
# trace scope (the lower bound: <=). stats holds the whole trace in RAM, so the large scale
# skips it unless BELADY_CHECK=1.
: "${BELADY_CHECK:=$([[ "$SCALE" == large ]] && echo 0 || echo 1)}"
[[ $APPEND == 1 && "$BELADY_CHECK" == 0 ]] || : > "$OUT/belady.jsonl"
for DIM in $DIMS; do
  DATA="$OUT/graph-n$NODES-d$DIM"
  METRICS=""
  for k in no-train train; do  # a run that succeeded this time (in results.jsonl), not a stale file
    grep -qF "\"run\": \"d$DIM-$k-seer-r1\"" "$OUT/results.jsonl" && { METRICS="$OUT/d$DIM-$k-seer-r1.jsonl"; break; }
  done
  [[ "$BELADY_CHECK" == 1 && -n "$METRICS" ]] || { echo "e2e: Belady check skipped for dim $DIM (BELADY_CHECK=$BELADY_CHECK, metrics '${METRICS}')"; continue; }
  if [[ -n "${E2E_DEADLINE:-}" ]] && (( E2E_DEADLINE - $(date +%s) < 60 )); then
    echo "e2e: Belady check skipped for dim $DIM: $(( E2E_DEADLINE - $(date +%s) )) s left before E2E_DEADLINE"; continue
  fi
  # The run's S (auto unless SUPERBATCH is set) from its start line.
  read -r ROWS TRAIN_MISSES RUN_SB < <(python3 -c 'import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
ep = [l for l in ls if l["type"] == "epoch"]
st = [l for l in ls if l["type"] == "start"][0]
print(st["fcache_rows"], sum(e["fcache_accesses"] - e["fcache_hits"] for e in ep), st["batches_per_superbatch"])' "$METRICS")
  "$SEER" sample "$DATA" --out "$OUT/trace-d$DIM" --fanouts "$FANOUTS" --batch-size "$BATCH" --superbatch "$RUN_SB" \
    --epochs "$EPOCHS" --seed 1 --force --quiet > "$OUT/trace-d$DIM.out" 2>&1 ||
    { echo "WARNING: seer sample failed (see $OUT/trace-d$DIM.out): no Belady check"; continue; }
  rm -f "$OUT/stats-d$DIM-superbatch.json" "$OUT/stats-d$DIM-trace.json"
  for SCOPE in superbatch trace; do
    "$SEER" stats "$DATA" --trace "$OUT/trace-d$DIM" --policies belady --capacities "$ROWS" --belady-scope "$SCOPE" \
      --json "$OUT/stats-d$DIM-$SCOPE.json" > "$OUT/stats-d$DIM-$SCOPE.out" 2>&1 ||
      echo "WARNING: seer stats failed (see $OUT/stats-d$DIM-$SCOPE.out)"
  done
  [[ -f "$OUT/stats-d$DIM-superbatch.json" && -f "$OUT/stats-d$DIM-trace.json" ]] || continue
  python3 - "$DIM" "$ROWS" "$TRAIN_MISSES" "$OUT/stats-d$DIM-superbatch.json" "$OUT/stats-d$DIM-trace.json" \
    >> "$OUT/belady.jsonl" <<'PY'
import json, sys
dim, rows, train = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sb, tr = (json.load(open(p))["results"][0]["misses"] for p in sys.argv[4:6])
print(json.dumps({"dim": dim, "fcache_rows": rows, "train_misses": train, "stats_superbatch_misses": sb,
                  "trace_lower_bound_misses": tr, "equal": train == sb, "above_lower_bound": train >= tr}))
PY
  tail -1 "$OUT/belady.jsonl" | python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print("Belady misses (dim %d, %d rows): train %d, stats superbatch-scope %d, trace-scope lower bound %d%s" % (
    r["dim"], r["fcache_rows"], r["train_misses"], r["stats_superbatch_misses"], r["trace_lower_bound_misses"],
    "" if r["equal"] and r["above_lower_bound"] else "  WARNING: train and stats disagree"))'
done

summarize print
