"""seer.NeighborLoader against the CLI: the batches `seer sample` records (decoded from
the .sbt files with numpy), the rows in features.bin, the misses of `seer stats` and
`seer train --no-train`, the memory split `seer train` prints; errors, early exits and
the runtime directory."""
import json
import os

import numpy as np
import pytest
import torch

import seer
from conftest import SHARED, SHARED_FLAGS, read_trace_dir, run_seer


def make_loader(graph, tmp_path, **overrides):
    options = dict(SHARED, memory_budget="64M", budget_scope="data", direct_io=False, runtime_dir=str(tmp_path / "rt"))
    options.update(overrides)
    return seer.NeighborLoader(seer.Dataset(graph["dataset"]), **options)


def expected_hop_edges(block):
    num_dst, _, row_ptr, col_idx = block
    return np.stack([col_idx, np.repeat(np.arange(num_dst), np.diff(row_ptr))])


def assert_batch_equals_trace(batch, rec):
    assert (batch.epoch, batch.batch_index, batch.batch_size) == (rec["epoch"], rec["batch_index"], rec["num_seeds"])
    assert np.array_equal(batch.n_id.numpy(), rec["node_ids"])
    blocks = rec["blocks"]
    hops = len(blocks)
    assert len(batch.num_sampled_edges) == hops
    for hop in range(1, hops + 1):
        block = blocks[hops - hop]  # input layer first in the file; hop 1 = the output layer
        assert np.array_equal(batch.hop_edge_index(hop).numpy(), expected_hop_edges(block)), f"hop {hop}"
        assert batch.block_sizes[hop - 1] == (block[1], block[0])
    # PyG's counts: the seeds, then the nodes each hop adds; they add up to n_id.
    reached = [rec["num_seeds"]] + [blocks[hops - h][1] for h in range(1, hops + 1)]
    assert batch.num_sampled_nodes == [reached[0]] + [b - a for a, b in zip(reached, reached[1:])]
    assert sum(batch.num_sampled_nodes) == len(rec["node_ids"])
    assert batch.edge_index.shape == (2, sum(len(b[3]) for b in blocks))


def test_batches_equal_the_traces_seer_sample_recorded(graph, tmp_path):
    recorded = read_trace_dir(graph["trace"])
    assert len(recorded) == 24  # 2 epochs x 12 batches
    loader = make_loader(graph, tmp_path)
    assert len(loader) == 12 and loader.num_seeds == 1199
    seen = [b for _ in range(2) for b in loader]
    assert len(seen) == len(recorded)
    for batch, rec in zip(seen, recorded):
        assert_batch_equals_trace(batch, rec)
    # The layers a GNN runs: input layer first, each block's targets a prefix of its sources.
    layers = seen[0].layers
    assert [(s, d) for _, s, d in layers] == [(b[1], b[0]) for b in recorded[0]["blocks"]]
    assert layers[-1][2] == seen[0].batch_size
    loader.close()
    assert os.listdir(tmp_path / "rt") == []  # the runtime directory went with the loader


def test_rows_and_labels_are_the_files_bytes_through_a_small_cache(graph, tmp_path):
    ds = seer.Dataset(graph["dataset"])
    features = np.fromfile(os.path.join(graph["dataset"], "features.bin"), dtype="<f4")[: 4111 * 47].reshape(4111, 47)
    labels = np.fromfile(os.path.join(graph["dataset"], "labels.bin"), dtype="<i4")
    loader = make_loader(graph, tmp_path, fcache_budget="100K")  # 544 rows: hits, misses and evictions
    for _ in range(2):
        for batch in loader:
            assert batch.x.dtype == torch.float32 and batch.x.shape == (batch.num_nodes, ds.feature_dim)
            assert batch.x.numpy().tobytes() == features[batch.n_id.numpy()].tobytes()
            assert np.array_equal(batch.y.numpy(), labels[batch.n_id[: batch.batch_size].numpy()])
    stats = loader.stats()
    assert stats["hits"] > 0 and stats["misses"] > 0 and stats["batches"] == 24 and stats["epochs"] == 2
    assert stats["accesses"] == stats["hits"] + stats["misses"]


def train_counts(metrics_path):
    counts = dict(accesses=0, misses=0, fill_rows=0)
    with open(metrics_path) as f:
        for line in f:
            j = json.loads(line)
            if j["type"] == "start":
                counts["fcache_rows"] = j["fcache_rows"]
            if j["type"] == "epoch":
                counts["accesses"] += j["fcache_accesses"]
                counts["misses"] += j["fcache_accesses"] - j["fcache_hits"]
                counts["fill_rows"] += j["fcache_fill_rows"]
    return counts


