"""seer.NeighborLoader on a typed dataset (`seer gen --hetero`, via the CLI), against numpy
reading the dataset's files named by dataset.json: every sampled edge (src, dst,
edge_type) of every layer is an edge of that relation's CSC (R.indptr.bin /
R.indices.bin), node_type and local_id follow the types' offsets, x rows are the types'
features.bin rows (zero-padded to the widest type; a featureless type's rows are zeros),
y are the target type's labels and the seeds are its training split, each once."""
import json
import os

import numpy as np
import pytest
import torch

import seer
from conftest import run_seer


@pytest.fixture(scope="module")
def hetero(tmp_path_factory):
    root = tmp_path_factory.mktemp("seer_typed")
    d = str(root / "h")
    run_seer(f"gen --hetero --papers 900 --feature-dim 6 --classes 5 --featureless institute --seed 4 --quiet --out {d}")
    with open(os.path.join(d, "dataset.json")) as f:
        manifest = json.load(f)
    return dict(root=str(root), dataset=d, manifest=manifest)


def offsets_of(manifest):
    return np.concatenate([[0], np.cumsum([t["count"] for t in manifest["node_types"]])]).astype(np.int64)


def read_types(d, manifest):
    """Per node type: (features as float32 [count, dim] or None, labels or None)."""
    out = []
    for t in manifest["node_types"]:
        feat = None
        if t.get("feature_dim", 0) > 0:
            assert t["feature_dtype"] == "float32"
            n = t["count"] * t["feature_dim"]
            feat = np.fromfile(os.path.join(d, t["features"]), dtype="<f4", count=n).reshape(t["count"], -1)
        labels = np.fromfile(os.path.join(d, t["labels"]), dtype="<i4") if t.get("labels") else None
        out.append((feat, labels))
    return out


def relation_edge_keys(d, manifest):
    """Per relation: the sorted keys dst_local * src_count + src_local of its edges."""
    counts = {t["name"]: t["count"] for t in manifest["node_types"]}
    keys = []
    for r in manifest["relations"]:
        indptr = np.fromfile(os.path.join(d, r["indptr"]), dtype="<i8")
        dtype = "<u4" if r.get("index_dtype", "uint32") == "uint32" else "<i8"
        indices = np.fromfile(os.path.join(d, r["indices"]), dtype=dtype).astype(np.int64)
        dst = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        keys.append(np.sort(dst * counts[r["src"]] + indices))
    return keys


def make_loader(hetero, tmp_path, **overrides):
    options = dict(fanouts=[4, 3], batch_size=64, seed=5, num_threads=2, memory_budget="64M", budget_scope="data",
                   direct_io=False, runtime_dir=str(tmp_path / "rt"))
    options.update(overrides)
    return seer.NeighborLoader(seer.Dataset(hetero["dataset"]), **options)


