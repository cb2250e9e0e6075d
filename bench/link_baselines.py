#!/usr/bin/python3
"""Independent link-prediction baselines on a dataset split by `seer split-edges` (issue 32).

Usage: link_baselines.py DATASET [--split test|valid] [--json OUT] [--mlp]
       link_baselines.py --self-test

Reads only the dataset's files with numpy (no Seer code): the TRAINING topology
(indptr.bin / indices.bin, the CSC of in-neighbor lists, held-out edges already removed),
the held-out edges of the split (edges_<split>.bin, int64 (src, dst) pairs) and their fixed
evaluation negatives (edges_<split>_negatives.bin, K int64 destinations per held-out edge,
written by `seer split-edges --eval-negatives K`).

The heuristics treat the training graph as UNDIRECTED and simple: u and v are neighbours
when u -> v or v -> u is a training edge; repeated edges count once and self loops are
dropped. deg(w) = the number of distinct neighbours of w.
  common_neighbours      |N(u) & N(v)|
  adamic_adar            sum over w in N(u) & N(v) of 1 / log(deg(w))   (deg(w) = 1 adds 0)
  preferential_attachment deg(u) * deg(v)
Each held-out edge (s, d) is scored against its K negatives (s, n_1) .. (s, n_K); the
metrics are OGB's (ogb.linkproppred.Evaluator, MRR / Hits@K protocol of citation2):
per positive, optimistic rank = #(neg > pos), pessimistic = #(neg >= pos),
rank = 0.5 * (optimistic + pessimistic) + 1; MRR = mean(1 / rank), Hits@K = mean(rank <= K)
for K in 1, 10, 50. The negatives are not filtered against true edges (as citation2).

--mlp adds a features-only baseline (needs torch): a shared two-layer MLP tower over the
node features (standardised), score = dot product of the two ends' outputs, trained for 5
epochs of up to 200,000 training edges each with binary cross-entropy against one uniform
random negative per edge (Adam, lr 1e-3, seed 1, CPU).

--self-test checks the metric code against a brute-force loop on random small cases (with
ties) and the heuristics against a set computation on tiny random multigraphs; prints
"link_baselines self-test: passed". Exit status 77 when numpy is missing.
"""
import argparse
import json
import math
import os
import sys
import time

try:
    import numpy as np
except ImportError:  # the CLI test skips on 77
    print("link_baselines: numpy is missing (apt-get install python3-numpy)")
    sys.exit(77)

METHODS = ("common_neighbours", "adamic_adar", "preferential_attachment")
HITS_AT = (1, 10, 50)


# ---- the training graph, undirected -------------------------------------------------

