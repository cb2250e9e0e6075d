"""Shared pieces of the real-graph builders: name features, label selection, splits, writing.

Everything is deterministic (fixed seeds, sorted inputs, crc32 hashing), so the same machine
gives the same files. Written for /usr/bin/python3 with Debian's python3-numpy.
"""
import os
import re
import zlib

import numpy as np

FEATURE_DIM = 128


def name_tokens(name):
    """Word tokens of an identifier or file name: split on non-alphanumerics, camelCase and
    letter/digit boundaries, lower-cased; plus character trigrams of the lower-cased name
    (padded with '^'/'$')."""
    words = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        words += re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", part)
    words = ["w:" + w.lower() for w in words if w]
    low = "^" + name.lower() + "$"
    grams = ["g:" + low[i:i + 3] for i in range(len(low) - 2)]
    return words + grams


def hashed_features(token_lists, dim=FEATURE_DIM):
    """Signed feature hashing: token t adds sign(t) to column crc32(t) % dim; rows are then
    L2-normalised (all-zero rows stay zero)."""
    x = np.zeros((len(token_lists), dim), dtype=np.float32)
    for row, tokens in enumerate(token_lists):
        for t in tokens:
            h = zlib.crc32(t.encode())
            x[row, h % dim] += 1.0 if (h >> 31) & 1 else -1.0
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def select_labels(groups, min_size, max_classes):
    """groups: one group name per node. The max_classes largest groups with >= min_size nodes
    become classes 0.. (largest first, ties by name); other nodes get -1 (unlabeled)."""
    counts = {}
    for g in groups:
        counts[g] = counts.get(g, 0) + 1
    kept = sorted((g for g, c in counts.items() if c >= min_size), key=lambda g: (-counts[g], g))[:max_classes]
    index = {g: i for i, g in enumerate(kept)}
    labels = np.array([index.get(g, -1) for g in groups], dtype=np.int64)
    return labels, kept, counts


def split_labeled(labels, seed=0, train=0.4, valid=0.2):
    """Random split of the labeled nodes: train / valid / test (the rest)."""
    rng = np.random.default_rng(seed)
    ids = np.flatnonzero(labels >= 0)
    rng.shuffle(ids)
    n_train = int(len(ids) * train)
    n_valid = int(len(ids) * valid)
    return (np.sort(ids[:n_train]), np.sort(ids[n_train:n_train + n_valid]), np.sort(ids[n_train + n_valid:]))


def write_graph(out_dir, edges, x, labels, classes, counts, description):
    """edges: int64 (E, 2) src, dst. Writes edges.txt, features.npy, labels.npy, train/valid/
    test.npy and classes.txt into out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    np.savetxt(os.path.join(out_dir, "edges.txt"), edges, fmt="%d")
    np.save(os.path.join(out_dir, "features.npy"), x.astype(np.float32))
    np.save(os.path.join(out_dir, "labels.npy"), labels.astype(np.int64))
    train, valid, test = split_labeled(labels)
    for name, ids in (("train", train), ("valid", valid), ("test", test)):
        np.save(os.path.join(out_dir, name + ".npy"), ids.astype(np.int64))
    with open(os.path.join(out_dir, "classes.txt"), "w") as f:
        for i, c in enumerate(classes):
            f.write(f"{i}\t{c}\t{counts[c]}\n")
    n = len(labels)
    deg = np.bincount(np.concatenate([edges[:, 0], edges[:, 1]]), minlength=n) if len(edges) else np.zeros(n)
    print(f"{description}: {n} nodes, {len(edges)} edges (before --undirected/--dedup), "
          f"{len(classes)} classes, {int((labels >= 0).sum())} labeled "
          f"(train {len(train)}, valid {len(valid)}, test {len(test)}), max degree {int(deg.max())}")
