#!/usr/bin/env python3
"""The PyTorch Geometric peer of bench/e2e.sh (issue 6): Ginex's PyG+ baseline, run on a
Seer dataset directory, with Seer's hyper-parameters.

  * topology: Seer's CSC (indptr.bin int64, indices.bin uint32/int64) memory-mapped;
  * features: np.memmap of the same features.bin, read-ahead off (madvise MADV_RANDOM),
    rows gathered per batch through the page cache in the loader's worker processes;
  * sampling: torch_geometric.loader.NeighborLoader (needs pyg-lib or torch-sparse) over
    the CSC given as a SparseTensor adj_t; without either library, a vectorised uniform
    sampler in the same DataLoader workers (positions drawn with replacement, merged) —
    the run prints which one it used;
  * model: torch_geometric.nn.SAGEConv (mean), Adam, cross-entropy, dropout — the same
    hyper-parameters as `seer train` (hidden, layers = fan-outs, lr, dropout, batch).

Writes the same JSON lines as `seer train --metrics` (start / epoch / final), so
bench/e2e.sh parses both alike. Feature/topology SSD reads are not measured here (-1).

  python3 bench/pyg_peer.py DATASET --fanouts 10,10,10 --batch-size 1000 --hidden 256 \
      --epochs 2 --metrics out.jsonl
"""
import argparse
import json
import mmap
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load_dataset(path):
    manifest = json.load(open(os.path.join(path, "dataset.json")))
    n, dim = manifest["num_nodes"], manifest["feature_dim"]
    index_dtype = np.uint32 if manifest["index_dtype"] == "uint32" else np.int64
    feature_dtype = np.float16 if manifest["feature_dtype"] == "float16" else np.float32
    indptr = np.memmap(os.path.join(path, "indptr.bin"), dtype=np.int64, mode="r", shape=(n + 1,))
    indices = np.memmap(os.path.join(path, "indices.bin"), dtype=index_dtype, mode="r")
    feats = np.memmap(os.path.join(path, "features.bin"), dtype=feature_dtype, mode="r", shape=(n, dim))
    for arr in (indices, feats):  # PyG+ in Ginex §5: no read-ahead on the mmapped data
        if hasattr(arr, "_mmap") and arr._mmap is not None and hasattr(mmap, "MADV_RANDOM"):
            arr._mmap.madvise(mmap.MADV_RANDOM)
    labels = np.fromfile(os.path.join(path, "labels.bin"), dtype=np.int32)
    split = {s: np.fromfile(os.path.join(path, s + ".bin"), dtype=np.int64) for s in ("train", "valid", "test")}
    return manifest, indptr, indices, feats, labels, split


class UniformSampler:
    """Fallback sampler (no pyg-lib / torch-sparse): per layer, `fanout` in-neighbours per
    node drawn uniformly with replacement and merged; all neighbours when degree <= fanout.
    Returns (n_id, [edge_index per layer, input layer first], batch_size)."""

    def __init__(self, indptr, indices, fanouts, seed):
        self.indptr, self.indices, self.fanouts, self.seed = indptr, indices, fanouts, seed

    def __call__(self, seeds):
        seeds = np.asarray(seeds, dtype=np.int64)
        rng = np.random.default_rng([self.seed, int(seeds[0]), len(seeds)])
        nodes = seeds
        local = {int(v): i for i, v in enumerate(seeds)}
        order = list(seeds)
        blocks = []
        dst_count = len(seeds)
        for fanout in self.fanouts:
            dst = np.asarray(order[:dst_count], dtype=np.int64)
            start, deg = self.indptr[dst], self.indptr[dst + 1] - self.indptr[dst]
            take = np.minimum(deg, fanout)
            rows = np.repeat(np.arange(len(dst)), take)
            offs = np.concatenate([np.arange(t) for t in take]) if len(take) else np.zeros(0, np.int64)
            small = deg[rows] <= fanout
            pos = np.where(small, offs, (rng.random(len(rows)) * deg[rows]).astype(np.int64))
            pairs = np.unique(np.stack([rows, pos]), axis=1) if len(rows) else np.zeros((2, 0), np.int64)
            src_global = np.asarray(self.indices[start[pairs[0]] + pairs[1]], dtype=np.int64)
            src_local = np.empty(len(src_global), dtype=np.int64)
            for k, v in enumerate(src_global.tolist()):
                i = local.get(v)
                if i is None:
                    i = local[v] = len(order)
                    order.append(v)
                src_local[k] = i
            blocks.append((np.stack([src_local, pairs[0]]), len(order), dst_count))
            dst_count = len(order)
        blocks.reverse()  # input layer first
        return np.asarray(order, dtype=np.int64), blocks, len(seeds)


