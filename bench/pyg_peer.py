#!/usr/bin/env python3
"""The PyTorch Geometric peer of bench/e2e.sh (issues 6, 26): Ginex's PyG+ baseline, run on a
Seer dataset directory, with Seer's hyper-parameters.

  * topology: Seer's CSC (indptr.bin int64, indices.bin uint32/int64) memory-mapped, read-ahead
    off (MADV_RANDOM): pages come through the page cache, under the run's memory limit;
  * features: np.memmap of the same features.bin, read-ahead off, rows gathered per batch
    (sorted by row) in the DataLoader's worker processes;
  * sampling: torch_geometric.loader.NeighborLoader whenever pyg-lib or torch-sparse is
    importable, given Seer's CSC directly (PyG's NeighborSampler with its colptr/row set to
    the memory-mapped indptr and an int64 copy of indices.bin, written once next to the
    dataset as DATASET.pyg-indices64.bin when indices are uint32; no copy in RAM and no
    share_memory_() copy: the workers are forked). Otherwise a vectorised numpy sampler in
    the same DataLoader workers with NeighborLoader's rule (below). The run prints which;
  * the rule (pyg-lib's neighbor_sample, replace=False, directed): hop h expands only the
    nodes first seen at hop h-1 (the seeds at hop 1); a node of in-degree d gets min(fanout, d)
    distinct in-edges (positions) drawn uniformly without replacement by Robert Floyd's
    algorithm (all d when d <= fanout); new nodes get local ids in order of first appearance;
    layer l of the model sees the edges into the nodes of hops < l+1 (PyG's trim-to-layer
    blocks). The fallback is vectorised over the frontier (one numpy pass per hop, a loop of
    `fanout` steps for Floyd's draws), with no Python loop per node or per edge;
  * model: torch_geometric.nn.SAGEConv (mean), Adam, cross-entropy, dropout — the same
    hyper-parameters as `seer train` (hidden, layers = fan-outs, lr, dropout, batch).

Writes the same JSON lines as `seer train --metrics` (start / epoch per epoch / final), so
bench/e2e.sh parses both alike (epoch 1 = cold: worker start-up, empty page cache; the last
epoch = steady). Feature/topology SSD reads are not measured here (-1); peak_rss_bytes is the
main process's (the workers' pages are in the run's cgroup peak).

  python3 bench/pyg_peer.py DATASET --fanouts 10,10,10 --batch-size 1000 --hidden 256 \\
      --epochs 2 --metrics out.jsonl
  python3 bench/pyg_peer.py --self-test      # numpy only: the vectorised sampler vs a slow
                                             # reference of the same rule on a synthetic CSC
"""
import argparse
import json
import mmap
import os
import resource
import sys
import time

import numpy as np


def madvise_random(arr):
    if hasattr(arr, "_mmap") and arr._mmap is not None and hasattr(mmap, "MADV_RANDOM"):
        arr._mmap.madvise(mmap.MADV_RANDOM)


def load_dataset(path):
    manifest = json.load(open(os.path.join(path, "dataset.json")))
    n, dim = manifest["num_nodes"], manifest["feature_dim"]
    index_dtype = np.uint32 if manifest["index_dtype"] == "uint32" else np.int64
    feature_dtype = {"float16": np.float16, "float32": np.float32}.get(manifest["feature_dtype"])
    if feature_dtype is None:
        sys.exit(f"pyg_peer: feature_dtype {manifest['feature_dtype']} is not supported here (float32, float16)")
    indptr = np.memmap(os.path.join(path, "indptr.bin"), dtype=np.int64, mode="r", shape=(n + 1,))
    indices = np.memmap(os.path.join(path, "indices.bin"), dtype=index_dtype, mode="r")
    feats = np.memmap(os.path.join(path, "features.bin"), dtype=feature_dtype, mode="r", shape=(n, dim))
    for arr in (indices, feats):  # PyG+ in Ginex §5: no read-ahead on the mmapped data
        madvise_random(arr)
    labels = np.fromfile(os.path.join(path, "labels.bin"), dtype=np.int32)
    split = {s: np.fromfile(os.path.join(path, s + ".bin"), dtype=np.int64) for s in ("train", "valid", "test")}
    return manifest, indptr, indices, feats, labels, split


