"""seer.Dataset: the manifest, counts and memory-safe accessors, checked against the raw
files read with plain numpy (docs/formats.md), and Seer's errors as exceptions."""
import json
import os

import numpy as np
import pytest

import seer
from conftest import run_seer


def test_counts_and_manifest_match_the_files(graph):
    ds = seer.Dataset(graph["dataset"])
    with open(os.path.join(graph["dataset"], "dataset.json")) as f:
        manifest = json.load(f)
    assert ds.manifest == manifest
    assert (ds.num_nodes, ds.num_edges, ds.feature_dim) == (4111, 36999, 47)
    assert ds.feature_dtype == "float32" and ds.index_dtype == "uint32"
    assert ds.num_classes == manifest["num_classes"]
    for name in ("train", "valid", "test"):
        raw = np.fromfile(os.path.join(graph["dataset"], name + ".bin"), dtype="<i8")
        assert np.array_equal(ds.split(name), raw)
        assert ds.splits[name] == raw.size
    assert ds.splits["train"] == 1199


def test_accessors_are_memmaps_and_equal_the_raw_bytes(graph):
    ds = seer.Dataset(graph["dataset"])
    for array in (ds.features, ds.labels, ds.indptr, ds.indices, ds.split("train")):
        assert isinstance(array, np.memmap)  # never a whole-file load
    ids = np.array([0, 17, 4110, 17, 2048])
    with open(os.path.join(graph["dataset"], "features.bin"), "rb") as f:
        for i, v in enumerate(ids):
            f.seek(int(v) * 47 * 4)
            assert ds.feature_rows(ids)[i].tobytes() == f.read(47 * 4)
    labels = np.fromfile(os.path.join(graph["dataset"], "labels.bin"), dtype="<i4")
    assert np.array_equal(ds.label_rows(ids), labels[ids])
    indptr = np.fromfile(os.path.join(graph["dataset"], "indptr.bin"), dtype="<i8")
    indices = np.fromfile(os.path.join(graph["dataset"], "indices.bin"), dtype="<u4")
    assert np.array_equal(ds.neighbors(17), indices[indptr[17] : indptr[18]])
    with pytest.raises(IndexError, match="node 4111 is not in"):
        ds.feature_rows([1, 4111])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_rows_are_widened_exactly(tmp_path, dtype):
    out = str(tmp_path / dtype)
    run_seer(f"gen --nodes 300 --avg-degree 4 --feature-dim 8 --feature-dtype {dtype} --seed 2 --quiet --out {out}")
    ds = seer.Dataset(out)
    raw = np.fromfile(os.path.join(out, "features.bin"), dtype="<u2")[: 300 * 8].reshape(300, 8)
    rows = ds.feature_rows(np.arange(300))
    if dtype == "float16":
        expected = raw.view(np.float16).astype(np.float32)
    else:
        expected = (raw.astype(np.uint32) << 16).view(np.float32)
    assert rows.dtype == np.float32
    assert np.array_equal(rows, expected)
    assert np.isfinite(rows).all() and np.abs(rows).max() > 0


def test_errors_are_seer_errors_with_seers_message(tmp_path):
    with pytest.raises(seer.SeerError, match="is not a Seer dataset: .*dataset.json is missing"):
        seer.Dataset(str(tmp_path / "nope"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "dataset.json").write_text("{ not json")
    with pytest.raises(seer.SeerError, match="dataset.json"):
        seer.Dataset(str(broken))
    assert issubclass(seer.SeerError, RuntimeError)
