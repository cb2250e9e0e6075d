"""Seer from Python: out-of-core mini-batches through Seer's own data path.

    import seer
    ds = seer.Dataset("data/g")                      # a dataset of `seer gen` / `seer prep`
    loader = seer.NeighborLoader(ds, fanouts=[10, 10], batch_size=1000,
                                 memory_budget="2G", seed=1)
    for batch in loader:                              # one epoch per iteration
        out = model(batch.x, batch.edge_index)[:batch.batch_size]
        loss = F.cross_entropy(out, batch.y)

`NeighborLoader` runs `seer train --no-train`'s pipeline (the memory split, the
inspector -> planner -> gather threads, the Belady plans and cache) in C++ threads with
the GIL released; each batch carries what torch_geometric.loader.NeighborLoader gives
(n_id, x, y, edge_index, batch_size, num_sampled_nodes, num_sampled_edges) as torch
tensors. `seer.pyg` turns batches into torch_geometric.data.Data when PyG is installed.

On a typed (heterogeneous) dataset (`seer gen --hetero`, `seer prep --relation`) the
loader classifies one target node type (`target_type=`, default: the only labeled one);
n_id are global ids (type offset + local id) and batches also carry node_type, local_id
and edge_type (the relation of each edge); loader.node_types and loader.relations name
them.

Errors from Seer are `seer.SeerError` (a RuntimeError) with Seer's one-line message.
"""
import atexit
import json
import os
import weakref

import numpy as np
import torch

from ._native import SeerError
from . import _native

__all__ = ["Dataset", "NeighborLoader", "Batch", "SeerError", "parse_bytes"]


def parse_bytes(value):
    """A size as Seer's flags take it: an int (bytes) or text such as "512M", "2G"."""
    if isinstance(value, (int, np.integer)):
        if value < 0:
            raise ValueError(f"size {value}: expected >= 0 bytes")
        return int(value)
    return _native.parse_bytes(str(value))


_FEATURE_DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16}