def int64_indices(dataset, manifest, indices):
    """indices.bin as an int64 memmap (what pyg-lib / torch-sparse need): the file itself when it
    is int64, else DATASET.pyg-indices64.bin, written once (chunked, atomically) and reused."""
    if manifest["index_dtype"] == "int64":
        path = os.path.join(dataset, "indices.bin")
    else:
        path = os.path.normpath(dataset) + ".pyg-indices64.bin"
        if not os.path.exists(path) or os.path.getsize(path) != 8 * len(indices):
            t0 = time.perf_counter()
            tmp = f"{path}.tmp.{os.getpid()}"
            with open(tmp, "wb") as f:
                step = 1 << 24
                for i in range(0, len(indices), step):
                    f.write(np.asarray(indices[i:i + step], dtype=np.int64).tobytes())
            os.replace(tmp, path)
            print(f"pyg_peer: wrote {path} (int64 copy of indices.bin for PyG) in "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    arr = np.memmap(path, dtype=np.int64, mode="c", shape=(len(indices),))  # copy-on-write: torch wants writable
    madvise_random(arr)
    return arr


# ---- the vectorised sampler (NeighborLoader's rule) -------------------------------------


class CscSampler:
    """Uniform neighbour sampling without replacement over a CSC (indptr[v]..indptr[v+1] are
    the positions of v's in-neighbours in indices), NeighborLoader's rule (module doc).

    sample(seeds, rng) -> (n_id, src, dst, counts): n_id the global ids (seeds first, then each
    hop's new nodes in order of first appearance), (src, dst) the sampled edges in local ids
    (src = the neighbour, dst = the node expanded; ordered by dst, then draw order), counts the
    number of nodes each hop added (counts[0] = len(seeds))."""

    def __init__(self, indptr, indices, fanouts):
        self.indptr, self.indices, self.fanouts = indptr, indices, list(fanouts)

    def draws(self, deg, fanout, rng):
        """The uniforms for one hop: one row of `fanout` per node with deg > fanout, in order."""
        m = int(np.count_nonzero(deg > fanout)) if fanout >= 0 else 0
        return rng.random((m, fanout)) if m and fanout > 0 else np.zeros((m, max(fanout, 0)))

    def pick(self, deg, fanout, u):
        """(rows, pos): for each frontier row (index into deg) the positions drawn, grouped by
        row in row order, in draw order within a row."""
        if fanout == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        small = deg <= fanout if fanout > 0 else np.ones(len(deg), bool)
        idx_s = np.flatnonzero(small)
        d_s = deg[idx_s]
        rows_s = np.repeat(idx_s, d_s)
        pos_s = np.arange(len(rows_s), dtype=np.int64) - np.repeat(np.cumsum(d_s) - d_s, d_s)
        idx_b = np.flatnonzero(~small)
        d_b = deg[idx_b]
        picks = np.empty((len(idx_b), max(fanout, 0)), np.int64)
        for t in range(picks.shape[1]):  # Floyd: for j = d-k .. d-1: r in [0, j]; taken -> j
            j = d_b - fanout + t
            r = np.minimum((u[:, t] * (j + 1)).astype(np.int64), j)
            if t:
                r = np.where((picks[:, :t] == r[:, None]).any(axis=1), j, r)
            picks[:, t] = r
        rows = np.concatenate([rows_s, np.repeat(idx_b, picks.shape[1])])
        pos = np.concatenate([pos_s, picks.ravel()])
        order = np.argsort(rows, kind="stable")
        return rows[order], pos[order]

    def sample(self, seeds, rng):
        seeds = np.asarray(seeds, dtype=np.int64)
        order = np.argsort(seeds, kind="stable")
        known_keys, known_vals = seeds[order], order.astype(np.int64)  # global id -> local id, sorted
        n_id, counts, srcs, dsts = [seeds], [len(seeds)], [], []
        begin, end, frontier = 0, len(seeds), seeds
        for fanout in self.fanouts:
            start = np.asarray(self.indptr[frontier], dtype=np.int64)
            deg = np.asarray(self.indptr[frontier + 1], dtype=np.int64) - start
            rows, pos = self.pick(deg, fanout, self.draws(deg, fanout, rng))
            nbr = np.asarray(self.indices[start[rows] + pos], dtype=np.int64)
            uniq, first, inv = np.unique(nbr, return_index=True, return_inverse=True)
            at = np.minimum(np.searchsorted(known_keys, uniq), max(len(known_keys) - 1, 0))
            found = (known_keys[at] == uniq) if len(known_keys) else np.zeros(len(uniq), bool)
            local = np.empty(len(uniq), np.int64)
            local[found] = known_vals[at[found]]
            new_idx = np.flatnonzero(~found)
            new_idx = new_idx[np.argsort(first[new_idx], kind="stable")]  # first appearance
            new_ids = uniq[new_idx]
            local[new_idx] = end + np.arange(len(new_idx), dtype=np.int64)
            srcs.append(local[inv.reshape(-1)])
            dsts.append(begin + rows)
            new_sorted = np.flatnonzero(~found)  # uniq is sorted: two sorted runs, merged by timsort
            keys = np.concatenate([known_keys, uniq[new_sorted]])
            vals = np.concatenate([known_vals, local[new_sorted]])
            o = np.argsort(keys, kind="stable")
            known_keys, known_vals = keys[o], vals[o]
            n_id.append(new_ids)
            counts.append(len(new_ids))
            begin, end, frontier = end, end + len(new_ids), new_ids
        return (np.concatenate(n_id), np.concatenate(srcs) if srcs else np.zeros(0, np.int64),
                np.concatenate(dsts) if dsts else np.zeros(0, np.int64), counts)


def reference_sample(indptr, indices, fanouts, seeds, rng, draws):
    """The same rule node by node in plain Python (pyg-lib's loop), drawing the same uniforms
    (`draws` = CscSampler.draws): the self-test's oracle."""
    seeds = [int(s) for s in seeds]
    local = {v: i for i, v in enumerate(seeds)}
    n_id, counts, src, dst = list(seeds), [len(seeds)], [], []
    begin, end = 0, len(seeds)
    for fanout in fanouts:
        frontier = n_id[begin:end]
        deg = np.array([int(indptr[v + 1]) - int(indptr[v]) for v in frontier], dtype=np.int64)
        u = draws(deg, fanout, rng)
        b = 0
        for i, v in enumerate(frontier):
            d = int(deg[i])
            if fanout == 0:
                chosen = []
            elif fanout < 0 or d <= fanout:
                chosen = list(range(d))
            else:
                chosen, taken = [], set()
                for t, j in enumerate(range(d - fanout, d)):
                    r = min(int(u[b, t] * (j + 1)), j)
                    if r in taken:
                        r = j
                    taken.add(r)
                    chosen.append(r)
                b += 1
            for p in chosen:
                w = int(indices[int(indptr[v]) + p])
                if w not in local:
                    local[w] = len(n_id)
                    n_id.append(w)
                src.append(local[w])
                dst.append(begin + i)
        counts.append(len(n_id) - end)
        begin, end = end, len(n_id)
    return np.array(n_id, np.int64), np.array(src, np.int64), np.array(dst, np.int64), counts


def counts_from_edges(num_nodes, batch_size, src, dst, layers):
    """Nodes added per hop when the loader does not say (torch-sparse): a node's hop is its
    distance from the seeds over the sampled edges (dst -> src), seeds at 0."""
    far = np.iinfo(np.int64).max
    hop = np.full(num_nodes, far, np.int64)
    hop[:batch_size] = 0
    for _ in range(layers):
        known = hop[dst] < far
        np.minimum.at(hop, src[known], hop[dst[known]] + 1)
    return [int(c) for c in np.bincount(hop[hop < far], minlength=layers + 1)[:layers + 1]]


def blocks_from_edges(src, dst, counts, layers):
    """PyG's trim-to-layer blocks, input layer first: layer l (0 = output) = the edges into the
    first sizes[l] nodes, sources among the first sizes[l+1]."""
    sizes = np.cumsum(counts)
    blocks = []
    for layer in range(layers):
        num_dst, num_src = int(sizes[layer]), int(sizes[min(layer + 1, len(sizes) - 1)])
        mask = (dst < num_dst) & (src < num_src)
        blocks.append((np.stack([src[mask], dst[mask]]), num_src, num_dst))
    blocks.reverse()
    return blocks


def gather_rows(feats, ids, chunk=8192):
    """feats[ids] read in row order (one sorted sweep over the memmap), returned in ids' order;
    copied `chunk` rows at a time, so that the batch is in memory once, not twice."""
    ids = np.asarray(ids, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    out = np.empty((len(ids), feats.shape[1]), dtype=feats.dtype)
    for b in range(0, len(ids), chunk):
        o = order[b:b + chunk]
        out[o] = feats[ids[o]]
    return out


class FallbackCollate:
    """DataLoader collate_fn in the workers: sample, gather the rows, build the blocks. Returns
    torch tensors, as NeighborLoader does: the DataLoader hands them to the main process
    through shared memory (one copy of the batch), where numpy arrays would be pickled
    through a pipe (three: the pickle, the bytes received, the array rebuilt)."""

    def __init__(self, sampler, feats, labels, layers, seed):
        self.sampler, self.feats, self.labels, self.layers, self.seed = sampler, feats, labels, layers, seed

    def __call__(self, seeds):
        seeds = np.asarray(seeds, dtype=np.int64)
        rng = np.random.default_rng([self.seed, len(seeds), int(seeds[0]), int(seeds[-1])])
        n_id, src, dst, counts = self.sampler.sample(seeds, rng)
        import torch
        return (torch.from_numpy(gather_rows(self.feats, n_id)),
                torch.from_numpy(self.labels[n_id[:len(seeds)]].astype(np.int64)),
                [(torch.from_numpy(e), s, d) for e, s, d in blocks_from_edges(src, dst, counts, self.layers)])


class PygGather:
    """NeighborLoader transform, run in the workers (filter_per_worker=True): the batch's rows
    from the features memmap and its labels."""

    def __init__(self, feats, labels):
        self.feats, self.labels = feats, labels

    def __call__(self, data):
        import torch
        n_id = data.n_id.numpy()
        data.x = torch.from_numpy(gather_rows(self.feats, n_id))
        data.y = torch.from_numpy(self.labels[n_id[:data.batch_size]].astype(np.int64))
        return data


def torch_geometric_available():
    try:
        import torch_geometric  # noqa: F401
        return True
    except Exception:  # noqa: BLE001 - ImportError, or a build for another torch
        return False


def make_sage_conv_torch():
    """SAGEConv (aggr mean, root weight, no normalisation) in plain torch, for a machine
    without torch_geometric: out = lin_l(mean of x_src over the in-edges) + lin_r(x_dst),
    lin_l with a bias, lin_r without — PyG's SAGEConv formula and parameter layout."""
    import torch

    class SageConvMean(torch.nn.Module):
        def __init__(self, in_dim, out_dim):
            super().__init__()
            self.lin_l = torch.nn.Linear(in_dim, out_dim, bias=True)
            self.lin_r = torch.nn.Linear(in_dim, out_dim, bias=False)

        def forward(self, x, edge_index, size):
            x_src, x_dst = x
            src, dst = edge_index[0], edge_index[1]
            agg = torch.zeros((size[1], x_src.shape[1]), dtype=x_src.dtype, device=x_src.device)
            agg.index_add_(0, dst, x_src.index_select(0, src))
            deg = torch.bincount(dst, minlength=size[1]).clamp_(min=1).to(x_src.dtype)
            return self.lin_l(agg / deg.unsqueeze(1)) + self.lin_r(x_dst)

    return SageConvMean


def make_model(in_dim, hidden, classes, layers, dropout):
    """(model, what): GraphSAGE of `layers` SAGEConv (mean) layers; torch_geometric's SAGEConv
    when it imports, else the plain-torch one above (the same formula), said in `what`."""
    import torch
    import torch.nn.functional as F
    if torch_geometric_available():
        from torch_geometric.nn import SAGEConv
        conv, what = (lambda i, o: SAGEConv(i, o, aggr="mean")), "torch_geometric SAGEConv (mean)"
    else:
        conv, what = make_sage_conv_torch(), "plain-torch SAGEConv (mean; no torch_geometric here)"

    class Sage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            dims = [in_dim] + [hidden] * (layers - 1) + [classes]
            self.convs = torch.nn.ModuleList(conv(dims[i], dims[i + 1]) for i in range(layers))

        def forward(self, x, blocks):
            for i, (edge_index, num_src, num_dst) in enumerate(blocks):
                x = self.convs[i]((x[:num_src], x[:num_dst]), edge_index, size=(num_src, num_dst))
                if i + 1 < len(blocks):
                    x = F.dropout(F.relu(x), p=dropout, training=self.training)
            return x

    return Sage(), what


def pyg_available():
    """'pyg_lib' or 'torch_sparse' when NeighborLoader can sample here (torch_geometric and one
    of them import), else None."""
    if not torch_geometric_available():
        return None
    for lib in ("pyg_lib", "torch_sparse"):
        try:
            __import__(lib)
            return lib
        except Exception:  # noqa: BLE001 - ImportError, or OSError from a build for another torch
            pass
    return None


# ---- self-test (numpy only) -------------------------------------------------------------


def chi2_z(stat, dof):
    """Wilson-Hilferty: the standard normal deviate of a chi-square statistic with `dof`
    degrees of freedom (z > 3.09 is p < 0.001 one-sided; no scipy needed)."""
    if dof <= 0:
        return 0.0
    return ((stat / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / (2 / (9 * dof)) ** 0.5


def inclusion_chi2(counts, draws, k):
    """Marginal uniformity of sampling k of d positions without replacement, `draws` times:
    counts[p] = times position p was picked. Each count has variance draws*q*(1-q), q = k/d,
    and the counts sum to draws*k, so sum((c - draws*q)^2 / (draws*q*(1-q))) * (d-1)/d is
    ~chi-square with d-1 d.o.f. Returns (statistic, dof)."""
    d = len(counts)
    q = k / d
    e = draws * q
    return float(((counts - e) ** 2).sum() / (e * (1 - q)) * (d - 1) / d), d - 1


def homogeneity_chi2(a, b, draws, k):
    """Do two samplers pick the d positions alike? a, b: inclusion counts of `draws` draws of
    k of d without replacement each. a - b has variance 2*draws*q*(1-q) per position (q = k/d)
    and sums to 0, so sum((a - b)^2) / (2*draws*q*(1-q)) * (d-1)/d is ~chi-square with d-1
    d.o.f. when both draw from the same distribution. Returns (statistic, dof)."""
    d = len(a)
    q = k / d
    return float(((a - b) ** 2).sum() / (2 * draws * q * (1 - q)) * (d - 1) / d), d - 1


def two_sample_chi2(a, b):
    """Homogeneity of two count vectors over the same positions (2 x d contingency table):
    (statistic, dof); positions with no count in either are left out."""
    keep = (a + b) > 0
    a, b = a[keep].astype(float), b[keep].astype(float)
    if len(a) < 2 or a.sum() == 0 or b.sum() == 0:
        return 0.0, 0
    tot = a + b
    ea, eb = tot * a.sum() / tot.sum(), tot * b.sum() / tot.sum()
    return float(((a - ea) ** 2 / ea).sum() + ((b - eb) ** 2 / eb).sum()), len(a) - 1



def self_test():
    rng = np.random.default_rng(7)
    n = 2000
    # In-degrees: zeros, small, around the fan-outs, and a few hubs; neighbour lists without
    # repeats so that distinct positions = distinct neighbours.
    deg = rng.choice([0, 1, 3, 5, 9, 10, 11, 25, 60, 400], size=n, p=[.05, .1, .15, .15, .1, .1, .1, .1, .1, .05])
    indptr = np.zeros(n + 1, np.int64)
    indptr[1:] = np.cumsum(deg)
    indices = np.concatenate([rng.choice(n, size=d, replace=False) for d in deg]).astype(np.uint32)
    nbrs = [set(indices[indptr[v]:indptr[v + 1]].tolist()) for v in range(n)]
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    cases = 0
    for fanouts in ([10, 10], [5, 3, 2], [25], [-1, 4], [0, 3]):
        sampler = CscSampler(indptr, indices, fanouts)
        for trial in range(6):
            seeds = rng.choice(n, size=int(rng.integers(1, 200)), replace=False)
            n_id, src, dst, counts = sampler.sample(seeds, np.random.default_rng([trial, 1]))
            r = reference_sample(indptr, indices, fanouts, seeds, np.random.default_rng([trial, 1]), sampler.draws)
            tag = f"fanouts {fanouts} trial {trial}"
            check(np.array_equal(n_id, r[0]) and np.array_equal(src, r[1]) and np.array_equal(dst, r[2])
                  and list(counts) == list(r[3]), f"{tag}: vectorised != reference")
            check(len(np.unique(n_id)) == len(n_id), f"{tag}: n_id has duplicates")
            check(np.array_equal(n_id[:len(seeds)], seeds), f"{tag}: seeds are not first")
            check(sum(counts) == len(n_id) and len(counts) == len(fanouts) + 1, f"{tag}: counts {counts}")
            sizes = np.concatenate([[0], np.cumsum(counts)])
            for h, k in enumerate(fanouts):
                lo, hi = sizes[h], sizes[h + 1]  # the nodes expanded at hop h+1: those first seen at hop h
                sel = (dst >= lo) & (dst < hi)
                got = np.bincount(dst[sel] - lo, minlength=hi - lo)
                per_node = np.split(src[sel], np.cumsum(got)[:-1])  # edges are grouped by dst
                for i, v in enumerate(n_id[lo:hi]):
                    d = len(nbrs[v])
                    want = 0 if k == 0 else d if k < 0 else min(k, d)
                    check(got[i] == want, f"{tag}: node {v} got {got[i]} neighbours, want min({k}, {d})")
                    mine = n_id[per_node[i]].tolist()
                    check(set(mine) <= nbrs[v], f"{tag}: node {v}: a sampled neighbour is not an in-neighbour")
                    check(len(set(mine)) == len(mine), f"{tag}: node {v}: duplicate neighbours")
            check(len(dst) == 0 or dst.max() < sizes[-1] - counts[-1], f"{tag}: the last hop's nodes were expanded")
            check(counts_from_edges(len(n_id), len(seeds), src, dst, len(fanouts)) == list(counts),
                  f"{tag}: counts_from_edges")
            blocks = blocks_from_edges(src, dst, counts, len(fanouts))
            check(len(blocks) == len(fanouts), f"{tag}: {len(blocks)} blocks")
            for e, num_src, num_dst in blocks:
                check(e.shape[0] == 2 and (e.shape[1] == 0 or (e[0].max() < num_src and e[1].max() < num_dst)),
                      f"{tag}: block ids out of range")
            check(blocks[0][0].shape[1] == len(src), f"{tag}: the input layer lacks edges")
            cases += 1
    # Uniformity: a node of in-degree 25 with fan-out 5: each position ~ 5/25 of the draws.
    v = int(np.flatnonzero(deg == 25)[0])
    sampler = CscSampler(indptr, indices, [5])
    hits = np.zeros(25)
    trials = 4000
    g = np.random.default_rng(3)
    for _ in range(trials):
        n_id, src, dst, _ = sampler.sample(np.array([v]), g)
        pos = {w: p for p, w in enumerate(indices[indptr[v]:indptr[v + 1]].tolist())}
        for w in n_id[src]:
            hits[pos[int(w)]] += 1
    expect = trials * 5 / 25
    chi2 = float(((hits - expect) ** 2 / expect).sum())  # 24 d.o.f.: p = 0.001 at 51.2
    check(chi2 < 51.2, f"uniformity: chi2 {chi2:.1f} over 25 positions")
    # Without replacement, jointly uniform: every 3-subset of a degree-9 node's 9 positions
    # equally likely (84 subsets, ~100 draws each; many degree-9 seeds per batch, one hop).
    nine = np.flatnonzero(deg == 9)
    pos_of = {int(v): {w: p for p, w in enumerate(indices[indptr[v]:indptr[v + 1]].tolist())} for v in nine}
    sub_index = {}
    for a in range(9):
        for b in range(a + 1, 9):
            for c in range(b + 1, 9):
                sub_index[(a, b, c)] = len(sub_index)
    sub_hits = np.zeros(len(sub_index))
    sampler = CscSampler(indptr, indices, [3])
    g = np.random.default_rng(5)
    draws9 = 0
    while draws9 < 100 * len(sub_index):
        n_id, src, dst, _ = sampler.sample(nine, g)
        picked = n_id[src].reshape(len(nine), 3)  # edges grouped by dst, 3 per seed
        for i, v in enumerate(nine.tolist()):
            sub_hits[sub_index[tuple(sorted(pos_of[v][int(w)] for w in picked[i]))]] += 1
        draws9 += len(nine)
    e9 = draws9 / len(sub_index)
    sub_chi2 = float(((sub_hits - e9) ** 2 / e9).sum())
    sub_z = chi2_z(sub_chi2, len(sub_index) - 1)
    check(sub_z < 3.09, f"subset uniformity: chi2 {sub_chi2:.1f} on {len(sub_index) - 1} d.o.f. (z {sub_z:.2f})")
    # The gather returns rows in the ids' order.
    feats = np.arange(40, dtype=np.float32).reshape(20, 2)
    ids = np.array([7, 3, 19, 0, 3])
    check(np.array_equal(gather_rows(feats, ids), feats[ids]), "gather_rows")
    # Speed: a 2-hop 10,10 batch of 1000 seeds on a 200K-node graph (no Python loop per edge).
    big_n = 200000
    big_deg = rng.poisson(10, size=big_n)
    big_indptr = np.zeros(big_n + 1, np.int64)
    big_indptr[1:] = np.cumsum(big_deg)
    big_idx = rng.integers(0, big_n, size=int(big_indptr[-1])).astype(np.uint32)
    s = CscSampler(big_indptr, big_idx, [10, 10])
    t0 = time.perf_counter()
    for b in range(5):
        n_id, src, dst, counts = s.sample(rng.choice(big_n, 1000, replace=False), np.random.default_rng(b))
    per_batch = (time.perf_counter() - t0) / 5
    print(f"pyg_peer self-test: {cases} sampled batches equal to the reference (fan-outs 10,10 / 5,3,2 / 25 / "
          f"-1,4 / 0,3), validity checks, uniformity chi2 {chi2:.1f} (24 d.o.f.), 3-subsets of 9 "
          f"chi2 {sub_chi2:.1f} ({len(sub_index) - 1} d.o.f., z {sub_z:.2f}, {draws9} draws), "
          f"{per_batch * 1000:.1f} ms per 1000-seed 10,10 batch ({len(src)} edges, {len(n_id)} nodes)")
    for f in failures[:20]:
        print("FAILED:", f)
    print("pyg_peer self-test:", "FAILED" if failures else "passed")
    return 1 if failures else 0


def read_seer_output_layer(trace_dir):
    """Yields (seed ids, neighbour ids per seed) of every batch of a `seer sample --out` trace
    with one layer (docs/formats.md "Trace files": little-endian int64 words, col_idx int32)."""
    meta = json.load(open(os.path.join(trace_dir, "trace.json")))
    for sb in meta["superbatches"]:
        w = np.fromfile(os.path.join(trace_dir, sb["file"]), dtype="<i8")
        assert w[0] == 0x3154425352454553 and w[1] == 1, "not a version-1 .sbt file"
        pos = 8
        for _ in range(int(w[4])):
            size, num_seeds, n, layers = int(w[pos]) // 8, int(w[pos + 3]), int(w[pos + 4]), int(w[pos + 5])
            assert layers == 1, "expected a one-layer trace"
            num_dst, num_src, num_edges = (int(x) for x in w[pos + 6:pos + 9])
            at = pos + 9
            node_ids = w[at:at + n]
            at += n
            row_ptr = w[at:at + num_dst + 1]
            at += num_dst + 1
            col = w[at:at + (num_edges + 1) // 2].view("<i4")[:num_edges]
            nbr = node_ids[col]
            yield node_ids[:num_seeds], [nbr[row_ptr[i]:row_ptr[i + 1]] for i in range(num_dst)]
            pos += size


def check_vs_seer(seer, epochs, fanout):
    """The vectorised sampler against Seer's own (`seer sample`) on one generated graph: one hop
    of `fanout`, every training node a seed once per epoch, `epochs` epochs. Every draw of both
    samplers has min(fanout, d) in-neighbours, without a repeat where the node's in-neighbour
    ids have none (multi-edges aside). For every seed of in-degree d in (fanout, 20] with
    distinct in-neighbours: each position's inclusion count ~ epochs*fanout/d (chi-square per
    sampler, summed over the seeds), and Seer's counts vs the peer's (homogeneity, summed).
    Pass: no count or repeat error and every z < 3.09 (p < 0.001)."""
    import subprocess
    import tempfile
    work = tempfile.mkdtemp(prefix="pyg-peer-vs-seer-")
    data, trace = os.path.join(work, "g"), os.path.join(work, "t")
    t0 = time.perf_counter()
    subprocess.run([seer, "gen", "--nodes", "20000", "--avg-degree", "8", "--feature-dim", "4",
                    "--train-fraction", "0.25", "--seed", "3", "--out", data, "--force", "--quiet"], check=True)
    subprocess.run([seer, "sample", data, "--out", trace, "--fanouts", str(fanout), "--batch-size", "1000",
                    "--superbatch", "1000", "--epochs", str(epochs), "--seed", "1", "--force", "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    manifest, indptr, indices, _, _, split = load_dataset(data)
    indptr, indices = np.asarray(indptr), np.asarray(indices, dtype=np.int64)
    train = split["train"]
    deg = indptr[train + 1] - indptr[train]
    tested, distinct = {}, set()  # distinct: in-neighbour ids without repeats (no multi-edges)
    for v, d in zip(train.tolist(), deg.tolist()):
        nb = indices[indptr[v]:indptr[v + 1]]
        if len(np.unique(nb)) == d:
            distinct.add(v)
            if fanout < d <= 20:
                tested[v] = {w: p for p, w in enumerate(nb.tolist())}
    counts = {name: {v: np.zeros(len(m)) for v, m in tested.items()} for name in ("seer", "peer")}
    errors = {"seer": 0, "peer": 0}
    draws = {"seer": 0, "peer": 0}

    def record(name, seeds, nbrs):
        for v, nb in zip(seeds.tolist(), nbrs):
            d = int(indptr[v + 1] - indptr[v])
            if len(nb) != min(fanout, d) or (v in distinct and len(np.unique(nb)) != len(nb)):
                errors[name] += 1
            m = tested.get(v)
            if m is not None:
                draws[name] += 1
                c = counts[name][v]
                for w in nb.tolist():
                    c[m[w]] += 1

    for seeds, nbrs in read_seer_output_layer(trace):
        record("seer", seeds, nbrs)
    sampler = CscSampler(indptr, indices, [fanout])
    rng = np.random.default_rng(11)
    for epoch in range(epochs):
        perm = rng.permutation(train)
        for b in range(0, len(perm), 1000):
            seeds = perm[b:b + 1000]
            n_id, src, dst, _ = sampler.sample(seeds, rng)
            cuts = np.searchsorted(dst, np.arange(1, len(seeds)))
            record("peer", seeds, np.split(n_id[src], cuts))
    ok = not errors["seer"] and not errors["peer"] and draws["seer"] == draws["peer"] == epochs * len(tested)
    line = [f"pyg_peer vs seer: {len(tested)} seeds of in-degree {fanout + 1}-20, {epochs} draws each, fan-out {fanout}"]
    for name in ("seer", "peer"):
        st = [inclusion_chi2(c, epochs, fanout) for c in counts[name].values()]
        chi, dof = sum(x for x, _ in st), sum(y for _, y in st)
        z = chi2_z(chi, dof)
        ok &= z < 3.09
        line.append(f"{name}: count/duplicate errors {errors[name]}, inclusion chi2 {chi:.0f} on {dof} d.o.f. (z {z:+.2f})")
    st = [homogeneity_chi2(counts["seer"][v], counts["peer"][v], epochs, fanout) for v in tested]
    chi, dof = sum(x for x, _ in st), sum(y for _, y in st)
    z = chi2_z(chi, dof)
    ok &= z < 3.09
    line.append(f"seer vs peer homogeneity chi2 {chi:.0f} on {dof} d.o.f. (z {z:+.2f})")
    print("; ".join(line) + f" ({time.perf_counter() - t0:.1f} s): " + ("passed" if ok else "FAILED"))
    import shutil
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


# ---- training -----------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", nargs="?")
    ap.add_argument("--fanouts", default="10,10,10")
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--prefetch-factor", type=int, default=2,
                    help="batches each loader worker keeps ready (PyTorch's default 2; 1 halves the batches in memory)")
    ap.add_argument("--no-train", action="store_true", help="sample and gather only (the data path)")
    ap.add_argument("--sampler", choices=["auto", "pyg", "fallback"], default="auto",
                    help="auto: NeighborLoader when pyg-lib or torch-sparse imports, else the vectorised fallback")
    ap.add_argument("--metrics", default="")
    ap.add_argument("--self-test", action="store_true", help="check the vectorised sampler (numpy only) and exit")
    ap.add_argument("--check-vs-seer", metavar="SEER",
                    help="compare the vectorised sampler's draws with `SEER sample` on a generated graph and exit")
    args = ap.parse_args()
    if args.self_test:
        sys.exit(self_test())
    if args.check_vs_seer:
        sys.exit(check_vs_seer(args.check_vs_seer, epochs=40, fanout=5))
    if not args.dataset:
        ap.error("DATASET is required (or --self-test)")

    import torch
    import torch.nn.functional as F

    torch.manual_seed(args.seed)
    fanouts = [int(f) for f in args.fanouts.split(",")]
    manifest, indptr, indices, feats, labels, split = load_dataset(args.dataset)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    metrics = []
    loader_kw = {"num_workers": args.workers, "persistent_workers": args.workers > 0}
    if args.workers > 0:  # forked workers share the memmaps; no pickling, no shared-memory copies
        loader_kw.update(prefetch_factor=args.prefetch_factor, multiprocessing_context="fork")

    lib = pyg_available() if args.sampler != "fallback" else None
    if args.sampler == "pyg" and lib is None:
        sys.exit("pyg_peer: --sampler pyg needs pyg-lib or torch-sparse")
    sampler_name = f"NeighborLoader ({lib})" if lib else "vectorised fallback (NeighborLoader's rule)"
    pyg_csc = None

    def pyg_loader(ids, shuffle):
        nonlocal pyg_csc
        from torch_geometric.data import Data
        from torch_geometric.loader import NeighborLoader
        from torch_geometric.sampler import NeighborSampler
        n = manifest["num_nodes"]
        if pyg_csc is None:
            colptr = np.memmap(os.path.join(args.dataset, "indptr.bin"), dtype=np.int64, mode="c", shape=(n + 1,))
            pyg_csc = (torch.from_numpy(colptr), torch.from_numpy(int64_indices(args.dataset, manifest, indices)))
        empty = torch.empty((2, 0), dtype=torch.long)
        # PyG's own sampler, built on a one-node graph (no CSC conversion, no share_memory_()
        # copy), then pointed at Seer's CSC: colptr = indptr, row = in-neighbour ids.
        sampler = NeighborSampler(Data(edge_index=empty, num_nodes=1), num_neighbors=fanouts, replace=False,
                                  share_memory=False)
        sampler.colptr, sampler.row, sampler.perm = pyg_csc[0], pyg_csc[1], None
        sampler.num_nodes = n
        return NeighborLoader(Data(edge_index=empty, num_nodes=n), num_neighbors=fanouts, neighbor_sampler=sampler,
                              input_nodes=torch.from_numpy(ids), batch_size=args.batch_size, shuffle=shuffle,
                              filter_per_worker=True, transform=PygGather(feats, labels), **loader_kw)

    def fallback_loader(ids, shuffle):
        collate = FallbackCollate(CscSampler(indptr, indices, fanouts), feats, labels, len(fanouts), args.seed)
        return torch.utils.data.DataLoader(ids.tolist(), batch_size=args.batch_size, shuffle=shuffle,
                                           collate_fn=collate, **loader_kw)

    def unpack(batch):
        if isinstance(batch, tuple):  # the fallback's (x, y, blocks), torch tensors already
            return batch
        src, dst = batch.edge_index[0].numpy(), batch.edge_index[1].numpy()  # source -> target
        counts = getattr(batch, "num_sampled_nodes", None)
        counts = ([int(c) for c in counts] if counts is not None and len(counts) == len(fanouts) + 1 else
                  counts_from_edges(int(batch.n_id.numel()), int(batch.batch_size), src, dst, len(fanouts)))
        blocks = blocks_from_edges(src, dst, counts, len(fanouts))
        return batch.x, batch.y, [(torch.from_numpy(e), s, d) for e, s, d in blocks]

    loader_for = pyg_loader if lib else fallback_loader
    if lib:  # one batch in this process first: a PyG API drift falls back instead of failing the run
        try:
            probe = pyg_loader(split["train"][:args.batch_size], False)
            unpack(probe.collate_fn(list(range(min(len(split["train"]), args.batch_size)))))
        except Exception as e:  # noqa: BLE001 - any failure of the PyG path
            print(f"pyg_peer: WARNING: NeighborLoader failed on a probe batch ({type(e).__name__}: {e}); "
                  f"using the vectorised fallback", file=sys.stderr)
            lib, loader_for = None, fallback_loader
            sampler_name = "vectorised fallback (NeighborLoader's rule; NeighborLoader failed)"
    print(f"pyg_peer: sampler {sampler_name}, device {device}, {args.workers} loader workers "
          f"(prefetch factor {args.prefetch_factor})", file=sys.stderr)

    in_dim, classes = manifest["feature_dim"], manifest["num_classes"]
    model, model_what = make_model(in_dim, args.hidden, classes, len(fanouts), args.dropout)
    model = model.to(device)
    print(f"pyg_peer: model GraphSAGE, {model_what}", file=sys.stderr)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    metrics.append({"type": "start", "budget_bytes": 0, "table_bytes": 0, "staging_bytes": 0, "trace_bytes": 0,
                    "ncache_bytes": 0, "fcache_bytes": 0, "fcache_rows": 0, "policy": "none",
                    "model": "none" if args.no_train else "sage", "model_impl": model_what, "loader_workers": args.workers, "prefetch_factor": args.prefetch_factor,
                    "pipeline": "pyg-peer", "io": "np.memmap",
                    "sampler": sampler_name})
    train_loader = loader_for(split["train"], True)
    for epoch in range(args.epochs):
        model.train()
        t0 = time.perf_counter()
        wait = compute = 0.0
        loss_sum, batches, seeds, correct, labeled = 0.0, 0, 0, 0, 0
        it = iter(train_loader)
        while True:
            tw = time.perf_counter()
            try:
                x, y, blocks = unpack(next(it))
            except StopIteration:
                break
            wait += time.perf_counter() - tw
            batches += 1
            seeds += len(y)
            if args.no_train:
                continue
            tc = time.perf_counter()
            x = x.to(device, non_blocking=True).float()
            blocks = [(e.to(device, non_blocking=True), s, d) for e, s, d in blocks]
            y = y.to(device)
            out = model(x, blocks)
            mask = y >= 0
            loss = F.cross_entropy(out[mask], y[mask])
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            correct += int((out[mask].argmax(1) == y[mask]).sum())
            labeled += int(mask.sum())
            if device.type == "cuda":
                torch.cuda.synchronize()
            compute += time.perf_counter() - tc
        seconds = time.perf_counter() - t0
        metrics.append({"type": "epoch", "epoch": epoch + 1, "batches": batches, "seeds": seeds,
                        "train_loss": loss_sum / max(1, batches), "train_accuracy": correct / max(1, labeled),
                        "seconds": {"epoch": seconds, "inspect": 0, "plan": 0, "gather": wait, "io_wait": 0,
                                    "cache_update": 0, "transfer": 0, "compute": compute, "stall": wait, "eval": 0},
                        "samples_per_second": seeds / seconds if seconds > 0 else 0,
                        "fcache_accesses": 0, "fcache_hits": 0, "fcache_hit_ratio": 0, "fcache_fill_rows": 0,
                        "ncache_lookups": 0, "ncache_hits": 0, "ncache_hit_ratio": 0,
                        "feature_ssd_bytes": -1, "feature_ssd_reads": -1,
                        "topology_ssd_bytes": -1, "topology_ssd_reads": -1})
        print(f"pyg_peer: epoch {epoch + 1}: {seconds:.2f} s, waiting for batches {wait:.2f} s, compute {compute:.2f} s, "
              f"loss {loss_sum / max(1, batches):.4f}", file=sys.stderr)
    # The training loader's persistent workers end here: they would otherwise live on beside
    # the test loader's (twice the workers' memory under the run's limit).
    it = train_loader = None
    import gc
    gc.collect()
    test_acc = -1.0
    if not args.no_train and len(split["test"]):
        model.eval()
        correct = labeled = 0
        with torch.no_grad():
            for batch in loader_for(split["test"], False):
                x, y, blocks = unpack(batch)
                out = model(x.to(device).float(), [(e.to(device), s, d) for e, s, d in blocks])
                mask = y >= 0
                correct += int((out.cpu()[mask].argmax(1) == y[mask]).sum())
                labeled += int(mask.sum())
        test_acc = correct / max(1, labeled)
        print(f"test accuracy {test_acc:.4f}")
    metrics.append({"type": "final", "test_accuracy": test_acc,
                    "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "seconds": 0,
                    "best_valid_accuracy": -1, "best_epoch": -1, "stopped_early": False})
    if args.metrics:
        with open(args.metrics, "w") as f:
            f.writelines(json.dumps(m) + "\n" for m in metrics)


if __name__ == "__main__":
    main()
