"""Fixtures of the seer Python package's tests (run by ctest `PythonPackage`, which sets
PYTHONPATH=<build>/python and SEER_BINARY=<build>/seer).

Oracles independent of the loader: the real `seer` CLI (gen, sample, stats, train) and a
decoder of `seer sample`'s .sbt files written here from docs/formats.md with numpy."""
import json
import os
import subprocess

import numpy as np
import pytest

ROOT = os.environ.get("SEER_SOURCE_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SEER = os.environ.get("SEER_BINARY", os.path.join(ROOT, "build", "seer"))

# The settings the loader and the CLI share (tests/tools/consistency_cli_test.cc's).
SHARED = dict(batch_size=100, superbatch=4, fanouts=[5, 5], seed=7, num_threads=2)
SHARED_FLAGS = "--batch-size 100 --superbatch 4 --fanouts 5,5 --seed 7 --threads 2"


def run_seer(args, check=True):
    """Runs `seer ARGS` (a string); returns the CompletedProcess (text)."""
    proc = subprocess.run([SEER] + args.split(), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"seer {args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def decode_sbt(path):
    """Every batch of one .sbt file (docs/formats.md "Trace files"): dicts with epoch,
    batch_index, num_seeds, node_ids, blocks [(num_dst, num_src, row_ptr, col_idx)],
    input layer first, and link (None, or (src, dst, neg, k, shared) seed positions)."""
    w = np.fromfile(path, dtype="<i8")
    assert w[0] == 0x3154425352454553 and w[1] == 2, path
    batches, pos = [], 8
    for _ in range(int(w[4])):
        size, epoch, index, seeds, n, layers, pairs, k, shared = (int(v) for v in w[pos : pos + 9])
        shapes = [tuple(int(v) for v in w[pos + 9 + 3 * l : pos + 12 + 3 * l]) for l in range(layers)]
        at = pos + 9 + 3 * layers
        node_ids = w[at : at + n].copy()
        at += n
        blocks = []
        for num_dst, num_src, num_edges in shapes:
            row_ptr = w[at : at + num_dst + 1].copy()
            at += num_dst + 1
            col_idx = w[at : at + (num_edges + 1) // 2].view("<i4")[:num_edges].astype(np.int64)
            at += (num_edges + 1) // 2
            blocks.append((num_dst, num_src, row_ptr, col_idx))
        link = None
        if pairs > 0:
            negatives = k if shared else pairs * k
            words = w[at : at + (2 * pairs + negatives + 1) // 2].view("<i4")[: 2 * pairs + negatives].astype(np.int64)
            link = (words[:pairs], words[pairs : 2 * pairs], words[2 * pairs :], k, bool(shared))
        batches.append(dict(epoch=epoch, batch_index=index, num_seeds=seeds, node_ids=node_ids, blocks=blocks,
                            link=link))
        pos += size // 8
    return batches


def read_trace_dir(path):
    with open(os.path.join(path, "trace.json")) as f:
        meta = json.load(f)
    out = []
    for sb in meta["superbatches"]:
        out.extend(decode_sbt(os.path.join(path, sb["file"])))
    return out


@pytest.fixture(scope="session")
def graph(tmp_path_factory):
    """A small generated graph and `seer sample`'s trace of 2 epochs with SHARED."""
    root = tmp_path_factory.mktemp("seer_py")
    g = str(root / "g")
    run_seer(f"gen --nodes 4111 --avg-degree 9 --feature-dim 47 --train-fraction 0.3 --seed 3 --quiet --out {g}")
    trace = str(root / "t")
    run_seer(f"sample {g} --out {trace} --epochs 2 --quiet {SHARED_FLAGS}")
    return dict(root=str(root), dataset=g, trace=trace)
