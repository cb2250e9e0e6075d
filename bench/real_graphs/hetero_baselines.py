#!/usr/bin/python3
"""Independent baselines for the Debian package graph (make_debian_graph.py), numpy only.

Reads the builder's files (package_ids.txt, package_feat.npy, rel_*.csv, labels.csv,
train/valid/test.txt) -- never a Seer dataset -- and predicts the package Section on the same
split. Every number is a deterministic function of those files.

Classifier: multinomial logistic regression, features standardised on the train rows, a bias,
L2 on the weights, fitted by a small numpy L-BFGS (memory 10, Armijo backtracking, at most 300
iterations, stop at a relative loss change <= 1e-8; float32 matrix products); the L2 strength
is picked on the valid split from {1e-2, 1e-3, 1e-4, 1e-5}, fitted in that order, the first
from zero weights and each next one warm-started from the previous; the test accuracy of the
chosen strength is reported.

  majority        the most frequent train class
  logreg-name     logistic regression on the package's own 128 name features
  logreg-rel      logistic regression on an R-SIGN-style relational feature vector:
                    own features; mean features of its depends (Depends+Pre-Depends) targets;
                    mean features of its reverse-depends; mean features of its recommends/
                    suggests neighbours (both directions); the hashed name features of its
                    source package; the class distribution of the OTHER train packages of its
                    maintainer and of its source (a train package's own label is removed: no
                    leakage), with log(1 + count) of each; log(1 + degree) per relation
  logreg-rel-nolabel  the same without the two train-label distributions (features only, as the
                    GNNs see the graph)
  maintainer-vote the majority class of the maintainer's other train packages (ties: the lower
                    class index = the larger class), else logreg-name's prediction
  source-maint-vote  the same through the source package first, then the maintainer, then
                    logreg-name

Usage: hetero_baselines.py GRAPH_DIR [--json OUT] [--only NAME,...]
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_common  # noqa: E402
import make_debian_graph  # noqa: E402

L2_GRID = (1e-5, 1e-4, 1e-3, 1e-2)


def read_lines(path):
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def read_pairs(path):
    with open(path) as f:
        next(f)
        return [tuple(line.rstrip("\n").split(",", 1)) for line in f if line.strip()]


def lbfgs(fg, w, maxiter=300, m=10, ftol=1e-8, gtol=1e-6):
    f, g = fg(w)
    s_hist, y_hist = [], []
    for _ in range(maxiter):
        q = g.copy()
        alphas = []
        for s, y in zip(reversed(s_hist), reversed(y_hist)):
            rho = 1.0 / (y @ s)
            a = rho * (s @ q)
            q -= a * y
            alphas.append((rho, a))
        if s_hist:
            q *= (s_hist[-1] @ y_hist[-1]) / (y_hist[-1] @ y_hist[-1])
        else:
            q /= max(np.linalg.norm(g), 1.0)
        for (s, y), (rho, a) in zip(zip(s_hist, y_hist), reversed(alphas)):
            q += s * (a - rho * (y @ q))
        d = -q
        gd = g @ d
        if gd >= 0:  # not a descent direction: restart from the gradient
            s_hist, y_hist = [], []
            d = -g / max(np.linalg.norm(g), 1.0)
            gd = g @ d
        t = 1.0
        while True:
            wn = w + t * d
            fn, gn = fg(wn)
            if fn <= f + 1e-4 * t * gd or t < 1e-12:
                break
            t *= 0.5
        s, y = wn - w, gn - g
        if y @ s > 1e-12:
            s_hist.append(s)
            y_hist.append(y)
            if len(s_hist) > m:
                s_hist.pop(0)
                y_hist.pop(0)
        done = abs(f - fn) <= ftol * max(1.0, abs(f)) or np.linalg.norm(gn) < gtol
        w, f, g = wn, fn, gn
        if done:
            break
    return w


def train_logreg(x, y, c, l2, w0=None):
    """x: float32 (n, f). The logits are float32 matrix products, the rest float64."""
    n, f = x.shape
    yo = np.zeros((n, c))
    yo[np.arange(n), y] = 1.0

    def fg(w):
        w = w.reshape(f + 1, c)
        z = (x @ w[:-1].astype(np.float32)).astype(np.float64) + w[-1]
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        val = -np.log(p[np.arange(n), y] + 1e-300).mean() + 0.5 * l2 * (w[:-1] ** 2).sum()
        gr = p - yo
        gx = (x.T @ (gr / n).astype(np.float32)).astype(np.float64)
        grad = np.vstack([gx + l2 * w[:-1], gr.mean(axis=0, keepdims=True)])
        return val, grad.ravel()

    w0 = np.zeros((f + 1) * c) if w0 is None else w0.ravel()
    return lbfgs(fg, w0).reshape(f + 1, c)


def logreg(x, y, split, c):
    """The L2 grid from the strongest to the weakest, each fit warm-started from the previous
    one's weights (deterministic: the first starts from zero)."""
    tr = split["train"]
    mu = x[tr].mean(axis=0)
    sd = x[tr].std(axis=0) + 1e-8
    z = ((x - mu) / sd).astype(np.float32)
    ztr = np.ascontiguousarray(z[tr])
    best = None
    w = None
    for l2 in sorted(L2_GRID, reverse=True):
        t = time.time()
        w = train_logreg(ztr, y[tr], c, l2, w)
        pred = (z @ w[:-1].astype(np.float32) + w[-1]).argmax(axis=1)
        v = float((pred[split["valid"]] == y[split["valid"]]).mean())
        print(f"  {z.shape[1]} features, l2 {l2:g}: valid {v:.4f} ({time.time() - t:.0f} s)", flush=True)
        if best is None or v > best["valid"]:
            best = {"valid": v, "l2": l2, "test": float((pred[split["test"]] == y[split["test"]]).mean()), "pred": pred}
    return best


