#!/usr/bin/python3
"""Non-GNN baselines on a graph written by make_*_graph.py, computed with numpy/scipy only
(independent of Seer: reads edges.txt / features.npy / labels.npy / {train,valid,test}.npy).

The graph is taken as Seer trains on it after `seer prep --undirected --dedup
--drop-self-loops`: symmetric, no repeated edges, no self loops. S = D^-1/2 (A+I) D^-1/2.
Classifier: multinomial logistic regression (L2, scipy L-BFGS, 300 iterations), the L2
strength picked on the validation split from {1e-5, 1e-4, 1e-3, 1e-2}; test accuracy of that
choice. Baselines:
  features   X                     (no graph)
  sgc-2hop   S^2 X                 (Wu et al., SGC, K=2)
  sign-2hop  [X, S X, S^2 X]       (concatenated hops, a stronger linear reference)

Usage: baselines.py GRAPH_DIR [--json OUT]
"""
import json
import os
import sys

import numpy as np
import scipy.optimize
import scipy.sparse as sp


def load(d):
    edges = np.loadtxt(os.path.join(d, "edges.txt"), dtype=np.int64, ndmin=2)
    x = np.load(os.path.join(d, "features.npy")).astype(np.float64)
    y = np.load(os.path.join(d, "labels.npy")).astype(np.int64)
    splits = {s: np.load(os.path.join(d, s + ".npy")) for s in ("train", "valid", "test")}
    return edges, x, y, splits


def normalized_adjacency(edges, n):
    e = edges[edges[:, 0] != edges[:, 1]]
    a = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    a = ((a + a.T) > 0).astype(np.float64)  # undirected, deduplicated
    a = a + sp.identity(n, format="csr")
    d = np.asarray(a.sum(axis=1)).ravel()
    inv = sp.diags(1.0 / np.sqrt(d))
    return (inv @ a @ inv).tocsr()


def train_logreg(x, y, c, l2):
    n, f = x.shape
    yo = np.zeros((n, c))
    yo[np.arange(n), y] = 1.0

    def loss(w):
        w = w.reshape(f + 1, c)
        z = x @ w[:-1] + w[-1]
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        s = p.sum(axis=1, keepdims=True)
        p /= s
        val = -(np.log(p[np.arange(n), y] + 1e-300)).mean() + 0.5 * l2 * (w[:-1] ** 2).sum()
        g = p - yo
        grad = np.vstack([x.T @ g / n + l2 * w[:-1], g.mean(axis=0, keepdims=True)])
        return val, grad.ravel()

    r = scipy.optimize.minimize(loss, np.zeros((f + 1) * c), jac=True, method="L-BFGS-B",
                                options={"maxiter": 300})
    return r.x.reshape(f + 1, c)


def accuracy(w, x, y):
    return float(((x @ w[:-1] + w[-1]).argmax(axis=1) == y).mean())


def evaluate(x, y, splits, c):
    mu = x[splits["train"]].mean(axis=0)
    sd = x[splits["train"]].std(axis=0) + 1e-8
    z = (x - mu) / sd
    best = None
    for l2 in (1e-5, 1e-4, 1e-3, 1e-2):
        w = train_logreg(z[splits["train"]], y[splits["train"]], c, l2)
        v = accuracy(w, z[splits["valid"]], y[splits["valid"]])
        if best is None or v > best[0]:
            best = (v, l2, accuracy(w, z[splits["test"]], y[splits["test"]]))
    return {"valid": best[0], "l2": best[1], "test": best[2]}


def main():
    d = sys.argv[1]
    edges, x, y, splits = load(d)
    n = len(y)
    c = int(y.max()) + 1
    s = normalized_adjacency(edges, n)
    sx = s @ x
    s2x = s @ sx
    results = {}
    for name, feats in (("features", x), ("sgc-2hop", s2x), ("sign-2hop", np.hstack([x, sx, s2x]))):
        results[name] = evaluate(feats, y, splits, c)
        r = results[name]
        print(f"{os.path.basename(d.rstrip('/'))} {name}: test {r['test']:.4f} (valid {r['valid']:.4f}, l2 {r['l2']:g})",
              flush=True)
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
