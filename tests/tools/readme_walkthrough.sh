#!/usr/bin/env bash
# Runs README.md's "Your own data, start to finish" block as written (the sh block after
# the "walkthrough:" marker) on small generated tables: 400 users with string ids, a
# follows graph with a learnable class structure, features in users.txt's order, labels
# for 70 % of the users. Then checks preds.csv with Python: one row per id of who.txt in
# its order, probabilities that sum to 1 and whose argmax is the class, and the classes of
# the labelled users mostly right.
#   tests/tools/readme_walkthrough.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/seer-walkthrough-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build"
ln -s "$build/seer" "$work/build/seer"
ln -s "$build/seer-train" "$work/build/seer-train"

/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np
work = sys.argv[1]
rng = np.random.default_rng(5)
n, classes = 400, 3
ids = [f"user_{k:x}" for k in range(n)]
# who.txt (in the README) names user_1, user_2a and user_ff: users 1, 42 and 255, labelled.
cls = rng.integers(0, classes, n)
order = rng.permutation(n)                       # users.txt in its own order
with open(f"{work}/users.txt", "w") as f:
    f.writelines(ids[k] + "\n" for k in order)
feat = (np.eye(classes)[cls] * 0.8 + rng.standard_normal((n, classes)) * 0.9).astype(np.float32)
np.save(f"{work}/feat.npy", feat[order])
with open(f"{work}/edges.csv", "w") as f:
    f.write("follower,followee\n")
    for _ in range(6 * n):
        a = int(rng.integers(0, n))
        same = np.flatnonzero(cls == cls[a]) if rng.random() < 0.9 else np.arange(n)
        b = int(rng.choice(same))
        if a != b:
            f.write(f"{ids[a]},{ids[b]}\n")
with open(f"{work}/labels.csv", "w") as f:
    f.write("user_id,label\n")
    for k in range(n):
        if k in (1, 42, 255) or rng.random() < 0.7:
            f.write(f"{ids[k]},{cls[k]}\n")
np.save(f"{work}/truth.npy", cls)
with open(f"{work}/ids.txt", "w") as f:
    f.writelines(i + "\n" for i in ids)
PY

block=$(awk '/<!-- walkthrough:/ {on = 1; next} on && /^```sh/ {inside = 1; next} inside && /^```/ {exit} inside {print}' "$src/README.md")
[ -n "$block" ] || { echo "README.md has no walkthrough block"; exit 1; }
(cd "$work" && bash -euo pipefail -c "$block")

/usr/bin/python3 - "$work" <<'PY'
import csv, sys, numpy as np
work = sys.argv[1]
rows = list(csv.reader(open(f"{work}/preds.csv", newline="")))
head, body = rows[0], rows[1:]
assert head[:2] == ["id", "class"] and head[2:] == ["prob_0", "prob_1", "prob_2"], head
who = open(f"{work}/who.txt").read().split()
assert [r[0] for r in body] == who, ([r[0] for r in body], who)
ids = open(f"{work}/ids.txt").read().split()
truth = np.load(f"{work}/truth.npy")
for r in body:
    p = np.array([float(x) for x in r[2:]])
    assert abs(p.sum() - 1) < 1e-4 and int(r[1]) == int(p.argmax()), r
right = sum(int(r[1]) == truth[ids.index(r[0])] for r in body)
assert right >= 2, (right, body)
print(f"walkthrough OK: {len(body)} predictions, {right} of {len(body)} right")
PY