def mean_rows(x, src, dst, n):
    """Row v = mean of x[dst] over edges (v, dst); zero when v has none. Also the counts."""
    out = np.zeros((n, x.shape[1]))
    np.add.at(out, src, x[dst])
    cnt = np.bincount(src, minlength=n).astype(np.float64)
    return out / np.maximum(cnt, 1)[:, None], cnt


def group_label_dist(group, y, train_mask, c):
    """Per node: the class counts of the other train nodes of its group (group: int per node)."""
    g = group.max() + 1
    counts = np.zeros((g, c))
    tr = np.flatnonzero(train_mask)
    np.add.at(counts, (group[tr], y[tr]), 1.0)
    per = counts[group]
    per[tr, y[tr]] -= 1.0  # leave the node's own label out
    return per


def vote(counts):
    """argmax with ties to the lower class index; -1 where there are no votes."""
    pred = counts.argmax(axis=1)
    pred[counts.sum(axis=1) == 0] = -1
    return pred


def main():
    d = sys.argv[1]
    only = None
    if "--only" in sys.argv:
        only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    t0 = time.time()
    names = read_lines(os.path.join(d, "package_ids.txt"))
    row = {p: i for i, p in enumerate(names)}
    n = len(names)
    x = np.load(os.path.join(d, "package_feat.npy")).astype(np.float64)
    y = np.full(n, -1, dtype=np.int64)
    for p, lab in read_pairs(os.path.join(d, "labels.csv")):
        y[row[p]] = int(lab)
    c = int(y.max()) + 1
    split = {s: np.array(sorted(row[p] for p in read_lines(os.path.join(d, s + ".txt"))), dtype=np.int64)
             for s in ("train", "valid", "test")}
    train_mask = np.zeros(n, dtype=bool)
    train_mask[split["train"]] = True

    def pp(rel):
        e = read_pairs(os.path.join(d, f"rel_{rel}.csv"))
        return np.array([row[a] for a, _ in e], dtype=np.int64), np.array([row[b] for _, b in e], dtype=np.int64)

    def to_group(rel):
        e = dict(read_pairs(os.path.join(d, f"rel_{rel}.csv")))
        keys = sorted(set(e.values()))
        k = {v: i for i, v in enumerate(keys)}
        return np.array([k[e[p]] for p in names], dtype=np.int64), [e[p] for p in names]

    dep_s, dep_d = pp("depends")
    rec_s, rec_d = pp("recommends")
    sug_s, sug_d = pp("suggests")
    maint, _ = to_group("maintained_by")
    source, source_names = to_group("built_from")

    results = {}

    def record(name, r):
        results[name] = {k: v for k, v in r.items() if k != "pred"}
        extra = f", l2 {r['l2']:g}" if "l2" in r else ""
        print(f"debian {name}: test {r['test']:.4f} (valid {r['valid']:.4f}{extra}) [{time.time() - t0:.0f} s]", flush=True)

    def acc(pred):
        return {"valid": float((pred[split["valid"]] == y[split["valid"]]).mean()),
                "test": float((pred[split["test"]] == y[split["test"]]).mean())}

    def want(name):
        return only is None or name in only

    maj = np.bincount(y[split["train"]], minlength=c).argmax()
    record("majority", acc(np.full(n, maj)))

    name_lr = None
    if want("logreg-name") or want("maintainer-vote") or want("source-maint-vote"):
        name_lr = logreg(x, y, split, c)
        record("logreg-name", name_lr)

    if want("logreg-rel") or want("logreg-rel-nolabel"):
        dep_mean, dep_cnt = mean_rows(x, dep_s, dep_d, n)
        rdep_mean, rdep_cnt = mean_rows(x, dep_d, dep_s, n)
        rs_s = np.concatenate([rec_s, sug_s, rec_d, sug_d])
        rs_d = np.concatenate([rec_d, sug_d, rec_s, sug_s])
        rs_mean, rs_cnt = mean_rows(x, rs_s, rs_d, n)
        src_x = graph_common.hashed_features([make_debian_graph.name_tokens(s) for s in source_names]).astype(np.float64)
        degs = np.log1p(np.stack([dep_cnt, rdep_cnt, rs_cnt], axis=1))
        base = [x, dep_mean, rdep_mean, rs_mean, src_x, degs]
        if want("logreg-rel-nolabel"):
            record("logreg-rel-nolabel", logreg(np.hstack(base), y, split, c))
        if want("logreg-rel"):
            feats = list(base)
            for group in (maint, source):
                cnt = group_label_dist(group, y, train_mask, c)
                tot = cnt.sum(axis=1, keepdims=True)
                feats += [cnt / np.maximum(tot, 1), np.log1p(tot)]
            record("logreg-rel", logreg(np.hstack(feats), y, split, c))

    if name_lr is not None:
        fallback = name_lr["pred"]
        mv = vote(group_label_dist(maint, y, train_mask, c))
        record("maintainer-vote", acc(np.where(mv >= 0, mv, fallback)))
        sv = vote(group_label_dist(source, y, train_mask, c))
        record("source-maint-vote", acc(np.where(sv >= 0, sv, np.where(mv >= 0, mv, fallback))))

    print("\n| baseline | test acc | valid acc |\n|---|---|---|")
    for k, r in results.items():
        print(f"| {k} | {r['test']:.4f} | {r['valid']:.4f} |")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