def make_model(in_dim, hidden, classes, layers, dropout):
    from torch_geometric.nn import SAGEConv

    class Sage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            dims = [in_dim] + [hidden] * (layers - 1) + [classes]
            self.convs = torch.nn.ModuleList(SAGEConv(dims[i], dims[i + 1], aggr="mean") for i in range(layers))

        def forward(self, x, blocks):
            for i, (edge_index, num_src, num_dst) in enumerate(blocks):
                x = self.convs[i]((x[:num_src], x[:num_dst]), edge_index, size=(num_src, num_dst))
                if i + 1 < len(blocks):
                    x = F.dropout(F.relu(x), p=dropout, training=self.training)
            return x

    return Sage()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("--fanouts", default="10,10,10")
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--no-train", action="store_true", help="sample and gather only (the data path)")
    ap.add_argument("--sampler", choices=["auto", "pyg", "fallback"], default="auto")
    ap.add_argument("--metrics", default="")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    fanouts = [int(f) for f in args.fanouts.split(",")]
    manifest, indptr, indices, feats, labels, split = load_dataset(args.dataset)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    metrics = []

    use_pyg = args.sampler == "pyg"
    if args.sampler == "auto":
        use_pyg = False
        for lib in ("pyg_lib", "torch_sparse"):
            try:
                __import__(lib)
                use_pyg = True
            except ImportError:
                pass
    print(f"pyg_peer: sampler {'NeighborLoader' if use_pyg else 'fallback uniform sampler'}, device {device}, "
          f"{args.workers} loader workers", file=sys.stderr)

    def loader_for(ids, shuffle):
        if use_pyg:
            from torch_geometric.data import Data
            from torch_geometric.loader import NeighborLoader
            from torch_sparse import SparseTensor
            n = manifest["num_nodes"]
            adj_t = SparseTensor(rowptr=torch.from_numpy(np.asarray(indptr)),
                                 col=torch.from_numpy(np.asarray(indices, dtype=np.int64)), sparse_sizes=(n, n))
            data = Data(adj_t=adj_t, num_nodes=n)
            return NeighborLoader(data, num_neighbors=fanouts, batch_size=args.batch_size, shuffle=shuffle,
                                  input_nodes=torch.from_numpy(ids), num_workers=args.workers,
                                  persistent_workers=args.workers > 0)
        sampler = UniformSampler(indptr, indices, fanouts, args.seed)
        order = torch.from_numpy(ids)

        def collate(seeds):
            n_id, blocks, bs = sampler(np.asarray(seeds))
            x = torch.from_numpy(np.ascontiguousarray(feats[np.sort(n_id)][np.argsort(np.argsort(n_id))]))
            y = torch.from_numpy(labels[n_id[:bs]].astype(np.int64))
            return x, [(torch.from_numpy(e), s, d) for e, s, d in blocks], y

        return torch.utils.data.DataLoader(order.tolist(), batch_size=args.batch_size, shuffle=shuffle,
                                           collate_fn=collate, num_workers=args.workers,
                                           persistent_workers=args.workers > 0, prefetch_factor=2 if args.workers else None)

    def unpack(batch):
        if use_pyg:  # NeighborLoader: gather features from the memmap, blocks from adj_t
            n_id = batch.n_id.numpy()
            x = torch.from_numpy(np.ascontiguousarray(feats[n_id]))
            y = torch.from_numpy(labels[n_id[:batch.batch_size]].astype(np.int64))
            row, col, _ = batch.adj_t.coo()  # row = dst, col = src (local ids)
            blocks, num_dst = [], batch.batch_size
            sizes = [batch.batch_size] + [int(s) for s in np.cumsum(batch.num_sampled_nodes)[1:]]
            for layer in range(len(fanouts)):
                num_src = sizes[layer + 1]
                mask = (row < sizes[layer]) & (col < num_src)
                blocks.append((torch.stack([col[mask], row[mask]]), num_src, sizes[layer]))
            blocks.reverse()
            return x, blocks, y
        return batch

    in_dim, classes = manifest["feature_dim"], manifest["num_classes"]
    model = make_model(in_dim, args.hidden, classes, len(fanouts), args.dropout).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    metrics.append({"type": "start", "budget_bytes": 0, "table_bytes": 0, "staging_bytes": 0, "trace_bytes": 0,
                    "ncache_bytes": 0, "fcache_bytes": 0, "fcache_rows": 0, "policy": "none",
                    "model": "none" if args.no_train else "sage", "pipeline": "pyg-peer", "io": "np.memmap",
                    "sampler": "NeighborLoader" if use_pyg else "fallback"})
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
                x, blocks, y = unpack(next(it))
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
            loss_sum += float(loss)
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
    test_acc = -1.0
    if not args.no_train and len(split["test"]):
        model.eval()
        correct = labeled = 0
        with torch.no_grad():
            for batch in loader_for(split["test"], False):
                x, blocks, y = unpack(batch)
                out = model(x.to(device).float(), [(e.to(device), s, d) for e, s, d in blocks])
                mask = y >= 0
                correct += int((out.cpu()[mask].argmax(1) == y[mask]).sum())
                labeled += int(mask.sum())
        test_acc = correct / max(1, labeled)
        print(f"test accuracy {test_acc:.4f}")
    metrics.append({"type": "final", "test_accuracy": test_acc, "peak_rss_bytes": -1, "seconds": 0,
                    "best_valid_accuracy": -1, "best_epoch": -1, "stopped_early": False})
    if args.metrics:
        with open(args.metrics, "w") as f:
            f.writelines(json.dumps(m) + "\n" for m in metrics)


if __name__ == "__main__":
    main()
