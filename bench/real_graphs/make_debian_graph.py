#!/usr/bin/python3
"""A real heterogeneous graph: the Debian bookworm (amd64) package index on this machine (no network).

Input: apt's Packages.lz4 lists (main, then -updates and -security; a package name seen again
replaces the earlier stanza, so the newest version's fields count), decompressed with lz4cat.

Node types (string ids):
  package     every binary package (the target type). Label = its Section with any "contrib/" or
              "non-free*/" prefix removed; sections with < 50 packages are UNLABELED (-1, not
              merged into an "other" class); the rest are classes 0.. (largest first, ties by name).
  source      the Source field's name ("name (version)" -> name; absent = the package's own name).
  maintainer  the Maintainer field's e-mail address, lower-cased (the whole field when it has none).
Relations (src -> dst as named; one CSV per relation, header src,dst, deduplicated, no self loops):
  package,depends,package       Depends + Pre-Depends
  package,recommends,package    Recommends
  package,suggests,package      Suggests
  package,built_from,source
  package,maintained_by,maintainer
  Dependency fields: every alternative of 'a | b' is an edge; version constraints "(>= 1)",
  architecture lists "[amd64]", build profiles "<!nocheck>" and ":any"/":amd64" qualifiers are
  stripped. A name that is a real package links to that package only; a purely virtual name
  (no package of that name) links to EVERY package that Provides it; a name that is neither is
  dropped (counted below).
Features (package only; source and maintainer are featureless): the package NAME alone -- its
  '-'-separated tokens and its character 3-grams (padded '^name$'), signed-hashed into 128 dims,
  L2-normalised (graph_common.hashed_features). Never the Description, Section or Tag fields
  (they give the label away).
Split: the labeled packages shuffled with numpy default_rng(1): 60 % train, 20 % valid, 20 % test.

Files in OUT_DIR:
  package_ids.txt, package_feat.npy   row r of the features = line r+1 of the ids (sorted names)
  source_ids.txt, maintainer_ids.txt  the other types' ids (sorted)
  rel_depends.csv rel_recommends.csv rel_suggests.csv rel_built_from.csv rel_maintained_by.csv
  labels.csv (package,section_index; labeled packages only), classes.txt (index<TAB>section<TAB>count)
  train.txt valid.txt test.txt        package ids, one per line
  homo_edges.csv                      package -> package: depends + recommends + suggests, deduplicated
  all_ids.txt, all_feat.npy, all_edges.csv
                                      every relation collapsed onto one id space: packages keep
                                      their names, sources become "src:NAME", maintainers "mnt:EMAIL"
                                      (':' cannot occur in a package name), zero feature rows
  counts.json                         the counts printed at the end

Usage: make_debian_graph.py OUT_DIR [Packages.lz4 ...]
"""
import collections
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_common  # noqa: E402

LISTS = "/var/lib/apt/lists"
DEFAULT_INPUTS = [
    LISTS + "/deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4",
    LISTS + "/deb.debian.org_debian_dists_bookworm-updates_main_binary-amd64_Packages.lz4",
    LISTS + "/deb.debian.org_debian-security_dists_bookworm-security_main_binary-amd64_Packages.lz4",
]
MIN_SECTION = 50
SPLIT_SEED = 1
FIELDS = ("Package", "Source", "Maintainer", "Section", "Depends", "Pre-Depends", "Recommends",
          "Suggests", "Provides")