@pytest.mark.parametrize("policy", ["belady", "static-degree", "lru"])
def test_misses_equal_seer_stats_and_seer_train(graph, tmp_path, policy):
    common = f"--feature-cache {policy} --fcache-budget 100K --memory-budget 64M --budget-scope data --buffered"
    metrics = str(tmp_path / "m.jsonl")
    run_seer(f"train {graph['dataset']} --no-train {common} --epochs 2 --metrics {metrics} {SHARED_FLAGS}")
    train = train_counts(metrics)
    rows = train["fcache_rows"]
    stats_json = str(tmp_path / "s.json")
    run_seer(f"stats {graph['dataset']} --trace {graph['trace']} --planner cpu --policies {policy} "
             f"--capacities {rows} --belady-scope superbatch --json {stats_json}")
    with open(stats_json) as f:
        (result,) = json.load(f)["results"]

    loader = make_loader(graph, tmp_path, feature_cache=policy, fcache_budget="100K")
    split = loader.memory_split()
    with open(metrics) as f:
        start = json.loads(f.readline())
    assert split["fcache_rows"] == rows
    for part in ("budget_bytes", "table_bytes", "inspector_bytes", "trace_bytes", "fcache_bytes"):
        assert split[part] == start[part], part
    assert split["superbatch"] == start["batches_per_superbatch"]
    # Staging: seer train's two float32 batch buffers, the loader's five (three more are
    # on their way to Python or held there).
    rows_per_batch = start["staging_bytes"] // (2 * 4 * 47)
    assert start["staging_bytes"] == rows_per_batch * 2 * 4 * 47
    assert split["staging_bytes"] == rows_per_batch * 5 * 4 * 47
    for _ in range(2):
        for _batch in loader:
            pass
    got = loader.stats()
    assert got["accesses"] == train["accesses"] == result["accesses"]
    assert got["misses"] == train["misses"] == result["misses"]
    assert got["fill_rows"] == train["fill_rows"] == result["fill_rows"]
    assert 0 < got["misses"] < got["accesses"]  # not vacuous


def test_leaving_an_epoch_early_stops_it_and_the_next_epoch_is_exact(graph, tmp_path):
    recorded = read_trace_dir(graph["trace"])
    features = np.fromfile(os.path.join(graph["dataset"], "features.bin"), dtype="<f4")[: 4111 * 47].reshape(4111, 47)
    loader = make_loader(graph, tmp_path, fcache_budget="100K")
    for i, _batch in enumerate(loader):
        if i == 2:
            break
    assert loader.epoch == 1
    second = list(loader)  # the data path reopened: a fresh cache, the same batches and rows
    assert loader.stats()["reopens"] == 1
    assert len(second) == 12
    for batch, rec in zip(second, recorded[12:]):
        assert_batch_equals_trace(batch, rec)
        assert batch.x.numpy().tobytes() == features[batch.n_id.numpy()].tobytes()
    loader.close()
    with pytest.raises(seer.SeerError, match="closed"):
        next(iter(loader))


def test_errors_become_exceptions_with_seers_message(graph, tmp_path):
    ds = seer.Dataset(graph["dataset"])
    with pytest.raises(seer.SeerError, match=r"^fan-out 0: expected >= 1, or -1 for all neighbours$"):
        seer.NeighborLoader(ds, fanouts=[5, 0], budget_scope="data", memory_budget="64M")
    with pytest.raises(seer.SeerError, match="unknown cache policy 'fifo'"):
        seer.NeighborLoader(ds, fanouts=[5], feature_cache="fifo", budget_scope="data", memory_budget="64M")
    # The whole process is budgeted by default: Python and torch alone exceed 1 MiB.
    with pytest.raises(seer.SeerError, match="memory budget 1.0 MiB is too small"):
        seer.NeighborLoader(ds, fanouts=[5], memory_budget="1M")
    with pytest.raises(seer.SeerError, match="12Q"):
        seer.NeighborLoader(ds, fanouts=[5], memory_budget="12Q")
    with pytest.raises(ValueError, match="superbatch"):
        seer.NeighborLoader(ds, fanouts=[5], superbatch=0)
    # A dataset broken under a running loader: the gather stage's error, naming the file.
    broken = tmp_path / "g"
    os.system(f"cp -r {graph['dataset']} {broken}")
    loader = seer.NeighborLoader(str(broken), **dict(SHARED, memory_budget="64M", budget_scope="data",
                                                   direct_io=False, feature_cache="none"))
    os.truncate(broken / "features.bin", 4096)
    with pytest.raises(seer.SeerError, match="features.bin"):
        for _batch in loader:
            pass