class Dataset:
    """A Seer dataset directory, opened and checked as every `seer` command opens it.

    Nothing is loaded whole: `features`, `labels`, `indptr`, `indices` and `split(name)`
    are read-only np.memmap views of the files (the page cache holds what is touched);
    `feature_rows(ids)` and `label_rows(ids)` read the given rows only.
    """

    def __init__(self, path):
        self.path = os.path.abspath(os.fspath(path))
        self.manifest = json.loads(_native.open_dataset(self.path))
        m = self.manifest
        self.num_nodes = int(m["num_nodes"])
        self.num_edges = int(m["num_edges"])
        self.feature_dim = int(m["feature_dim"])
        self.num_classes = int(m["num_classes"])
        self.feature_dtype = m["feature_dtype"]
        self.index_dtype = m["index_dtype"]
        # A typed dataset (node types and relations; empty lists otherwise): global id of
        # local id l of node type t = node_type_offsets[t] + l (manifest order).
        self.node_types = [t["name"] for t in m.get("node_types", [])]
        self.relations = [(r["src"], r["name"], r["dst"]) for r in m.get("relations", [])]
        self.node_type_offsets = [0]
        for t in m.get("node_types", []):
            self.node_type_offsets.append(self.node_type_offsets[-1] + int(t["count"]))
        self.typed = bool(self.node_types)

    def _file(self, name):
        return os.path.join(self.path, name)

    def _memmap(self, name, dtype, shape=None):
        path = self._file(name)
        if os.path.getsize(path) == 0:
            return np.zeros(shape if shape is not None else (0,), dtype=dtype)
        return np.memmap(path, dtype=dtype, mode="r", shape=shape)

    @property
    def features(self):
        """features.bin as a (num_nodes, feature_dim) memmap in its stored dtype
        (bfloat16 rows as their raw uint16 bits; `feature_rows` decodes them)."""
        return self._memmap("features.bin", _FEATURE_DTYPES[self.feature_dtype], (self.num_nodes, self.feature_dim))

    def feature_rows(self, ids):
        """The rows of `ids` as float32 (num_ids, feature_dim); reads only those rows."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_nodes):
            bad = ids[(ids < 0) | (ids >= self.num_nodes)][0]
            raise IndexError(f"{self._file('features.bin')}: node {bad} is not in [0, {self.num_nodes})")
        raw = np.asarray(self.features[ids])
        if self.feature_dtype == "bfloat16":
            return (raw.astype(np.uint32) << 16).view(np.float32)
        return raw.astype(np.float32, copy=False)

    @property
    def labels(self):
        """labels.bin: int32 per node, -1 = unlabeled (memmap)."""
        return self._memmap("labels.bin", np.int32, (self.num_nodes,))

    def label_rows(self, ids):
        return np.asarray(self.labels[np.asarray(ids, dtype=np.int64)])

    @property
    def indptr(self):
        return self._memmap("indptr.bin", np.int64, (self.num_nodes + 1,))

    @property
    def indices(self):
        return self._memmap("indices.bin", np.uint32 if self.index_dtype == "uint32" else np.int64, (self.num_edges,))

    def neighbors(self, node):
        """The in-neighbours of `node` (CSC: the sources of its in-edges)."""
        start, end = self.indptr[node], self.indptr[node + 1]
        return np.asarray(self.indices[start:end], dtype=np.int64)

    def split(self, name):
        """The node ids of split `name` (train, valid, test) as an int64 memmap; empty when absent."""
        if name not in ("train", "valid", "test"):
            raise ValueError(f"split {name!r}: expected train, valid or test")
        path = self._file(name + ".bin")
        if not os.path.exists(path):
            return np.zeros(0, dtype=np.int64)
        return self._memmap(name + ".bin", np.int64)

    @property
    def splits(self):
        """{split name: number of nodes}."""
        return {name: int(self.split(name).shape[0]) for name in ("train", "valid", "test")}

    def __repr__(self):
        if self.typed:
            return (f"seer.Dataset({self.path!r}: typed, {len(self.node_types)} node types {self.node_types}, "
                    f"{len(self.relations)} relations, {self.num_nodes} nodes, {self.num_edges} edges)")
        return (f"seer.Dataset({self.path!r}: {self.num_nodes} nodes, {self.num_edges} edges, "
                f"{self.feature_dim} x {self.feature_dtype} features, {self.num_classes} classes, splits {self.splits})")


class Batch:
    """One mini-batch, in torch_geometric.loader.NeighborLoader's terms.

    n_id               global node ids (int64), the batch's seeds first (n_id[:batch_size])
    x                  float32 features of n_id (rows in n_id order)
    y                  int64 labels of the seeds (-1 = unlabeled)
    edge_index         int64 [2, E] in local ids (indices into n_id): row = source
                       (neighbour), col = target, the hops' edges back to back, hop 1 first
    batch_size         seeds
    num_sampled_nodes  per hop: [seeds, new at hop 1, new at hop 2, ...]
    num_sampled_edges  per hop, hop 1 first
    src_index, dst_index, neg_index   link prediction (task="link") only, else None:
                       positions into n_id (int64). Positive pair i is
                       (n_id[src_index[i]], n_id[dst_index[i]]); its negatives pair
                       n_id[src_index[i]] with n_id[neg_index[i, j]] (neg_index [P, k]), or
                       with n_id[neg_index[j]] when shared_negatives (neg_index [k])
    edge_label_index, edge_label   the same pairs in PyG's LinkNeighborLoader terms:
                       [2, P + P*k] local ids (positives first, then every negative
                       pair) and their float labels (1 positive, 0 negative)
    layers             Seer's blocks, input layer first: (edge_index, num_src, num_dst);
                       layer l reads n_id[:num_src] and writes n_id[:num_dst]; the last
                       layer's num_dst is batch_size (a GraphSAGE over layers computes what
                       `seer train` computes). Seer samples every destination at every hop
                       (each hop's block covers all nodes within the hop before), so the
                       hops of edge_index may repeat an edge.
    node_type, local_id, edge_type   typed datasets only, else None: int64 per node of
                       n_id (its type's index in loader.node_types; n_id = the type's
                       offset + local_id) and per edge of edge_index (its relation's index
                       in loader.relations: an edge (row, col) of relation r joins
                       n_id[row] of r's source type to n_id[col] of its destination type).
                       x rows are zero-padded to the widest type (a featureless type: zeros)
    layer_edge_types   typed datasets: edge_type per layer of `layers` (input layer first)
    """

    __slots__ = ("n_id", "x", "y", "edge_index", "batch_size", "num_sampled_nodes", "num_sampled_edges",
                 "block_sizes", "epoch", "batch_index", "src_index", "dst_index", "neg_index", "shared_negatives",
                 "node_type", "local_id", "edge_type")

    @classmethod
    def _from_native(cls, d, pin):
        b = cls()
        b.epoch = d["epoch"]
        b.batch_index = d["batch_index"]
        b.batch_size = d["batch_size"]
        b.n_id = torch.from_numpy(d["n_id"])
        b.x = torch.from_numpy(d["x"])
        b.y = torch.from_numpy(d["y"])
        b.edge_index = torch.from_numpy(d["edge_index"])
        b.num_sampled_nodes = list(d["num_sampled_nodes"])
        b.num_sampled_edges = list(d["num_sampled_edges"])
        b.block_sizes = [tuple(int(v) for v in row) for row in d["block_sizes"]]
        b.src_index = b.dst_index = b.neg_index = None
        b.shared_negatives = False
        if "src_index" in d:
            b.src_index = torch.from_numpy(d["src_index"])
            b.dst_index = torch.from_numpy(d["dst_index"])
            b.neg_index = torch.from_numpy(d["neg_index"])
            b.shared_negatives = bool(d["shared_negatives"])
        b.node_type = b.local_id = b.edge_type = None
        if "node_type" in d:
            b.node_type = torch.from_numpy(d["node_type"])
            b.local_id = torch.from_numpy(d["local_id"])
            b.edge_type = torch.from_numpy(d["edge_type"])
        if pin:
            b.n_id, b.x, b.y, b.edge_index = (t.pin_memory() for t in (b.n_id, b.x, b.y, b.edge_index))
            if b.node_type is not None:
                b.node_type, b.local_id, b.edge_type = (t.pin_memory() for t in (b.node_type, b.local_id, b.edge_type))
        return b

    @property
    def num_nodes(self):
        return int(self.n_id.shape[0])

    @property
    def edge_label_index(self):
        if self.src_index is None:
            return None
        p = int(self.src_index.shape[0])
        neg = self.neg_index.unsqueeze(0).expand(p, -1) if self.shared_negatives else self.neg_index
        k = int(neg.shape[1])
        src = torch.cat([self.src_index, self.src_index.repeat_interleave(k)])
        dst = torch.cat([self.dst_index, neg.reshape(-1)])
        return torch.stack([src, dst])

    @property
    def edge_label(self):
        if self.src_index is None:
            return None
        p = int(self.src_index.shape[0])
        k = int(self.neg_index.shape[-1])
        return torch.cat([torch.ones(p), torch.zeros(p * k)])

    def hop_edge_index(self, hop):
        """Hop `hop`'s edges (1 = the seeds' neighbours) as [2, E_hop]."""
        start = sum(self.num_sampled_edges[: hop - 1])
        return self.edge_index[:, start : start + self.num_sampled_edges[hop - 1]]

    @property
    def layers(self):
        hops = len(self.num_sampled_edges)
        out = []
        for layer in range(hops):
            hop = hops - layer
            num_src, num_dst = self.block_sizes[hop - 1]
            out.append((self.hop_edge_index(hop), num_src, num_dst))
        return out

    def hop_edge_type(self, hop):
        """Typed datasets: hop `hop`'s edge types, parallel to hop_edge_index(hop)."""
        if self.edge_type is None:
            return None
        start = sum(self.num_sampled_edges[: hop - 1])
        return self.edge_type[start : start + self.num_sampled_edges[hop - 1]]

    @property
    def layer_edge_types(self):
        """Typed datasets: edge_type per layer of `layers` (input layer first); else None."""
        if self.edge_type is None:
            return None
        hops = len(self.num_sampled_edges)
        return [self.hop_edge_type(hops - layer) for layer in range(hops)]

    def to(self, device, non_blocking=False):
        """A copy with the tensors on `device` (non_blocking from pinned batches)."""
        b = Batch()
        for name in self.__slots__:
            value = getattr(self, name)
            if isinstance(value, torch.Tensor):
                value = value.to(device, non_blocking=non_blocking)
            setattr(b, name, value)
        return b

    def __repr__(self):
        return (f"seer.Batch(epoch {self.epoch}, batch {self.batch_index}: batch_size={self.batch_size}, "
                f"nodes={self.num_nodes}, edges={int(self.edge_index.shape[1])}, "
                f"num_sampled_nodes={self.num_sampled_nodes})")


_open_loaders = weakref.WeakSet()


@atexit.register
def _close_open_loaders():
    # Stops any running epoch and removes the runtime directories before the interpreter
    # tears the module down.
    for loader in list(_open_loaders):
        loader.close()


class NeighborLoader:
    """Mini-batches of `split`'s seeds through Seer's pipeline; iterate once per epoch.

    The flags are `seer train`'s and mean the same (the same memory split, the same
    batches for the same seed, the same Belady plans and misses as
    `seer train --no-train`):
      fanouts         neighbours per hop, hop 1 first (-1 = all)
      batch_size      seeds per batch
      split           "train", "valid" or "test"
      memory_budget   bytes or "4G"; with budget_scope="process" (the default) what the
                      process holds when the loader opens (Python, torch, your model so
                      far) is measured and paid first, as `seer train` pays its runtime;
                      budget_scope="data" budgets Seer's data path alone
      feature_cache   belady | static-degree | presc | lru | none
      superbatch      "auto" or batches per superbatch (Belady's lookahead)
      fcache_budget, ncache_budget   fixed cache sizes (None = from the split)
      seed, shuffle   the epoch's seed order is shuffled by (seed, epoch)
      device          "cpu", or "cuda"/"cuda:N": batch tensors in pinned memory, ready
                      for batch.to(device, non_blocking=True)
      num_threads     sampling threads (0 = all cores)
      direct_io       O_DIRECT reads (False: buffered, e.g. on tmpfs)
      task            "node", or "link" (`seer train --task link`'s batches): split
                      "train" gives batches of batch_size training edges, each with
                      `negatives` negatives (negative_dist "uniform" | "degree",
                      shared_negatives: k per batch) drawn by the inspector, so the cache
                      plans their rows; "valid"/"test" give the held-out edges of
                      `seer split-edges` with their fixed negatives (or eval_negatives
                      drawn once from the seed), batch_size * (2 + negatives) // (2 + K)
                      edges per batch (no more seeds than a training batch). Batches then carry src_index,
                      dst_index, neg_index (and edge_label_index / edge_label)
      target_type     typed datasets: the node type whose split and labels give the seeds
                      (None = the only one with labels); batches then carry node_type,
                      local_id and edge_type, named by loader.node_types / loader.relations
      relation_fanouts  typed datasets: per-relation fan-outs, {"cites": [15, 10], ...} (a
                      relation by its key "src__name__dst" or its unique name; others use
                      fanouts) or `seer train --relation-fanouts`' text
    Each `for batch in loader` runs the next epoch (0, 1, ...). Leaving an epoch early
    (break, an exception, Ctrl-C) stops its threads; the next epoch then reopens the data
    path (a fresh cache; stats()["reopens"] counts it).
    """

    def __init__(self, dataset, fanouts, batch_size=1000, split="train", memory_budget="4G",
                 feature_cache="belady", superbatch="auto", seed=0, shuffle=True, device="cpu",
                 num_threads=0, fcache_budget=None, ncache_budget=None, ncache_share=None,
                 budget_scope="process", direct_io=True, io="auto", planner="auto", overlap=True,
                 runtime_dir=None, task="node", negatives=1, negative_dist="uniform", shared_negatives=False,
                 eval_negatives=100, target_type=None, relation_fanouts=None):
        if not isinstance(dataset, Dataset):
            dataset = Dataset(dataset)
        self.dataset = dataset
        self.device = torch.device(device)
        if self.device.type not in ("cpu", "cuda"):
            raise ValueError(f"device {device!r}: expected cpu or cuda")
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {device!r}: torch sees no CUDA device")
        if budget_scope not in ("process", "data"):
            raise ValueError(f"budget_scope {budget_scope!r}: expected process or data")
        o = _native.LoaderOptions()
        o.dataset_dir = dataset.path
        o.fanouts = [int(f) for f in fanouts]
        o.batch_size = int(batch_size)
        o.split = split
        o.memory_budget_bytes = parse_bytes(memory_budget)
        o.runtime_bytes = -1 if budget_scope == "process" else 0
        if fcache_budget is not None:
            o.fcache_budget_bytes = parse_bytes(fcache_budget)
        if ncache_budget is not None:
            o.ncache_budget_bytes = parse_bytes(ncache_budget)
        if ncache_share is not None:
            o.ncache_share = float(ncache_share)
        if superbatch == "auto":
            o.superbatch = 0
        elif isinstance(superbatch, (int, np.integer)) and superbatch >= 1:
            o.superbatch = int(superbatch)
        else:
            raise ValueError(f"superbatch {superbatch!r}: expected 'auto' or a count >= 1")
        o.feature_cache = feature_cache
        o.planner = planner
        o.io = io
        o.direct_io = bool(direct_io)
        o.seed = int(seed)
        o.shuffle = bool(shuffle)
        o.num_threads = int(num_threads)
        o.overlap = bool(overlap)
        o.runtime_dir = "" if runtime_dir is None else os.fspath(runtime_dir)
        if task not in ("node", "link"):
            raise ValueError(f"task {task!r}: expected node or link")
        o.task = task
        o.negatives = int(negatives)
        o.negative_dist = negative_dist
        o.shared_negatives = bool(shared_negatives)
        o.eval_negatives = int(eval_negatives)
        if target_type is not None:
            if not dataset.typed:
                raise ValueError(f"target_type {target_type!r}: {dataset.path} is not a typed dataset")
            o.target_type = str(target_type)
        if relation_fanouts is not None:
            if isinstance(relation_fanouts, dict):
                relation_fanouts = ";".join(f"{name}=" + ",".join(str(int(f)) for f in fan)
                                            for name, fan in relation_fanouts.items())
            o.relation_fanouts = str(relation_fanouts)
        self._pin = self.device.type == "cuda"
        self._native = _native.Loader(o)
        _open_loaders.add(self)

    def __iter__(self):
        run = self._native.start_epoch()
        try:
            while True:
                d = run.next()
                if d is None:
                    return
                yield Batch._from_native(d, self._pin)
        finally:
            run.close()

    def __len__(self):
        """Batches per epoch."""
        return self._native.num_batches

    @property
    def num_seeds(self):
        return self._native.num_seeds

    @property
    def target_type(self):
        """A typed dataset's target node type (name); None for a homogeneous dataset."""
        return self._native.target_type or None

    @property
    def node_types(self):
        """A typed dataset's node type names (batch.node_type indexes them); [] otherwise."""
        return list(self.dataset.node_types)

    @property
    def relations(self):
        """A typed dataset's relations as (src type, name, dst type), manifest order
        (batch.edge_type indexes them); [] otherwise."""
        return list(self.dataset.relations)

    @property
    def node_type_offsets(self):
        """Global id of local id 0 of each node type, plus the node count at the end."""
        return list(self.dataset.node_type_offsets)

    @property
    def epoch(self):
        """The epoch the next iteration runs."""
        return self._native.next_epoch

    def stats(self):
        """Totals so far: batches, accesses, hits, misses, fill_rows, miss_reads, hit_ratio,
        and the time split (sample/plan/gather/io seconds of the pipeline's threads,
        wait_seconds = time the caller waited for a batch)."""
        return self._native.stats()

    def memory_split(self):
        """The memory split (as `seer train` prints it: "text"), its parts in bytes."""
        return self._native.split()

    def close(self):
        """Stops a running epoch and frees the data path and its runtime directory."""
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
