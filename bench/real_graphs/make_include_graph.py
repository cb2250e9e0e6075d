#!/usr/bin/python3
"""C/C++ #include graph over the headers installed on this machine (no network).

Nodes: every C/C++ header file under the roots (default /usr/include and
/usr/local/cuda/include; symlinks resolved, each real file once). Edges: file -> the file it
#includes, resolved by matching the include path against the tail of every node's path
(several matches: the one sharing the longest directory prefix with the includer).
Label: the library the file belongs to = its first directory under the root (boost/ and
x86_64-linux-gnu/ split one level deeper: boost/asio, boost/spirit, ...; CUDA's root = "cuda");
the 20 largest libraries with >= 100 files are classes, the rest unlabeled.
Features: 128-dim signed hashed bag of the *file name's* word tokens and character trigrams
(graph_common.name_tokens) -- never the directory, so the label is not in the features.

Usage: make_include_graph.py OUT_DIR [ROOT ...]
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_common  # noqa: E402

HEADER_EXT = {".h", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".ipp", ".tcc", ".cuh", ".inc", ".def", ".tpp"}
INCLUDE = re.compile(rb'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def is_header(path):
    ext = os.path.splitext(path)[1]
    if ext in HEADER_EXT:
        return True
    if ext == "" and "/c++/" in path:  # libstdc++'s <vector>, <map>, ...
        return True
    return False


def group_of(rel, root_name):
    parts = rel.split("/")
    if root_name == "cuda":
        return "cuda"
    if len(parts) == 1:
        return "(top)"
    if parts[0] in ("boost", "x86_64-linux-gnu") and len(parts) > 2:
        return parts[0] + "/" + parts[1]
    return parts[0]


def main():
    out = sys.argv[1]
    roots = sys.argv[2:] or ["/usr/include", "/usr/local/cuda/include"]
    files = {}  # realpath -> (display path relative to its root, group)
    for root in roots:
        if not os.path.isdir(root):
            continue
        root_name = "cuda" if "cuda" in root else os.path.basename(root.rstrip("/"))
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            dirnames.sort()
            for fn in sorted(filenames):
                p = os.path.join(dirpath, fn)
                if not is_header(p):
                    continue
                real = os.path.realpath(p)
                if real in files or not os.path.isfile(real):
                    continue
                rel = os.path.relpath(p, root)
                files[real] = (rel, group_of(rel, root_name))
    paths = sorted(files)
    index = {p: i for i, p in enumerate(paths)}
    # Tail index: "a/b/c.h" -> nodes whose path ends with it (up to 4 components).
    tails = {}
    for p in paths:
        for key in {p, files[p][0]}:
            parts = key.split("/")
            for k in range(1, min(4, len(parts)) + 1):
                tails.setdefault("/".join(parts[-k:]), []).append(index[p])
    edges = set()
    unresolved = 0
    for p in paths:
        try:
            with open(p, "rb") as f:
                text = f.read(1 << 20)
        except OSError:
            continue
        me = index[p]
        for m in INCLUDE.finditer(text):
            inc = os.path.normpath(m.group(1).decode("latin-1")).lstrip("./")
            cands = tails.get("/".join(inc.split("/")[-4:]), [])
            cands = [c for c in cands if paths[c].endswith("/" + inc) or files[paths[c]][0] == inc]
            if not cands:
                unresolved += 1
                continue
            best = max(cands, key=lambda c: (len(os.path.commonpath([paths[c], p])), -c))
            if best != me:
                edges.add((me, best))
    edges = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    groups = [files[p][1] for p in paths]
    labels, classes, counts = graph_common.select_labels(groups, min_size=100, max_classes=20)
    x = graph_common.hashed_features([graph_common.name_tokens(os.path.basename(p)) for p in paths])
    graph_common.write_graph(out, edges, x, labels, classes, counts, "include graph")
    print(f"include graph: {unresolved} #include lines not resolved to an installed header")
    with open(os.path.join(out, "nodes.txt"), "w") as f:
        for p in paths:
            f.write(f"{files[p][1]}\t{p}\n")


if __name__ == "__main__":
    main()