def test_typed_batches_match_the_relations_features_and_labels(hetero, tmp_path):
    d, m = hetero["dataset"], hetero["manifest"]
    names = [t["name"] for t in m["node_types"]]
    relations = [(r["src"], r["name"], r["dst"]) for r in m["relations"]]
    offsets = offsets_of(m)
    types = read_types(d, m)
    keys = relation_edge_keys(d, m)
    target = names.index("paper")
    width = max(t.get("feature_dim", 0) for t in m["node_types"])
    train = np.fromfile(os.path.join(d, m["node_types"][target]["splits"]["train"]), dtype="<i8")

    loader = make_loader(hetero, tmp_path)
    assert loader.target_type == "paper"
    assert loader.node_types == names and loader.relations == relations
    assert loader.node_type_offsets == offsets.tolist()
    seeds, edges_checked, types_seen = [], 0, set()
    for batch in loader:
        n_id = batch.n_id.numpy()
        node_type = batch.node_type.numpy()
        local = batch.local_id.numpy()
        assert np.array_equal(node_type, np.searchsorted(offsets, n_id, side="right") - 1)
        assert np.array_equal(local, n_id - offsets[node_type])
        assert (node_type[: batch.batch_size] == target).all()
        seeds.append(local[: batch.batch_size])
        assert np.array_equal(batch.y.numpy(), types[target][1][local[: batch.batch_size]])
        # x: the type's row, zero-padded to the widest type; featureless types read zeros.
        x = batch.x.numpy()
        assert x.shape == (len(n_id), width)
        for t, (feat, _) in enumerate(types):
            rows = node_type == t
            types_seen.update([t] if rows.any() else [])
            dim = 0 if feat is None else feat.shape[1]
            if dim:
                assert np.array_equal(x[rows, :dim], feat[local[rows]])
            assert not x[rows, dim:].any()
        # Every edge of every layer is an edge of its relation, between the right types.
        assert batch.edge_type.shape[0] == batch.edge_index.shape[1]
        layer_types = batch.layer_edge_types
        for (edge_index, num_src, num_dst), edge_type in zip(batch.layers, layer_types):
            src, dst = edge_index.numpy()
            rel = edge_type.numpy()
            assert len(rel) == len(src) and (src < num_src).all() and (dst < num_dst).all()
            assert ((rel >= 0) & (rel < len(relations))).all()
            for r, (s_type, _, d_type) in enumerate(relations):
                sel = rel == r
                assert (node_type[src[sel]] == names.index(s_type)).all(), relations[r]
                assert (node_type[dst[sel]] == names.index(d_type)).all(), relations[r]
                key = local[dst[sel]] * m["node_types"][names.index(s_type)]["count"] + local[src[sel]]
                assert np.isin(key, keys[r]).all(), f"{relations[r]}: an edge not in its CSC"
                edges_checked += int(sel.sum())
    assert edges_checked > 0 and len(types_seen) == len(names)
    seeds = np.concatenate(seeds)
    assert np.array_equal(np.sort(seeds), np.sort(train))  # the training split, each seed once
    loader.close()


def test_typed_target_and_homogeneous_batches(hetero, tmp_path):
    ds = seer.Dataset(hetero["dataset"])
    assert ds.typed and ds.node_types == [t["name"] for t in hetero["manifest"]["node_types"]]
    with pytest.raises(seer.SeerError, match="author"):
        make_loader(hetero, tmp_path, target_type="author")  # no labels
    with make_loader(hetero, tmp_path, target_type="paper", split="test", shuffle=False) as loader:
        batch = next(iter(loader))
        assert loader.target_type == "paper" and batch.node_type is not None
    # A homogeneous dataset: batches as before, no typed fields.
    g = os.path.join(hetero["root"], "g")
    run_seer(f"gen --nodes 500 --avg-degree 5 --feature-dim 3 --seed 2 --quiet --out {g}")
    with seer.NeighborLoader(g, fanouts=[3], batch_size=50, memory_budget="64M", budget_scope="data",
                             direct_io=False, runtime_dir=str(tmp_path / "rt2")) as loader:
        batch = next(iter(loader))
        assert loader.target_type is None and loader.node_types == [] and loader.relations == []
        assert batch.node_type is None and batch.edge_type is None and batch.layer_edge_types is None
    with pytest.raises(ValueError, match="not a typed dataset"):
        seer.NeighborLoader(g, fanouts=[3], target_type="paper")


def test_relation_fanouts_bound_each_relations_edges_per_target(hetero, tmp_path):
    m = hetero["manifest"]
    keys = [r["src"] + "__" + r["name"] + "__" + r["dst"] for r in m["relations"]]
    cites = keys.index("paper__cites__paper")
    loader = make_loader(hetero, tmp_path, relation_fanouts={"paper__cites__paper": [1, 2]})
    most = np.zeros(len(keys), dtype=np.int64)
    for batch in loader:
        for layer, ((edge_index, _, num_dst), edge_type) in enumerate(zip(batch.layers, batch.layer_edge_types)):
            dst, rel = edge_index[1].numpy(), edge_type.numpy()
            per = np.zeros((num_dst, len(keys)), dtype=np.int64)
            np.add.at(per, (dst, rel), 1)
            assert per[:, cites].max() <= [2, 1][layer]  # layers input first: hop 2's fan-out, then hop 1's
            most = np.maximum(most, per.max(0))
    assert most[cites] >= 1 and most.max() > 2  # other relations keep fanouts=[4, 3]
    with pytest.raises(seer.SeerError, match="nope"):
        make_loader(hetero, tmp_path, relation_fanouts="nope=1,1")