class UndirectedGraph:
    """Sorted, symmetric, simple adjacency (CSR) built from a CSC in-neighbor topology."""

    def __init__(self, num_nodes, indptr, indices):
        n = int(num_nodes)
        dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
        src = indices.astype(np.int64)
        keep = src != dst  # self loops dropped
        src, dst = src[keep], dst[keep]
        keys = np.unique(np.concatenate([src * n + dst, dst * n + src]))  # both ways, each pair once
        self.n = n
        self.keys = keys  # row * n + col, ascending
        rows = keys // n
        self.cols = keys - rows * n
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=self.indptr[1:])
        self.degree = np.diff(self.indptr)
        with np.errstate(divide="ignore"):
            inv = 1.0 / np.log(self.degree.astype(np.float64))
        inv[self.degree <= 1] = 0.0
        self.inv_log_degree = inv

    def score(self, u, v, chunk=1 << 22):
        """The three heuristics for the pairs (u[i], v[i]): dict method -> float64 array."""
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        cn = np.zeros(len(u), dtype=np.float64)
        aa = np.zeros(len(u), dtype=np.float64)
        # Walk the smaller neighbour list of each pair and look its members up in the other's.
        small_u = self.degree[u] <= self.degree[v]
        a = np.where(small_u, u, v)
        b = np.where(small_u, v, u)
        lens = self.degree[a]
        ends = np.cumsum(lens)
        begin = 0
        while begin < len(u):
            # As many pairs as fit `chunk` expanded neighbours (at least one pair).
            base = ends[begin - 1] if begin > 0 else 0
            end = max(begin + 1, int(np.searchsorted(ends, base + chunk, side="right")))
            end = min(end, len(u))
            seg = lens[begin:end]
            total = int(seg.sum())
            if total > 0:
                pair = np.repeat(np.arange(begin, end), seg)
                first = np.repeat(self.indptr[a[begin:end]], seg)
                offset = np.arange(total) - np.repeat(np.cumsum(seg) - seg, seg)
                w = self.cols[first + offset]
                key = b[pair] * self.n + w
                pos = np.searchsorted(self.keys, key)
                pos[pos == len(self.keys)] = 0
                hit = self.keys[pos] == key if len(self.keys) else np.zeros(total, dtype=bool)
                cn += np.bincount(pair[hit], minlength=len(u)).astype(np.float64)
                aa += np.bincount(pair[hit], weights=self.inv_log_degree[w[hit]], minlength=len(u))
            begin = end
        pa = self.degree[u].astype(np.float64) * self.degree[v].astype(np.float64)
        return {"common_neighbours": cn, "adamic_adar": aa, "preferential_attachment": pa}


# ---- OGB's ranking metrics ----------------------------------------------------------

def ranking_metrics(pos, neg):
    """pos: float[P], neg: float[P, K] -> {"mrr", "hits@1", "hits@10", "hits@50"} (OGB)."""
    pos = np.asarray(pos, dtype=np.float64).reshape(-1, 1)
    neg = np.asarray(neg, dtype=np.float64)
    optimistic = (neg > pos).sum(axis=1)
    pessimistic = (neg >= pos).sum(axis=1)
    rank = 0.5 * (optimistic + pessimistic) + 1
    out = {"mrr": float(np.mean(1.0 / rank)) if len(rank) else float("nan")}
    for k in HITS_AT:
        out["hits@%d" % k] = float(np.mean(rank <= k)) if len(rank) else float("nan")
    return out


# ---- the dataset --------------------------------------------------------------------

def load(dataset, split):
    m = json.load(open(os.path.join(dataset, "dataset.json")))
    e = m.get("edge_splits")
    if not e:
        sys.exit("link_baselines: %s has no edge splits (run `seer split-edges`)" % dataset)
    k = int(e.get("negatives_per_edge", 0))
    if k <= 0:
        sys.exit("link_baselines: %s has no evaluation negatives (run `seer split-edges --eval-negatives K`)" % dataset)
    n = int(m["num_nodes"])
    indptr = np.fromfile(os.path.join(dataset, "indptr.bin"), dtype="<i8")
    index_dtype = "<u4" if m["index_dtype"] == "uint32" else "<i8"
    indices = np.fromfile(os.path.join(dataset, "indices.bin"), dtype=index_dtype)
    edges = np.fromfile(os.path.join(dataset, e[split]), dtype="<i8").reshape(-1, 2)
    negatives = np.fromfile(os.path.join(dataset, e[split + "_negatives"]), dtype="<i8").reshape(-1, k)
    if len(indptr) != n + 1 or len(indices) != m["num_edges"] or len(negatives) != len(edges):
        sys.exit("link_baselines: %s: file sizes do not match dataset.json" % dataset)
    return m, n, indptr, indices, edges, negatives


def evaluate(graph, edges, negatives):
    p, k = negatives.shape
    src = edges[:, 0]
    pos = graph.score(src, edges[:, 1])
    neg = graph.score(np.repeat(src, k), negatives.reshape(-1))
    return {name: ranking_metrics(pos[name], neg[name].reshape(p, k)) for name in METHODS}