def read_stanzas(path):
    """Yields dicts of the FIELDS of each stanza (continuation lines joined)."""
    text = subprocess.run(["lz4cat", path], check=True, stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")
    for block in text.split("\n\n"):
        st = {}
        key = None
        for line in block.split("\n"):
            if not line:
                continue
            if line[0] in " \t":
                if key in st:
                    st[key] += " " + line.strip()
                continue
            k, _, v = line.partition(":")
            key = k if k in FIELDS else None
            if key:
                st[key] = v.strip()
        if "Package" in st:
            yield st


STRIP = re.compile(r"\([^)]*\)|\[[^\]]*\]|<[^>]*>")


def dep_names(field):
    """'a (>= 1) | b:any, c [amd64]' -> [['a', 'b'], ['c']] (one list per comma group)."""
    groups = []
    for group in STRIP.sub(" ", field or "").split(","):
        alts = []
        for alt in group.split("|"):
            name = alt.strip().split(":")[0].strip()
            if name:
                alts.append(name.split()[0])
        if alts:
            groups.append(alts)
    return groups


def source_name(st):
    s = st.get("Source", "").strip()
    return s.split()[0] if s else st["Package"]


def maintainer_id(st):
    m = st.get("Maintainer", "").strip()
    found = re.search(r"<([^>]+)>", m)
    return (found.group(1) if found else m).strip().lower() or "(none)"


def section_name(st):
    s = st.get("Section", "").strip()
    return s.split("/", 1)[1] if "/" in s else (s or "(none)")


def name_tokens(name):
    """'-'-separated tokens and character 3-grams of '^name$' (lower-cased)."""
    low = name.lower()
    words = ["w:" + t for t in low.split("-") if t]
    padded = "^" + low + "$"
    return words + ["g:" + padded[i:i + 3] for i in range(len(padded) - 2)]


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(header + "\n")
        for a, b in rows:
            f.write(f"{a},{b}\n")


def write_lines(path, items):
    with open(path, "w") as f:
        for s in items:
            f.write(s + "\n")


def main():
    out = sys.argv[1]
    inputs = sys.argv[2:] or [p for p in DEFAULT_INPUTS if os.path.exists(p)]
    os.makedirs(out, exist_ok=True)
    stanzas = {}
    per_input = []
    for path in inputs:
        n = 0
        for st in read_stanzas(path):
            stanzas[st["Package"]] = st  # later lists (updates, security) replace main's stanza
            n += 1
        per_input.append((os.path.basename(path), n))
    names = sorted(stanzas)
    real = set(names)
    for n in names:  # ids must survive CSV and text files unquoted
        assert "," not in n and not any(c.isspace() for c in n), n
    providers = collections.defaultdict(set)
    for n in names:
        for group in dep_names(stanzas[n].get("Provides")):
            for v in group:
                providers[v].add(n)

    resolved = collections.Counter()

    def targets(field):
        out_set = set()
        for group in dep_names(field):
            for name in group:
                if name in real:
                    out_set.add(name)
                    resolved["real"] += 1
                elif name in providers:
                    out_set |= providers[name]
                    resolved["virtual"] += 1
                else:
                    resolved["dropped"] += 1
        return out_set

    rels = {"depends": set(), "recommends": set(), "suggests": set(), "built_from": set(), "maintained_by": set()}
    for n in names:
        st = stanzas[n]
        fields = {"depends": (st.get("Depends"), st.get("Pre-Depends")),
                  "recommends": (st.get("Recommends"),), "suggests": (st.get("Suggests"),)}
        for rel, fs in fields.items():
            for f in fs:
                for t in targets(f):
                    if t != n:
                        rels[rel].add((n, t))
        rels["built_from"].add((n, source_name(st)))
        rels["maintained_by"].add((n, maintainer_id(st)))
    sources = sorted({d for _, d in rels["built_from"]})
    maintainers = sorted({d for _, d in rels["maintained_by"]})
    for s in sources + maintainers:
        assert "," not in s and "\n" not in s, s
    relation_dst = {"depends": "package", "recommends": "package", "suggests": "package",
                    "built_from": "source", "maintained_by": "maintainer"}
    for rel, edges in rels.items():
        write_csv(os.path.join(out, f"rel_{rel}.csv"), "src,dst", sorted(edges))
    write_lines(os.path.join(out, "package_ids.txt"), names)
    write_lines(os.path.join(out, "source_ids.txt"), sources)
    write_lines(os.path.join(out, "maintainer_ids.txt"), maintainers)

    # Labels and split.
    sections = [section_name(stanzas[n]) for n in names]
    labels, classes, counts = graph_common.select_labels(sections, min_size=MIN_SECTION, max_classes=10 ** 6)
    with open(os.path.join(out, "labels.csv"), "w") as f:
        f.write("package,section_index\n")
        for n, y in zip(names, labels):
            if y >= 0:
                f.write(f"{n},{y}\n")
    with open(os.path.join(out, "classes.txt"), "w") as f:
        for i, c in enumerate(classes):
            f.write(f"{i}\t{c}\t{counts[c]}\n")
    labeled = np.flatnonzero(labels >= 0)
    rng = np.random.default_rng(SPLIT_SEED)
    perm = labeled[rng.permutation(len(labeled))]
    n_train, n_valid = int(0.6 * len(perm)), int(0.2 * len(perm))
    split = {"train": np.sort(perm[:n_train]), "valid": np.sort(perm[n_train:n_train + n_valid]),
             "test": np.sort(perm[n_train + n_valid:])}
    for s, rows in split.items():
        write_lines(os.path.join(out, s + ".txt"), [names[r] for r in rows])

    # Features: the name only.
    x = graph_common.hashed_features([name_tokens(n) for n in names])
    np.save(os.path.join(out, "package_feat.npy"), x.astype(np.float32))

    # Homogeneous package graph and the collapsed one.
    homo = sorted(rels["depends"] | rels["recommends"] | rels["suggests"])
    write_csv(os.path.join(out, "homo_edges.csv"), "src,dst", homo)
    all_ids = names + ["src:" + s for s in sources] + ["mnt:" + m for m in maintainers]
    write_lines(os.path.join(out, "all_ids.txt"), all_ids)
    xa = np.zeros((len(all_ids), x.shape[1]), dtype=np.float32)
    xa[:len(names)] = x
    np.save(os.path.join(out, "all_feat.npy"), xa)
    collapsed = set(homo)
    collapsed |= {(a, "src:" + b) for a, b in rels["built_from"]}
    collapsed |= {(a, "mnt:" + b) for a, b in rels["maintained_by"]}
    write_csv(os.path.join(out, "all_edges.csv"), "src,dst", sorted(collapsed))

    # Report.
    label_counts = collections.Counter(classes[y] for y in labels if y >= 0)
    unlabeled_sections = sorted((c for c in counts if c not in classes), key=lambda c: (-counts[c], c))
    summary = {
        "inputs": per_input,
        "nodes": {"package": len(names), "source": len(sources), "maintainer": len(maintainers)},
        "edges": {f"package,{r},{relation_dst[r]}": len(e) for r, e in rels.items()},
        "homo_edges": len(homo), "collapsed_edges": len(collapsed), "collapsed_nodes": len(all_ids),
        "dependency_names": dict(resolved),
        "classes": len(classes), "labeled": int(len(labeled)),
        "unlabeled": int(len(names) - len(labeled)),
        "unlabeled_sections": {c: counts[c] for c in unlabeled_sections},
        "split": {s: int(len(r)) for s, r in split.items()},
        "label_top10": label_counts.most_common(10),
        "majority_share": label_counts.most_common(1)[0][1] / len(labeled),
    }
    with open(os.path.join(out, "counts.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("debian graph: inputs " + ", ".join(f"{p} ({n} stanzas)" for p, n in per_input))
    print(f"debian graph: nodes package {len(names)}, source {len(sources)}, maintainer {len(maintainers)}")
    for k, v in summary["edges"].items():
        print(f"debian graph: edges {k}: {v}")
    print(f"debian graph: homogeneous package graph {len(homo)} edges; collapsed graph {len(all_ids)} nodes, "
          f"{len(collapsed)} edges")
    print(f"debian graph: dependency names resolved: {resolved['real']} real, {resolved['virtual']} virtual "
          f"(-> every provider), {resolved['dropped']} dropped (no such package or provider)")
    print(f"debian graph: {len(classes)} classes (sections with >= {MIN_SECTION} packages), {len(labeled)} labeled, "
          f"{len(names) - len(labeled)} unlabeled (sections {', '.join(f'{c} {counts[c]}' for c in unlabeled_sections)})")
    print(f"debian graph: split train {len(split['train'])}, valid {len(split['valid'])}, test {len(split['test'])} "
          f"(seed {SPLIT_SEED})")
    print("debian graph: top 10 classes: " + ", ".join(f"{c} {k}" for c, k in label_counts.most_common(10))
          + f" (majority share {summary['majority_share']:.4f})")


if __name__ == "__main__":
    main()
