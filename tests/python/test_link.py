"""seer.NeighborLoader(task="link") against the CLI: the link batches `seer sample --task
link` records (decoded from the .sbt files with numpy, pairs included), every training
edge of the topology once per epoch (read from indptr/indices with numpy), and the
held-out edges of `seer split-edges` with their fixed negatives as written."""
import os

import numpy as np
import pytest
import torch

import seer
from conftest import SHARED, SHARED_FLAGS, read_trace_dir, run_seer

LINK_FLAGS = "--task link --negatives 2"


@pytest.fixture(scope="module")
def link_graph(graph):
    """`graph` with 5 % valid / 10 % test edges held out (3 fixed negatives each) and
    `seer sample --task link`'s trace of 2 epochs."""
    out = os.path.join(graph["root"], "g_link")
    if not os.path.exists(os.path.join(out, "dataset.json")):
        run_seer(f"split-edges {graph['dataset']} --out {out} --valid-fraction 0.05 --test-fraction 0.1 "
                 f"--eval-negatives 3 --quiet")
    trace = os.path.join(graph["root"], "t_link")
    if not os.path.exists(os.path.join(trace, "trace.json")):
        run_seer(f"sample {out} --out {trace} --epochs 2 --quiet {SHARED_FLAGS} {LINK_FLAGS}")
    return dict(dataset=out, trace=trace)


def make_loader(path, tmp_path, **overrides):
    options = dict(SHARED, memory_budget="64M", budget_scope="data", direct_io=False, runtime_dir=str(tmp_path / "rt"),
                   task="link", negatives=2)
    options.update(overrides)
    return seer.NeighborLoader(seer.Dataset(path), **options)


def topology_edges(dataset):
    indptr = dataset.indptr
    dst = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    return sorted(zip(np.asarray(dataset.indices, dtype=np.int64).tolist(), dst.tolist()))


def test_link_batches_are_what_seer_sample_records(link_graph, tmp_path):
    recorded = read_trace_dir(link_graph["trace"])
    loader = make_loader(link_graph["dataset"], tmp_path)
    seen = []
    for _ in range(2):
        seen.extend(loader)
    loader.close()
    assert len(seen) == len(recorded)
    for batch, rec in zip(seen, recorded):
        assert np.array_equal(batch.n_id.numpy(), rec["node_ids"])
        src, dst, neg, k, shared = rec["link"]
        assert k == 2 and not shared
        assert np.array_equal(batch.src_index.numpy(), src)
        assert np.array_equal(batch.dst_index.numpy(), dst)
        assert np.array_equal(batch.neg_index.numpy().reshape(-1), neg)


def test_every_training_edge_is_a_positive_once_per_epoch(link_graph, tmp_path):
    dataset = seer.Dataset(link_graph["dataset"])
    loader = make_loader(link_graph["dataset"], tmp_path)
    pairs = []
    for batch in loader:
        n_id = batch.n_id
        pairs.extend(zip(n_id[batch.src_index].tolist(), n_id[batch.dst_index].tolist()))
        # PyG's view: positives first (label 1), then every (src, negative) pair (label 0).
        eli, label = batch.edge_label_index, batch.edge_label
        p = int(batch.src_index.shape[0])
        assert eli.shape == (2, p * 3) and label.shape == (p * 3,)
        assert torch.equal(eli[:, :p], torch.stack([batch.src_index, batch.dst_index]))
        assert float(label[:p].sum()) == p and float(label[p:].sum()) == 0
        assert torch.equal(eli[1, p:], batch.neg_index.reshape(-1))
    loader.close()
    assert sorted(pairs) == topology_edges(dataset)


def test_held_out_edges_come_with_their_fixed_negatives(link_graph, tmp_path):
    dataset_dir = link_graph["dataset"]
    valid = np.fromfile(os.path.join(dataset_dir, "edges_valid.bin"), dtype="<i8").reshape(-1, 2)
    negatives = np.fromfile(os.path.join(dataset_dir, "edges_valid_negatives.bin"), dtype="<i8").reshape(-1, 3)
    loader = make_loader(dataset_dir, tmp_path, split="valid", shuffle=False)
    got_pairs, got_negs = [], []
    for batch in loader:
        n_id = batch.n_id
        got_pairs.append(torch.stack([n_id[batch.src_index], n_id[batch.dst_index]], dim=1).numpy())
        got_negs.append(n_id[batch.neg_index].numpy())
    loader.close()
    assert np.array_equal(np.concatenate(got_pairs), valid)
    assert np.array_equal(np.concatenate(got_negs), negatives)


def test_link_options_are_checked(link_graph, graph, tmp_path):
    with pytest.raises(ValueError, match="task"):
        make_loader(link_graph["dataset"], tmp_path, task="edges")
    with pytest.raises(seer.SeerError, match="negatives"):
        make_loader(link_graph["dataset"], tmp_path, negatives=0)
    with pytest.raises(seer.SeerError, match="split-edges"):
        make_loader(graph["dataset"], tmp_path, split="test", shuffle=False)