def run(args):
    start = time.time()
    m, n, indptr, indices, edges, negatives = load(args.dataset, args.split)
    graph = UndirectedGraph(n, indptr, indices)
    results = evaluate(graph, edges, negatives)
    methods = list(METHODS)
    if args.mlp:
        scored = mlp_scores(args.dataset, m, n, indptr, indices, edges, negatives)
        if scored is None:
            print("link_baselines: --mlp needs torch; skipped")
        else:
            results["features_mlp"] = ranking_metrics(*scored)
            methods.append("features_mlp")
    seconds = time.time() - start
    k = negatives.shape[1]
    print("link_baselines: %s, split %s: %d held-out edges x %d negatives; training graph %d nodes, %d undirected "
          "edges (the CSC's %d edges, symmetrized, no self loops or repeats); %.1f s"
          % (args.dataset, args.split, len(edges), k, n, len(graph.keys) // 2, m["num_edges"], seconds))
    print("| method | MRR | Hits@1 | Hits@10 | Hits@50 |")
    print("|---|---|---|---|---|")
    for name in methods:
        r = results[name]
        print("| %s | %.4f | %.4f | %.4f | %.4f |" % (name, r["mrr"], r["hits@1"], r["hits@10"], r["hits@50"]))
    if args.json:
        report = {"dataset": os.path.abspath(args.dataset), "split": args.split, "num_positives": int(len(edges)),
                  "negatives_per_edge": int(k), "num_nodes": n, "undirected_edges": int(len(graph.keys) // 2),
                  "graph": "training topology, undirected, simple", "seconds": seconds, "methods": results}
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0


# ---- features-only MLP (--mlp) ------------------------------------------------------

def load_features(dataset, m):
    """features.bin as float32 [n, F], whatever its dtype (docs/formats.md)."""
    n, f = int(m["num_nodes"]), int(m["feature_dim"])
    path = os.path.join(dataset, "features.bin")
    dtype = m.get("feature_dtype", "float32")
    if dtype == "float32":
        return np.fromfile(path, dtype="<f4", count=n * f).reshape(n, f)
    if dtype == "float16":
        return np.fromfile(path, dtype="<f2", count=n * f).reshape(n, f).astype(np.float32)
    if dtype == "bfloat16":
        raw = np.fromfile(path, dtype="<u2", count=n * f).astype(np.uint32) << 16
        return raw.view(np.float32).reshape(n, f)
    if dtype == "int8":  # F uint8 codes, then float32 scale and bias per row
        raw = np.fromfile(path, dtype=np.uint8, count=n * (f + 8)).reshape(n, f + 8)
        tail = raw[:, f:].copy().view("<f4")
        return (raw[:, :f].astype(np.float32) * tail[:, 0:1] + tail[:, 1:2]).astype(np.float32)
    sys.exit("link_baselines: unknown feature_dtype %r" % dtype)


def mlp_scores(dataset, m, n, indptr, indices, edges, negatives, epochs=5, hidden=128, seed=1):
    """A features-only two-tower MLP (shared tower, dot-product score) trained with binary
    cross-entropy on the TRAINING edges against uniform random negatives (1:1), on the CPU;
    returns (pos scores, neg scores [P, K]) for the held-out edges and their fixed negatives."""
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(load_features(dataset, m))
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    src = indices.astype(np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    tower = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden))
    opt = torch.optim.Adam(tower.parameters(), lr=1e-3)
    per_epoch = min(len(src), 200000)
    batch = 4096
    for _ in range(epochs):
        pick = rng.choice(len(src), size=per_epoch, replace=False) if per_epoch < len(src) else rng.permutation(len(src))
        for b in range(0, per_epoch, batch):
            idx = pick[b:b + batch]
            u = torch.from_numpy(src[idx])
            v = torch.from_numpy(dst[idx])
            w = torch.from_numpy(rng.integers(0, n, size=len(idx)))
            hu, hv, hw = tower(x[u]), tower(x[v]), tower(x[w])
            logits = torch.cat([(hu * hv).sum(1), (hu * hw).sum(1)])
            labels = torch.cat([torch.ones(len(idx)), torch.zeros(len(idx))])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        h = tower(x)
        s = torch.from_numpy(edges[:, 0])
        pos = (h[s] * h[torch.from_numpy(edges[:, 1])]).sum(1).numpy()
        p, k = negatives.shape
        neg = (h[s].repeat_interleave(k, 0) * h[torch.from_numpy(negatives.reshape(-1))]).sum(1).numpy().reshape(p, k)
    return pos.astype(np.float64), neg.astype(np.float64)


# ---- self-test ----------------------------------------------------------------------

def brute_metrics(pos, neg):
    ranks = []
    for i in range(len(pos)):
        opt = sum(1 for x in neg[i] if x > pos[i])
        pess = sum(1 for x in neg[i] if x >= pos[i])
        ranks.append(0.5 * (opt + pess) + 1)
    out = {"mrr": sum(1.0 / r for r in ranks) / len(ranks)}
    for k in HITS_AT:
        out["hits@%d" % k] = sum(1 for r in ranks if r <= k) / len(ranks)
    return out


def self_test():
    rng = np.random.default_rng(32)
    failures = []
    for case in range(200):
        p = int(rng.integers(1, 12))
        k = int(rng.integers(1, 70))
        pos = rng.integers(0, 5, size=p).astype(np.float64)  # small integers: many ties
        neg = rng.integers(0, 5, size=(p, k)).astype(np.float64)
        got, want = ranking_metrics(pos, neg), brute_metrics(pos.tolist(), neg.tolist())
        for key in want:
            if abs(got[key] - want[key]) > 1e-12:
                failures.append("metrics case %d %s: %r != %r" % (case, key, got[key], want[key]))
    for case in range(30):
        n = int(rng.integers(1, 25))
        e = int(rng.integers(0, 80))
        src = rng.integers(0, n, size=e)
        dst = rng.integers(0, n, size=e)  # repeats and self loops included
        order = np.argsort(dst, kind="stable")
        indices = src[order].astype("<u4")
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(dst, minlength=n), out=indptr[1:])
        graph = UndirectedGraph(n, indptr, indices)
        nbr = [set() for _ in range(n)]
        for a, b in zip(src.tolist(), dst.tolist()):
            if a != b:
                nbr[a].add(b)
                nbr[b].add(a)
        u = rng.integers(0, n, size=40)
        v = rng.integers(0, n, size=40)
        got = graph.score(u, v, chunk=int(rng.integers(1, 8)))  # small chunks: the chunking is exercised
        for i, (a, b) in enumerate(zip(u.tolist(), v.tolist())):
            common = nbr[a] & nbr[b]
            want = {"common_neighbours": float(len(common)),
                    "adamic_adar": sum(1.0 / math.log(len(nbr[w])) for w in common if len(nbr[w]) > 1),
                    "preferential_attachment": float(len(nbr[a]) * len(nbr[b]))}
            for name in METHODS:
                if abs(got[name][i] - want[name]) > 1e-9:
                    failures.append("graph case %d pair (%d, %d) %s: %r != %r" % (case, a, b, name, got[name][i],
                                                                                 want[name]))
    if failures:
        print("link_baselines self-test: FAILED (%d)" % len(failures))
        for f in failures[:20]:
            print("  " + f)
        return 1
    print("link_baselines self-test: passed")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", help="a dataset split by `seer split-edges --eval-negatives K`")
    parser.add_argument("--split", choices=("test", "valid"), default="test")
    parser.add_argument("--json", help="write the results here as JSON")
    parser.add_argument("--mlp", action="store_true",
                        help="also a features-only MLP (two towers, dot product; torch on the CPU, seed 1): "
                             "trained on the training edges against uniform negatives")
    parser.add_argument("--self-test", action="store_true", help="check the metrics and heuristics, then exit")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if not args.dataset:
        parser.error("DATASET is required (or --self-test)")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
