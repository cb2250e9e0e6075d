#!/usr/bin/python3
"""Call graph between the exported functions of the shared libraries installed on this
machine (no network; needs binutils' objdump and c++filt).

Libraries: every ELF shared object directly under LIBDIR (default /usr/lib/x86_64-linux-gnu)
of 20 KiB .. 4 MiB (the giant ones -- libtorch, LLVM, CUDA -- would dominate), each real
file once. Nodes: the functions each library exports (objdump -T: defined, .text, FUNC).
Edges: caller -> callee for every `call`/`jmp` in `objdump -d` whose target is a named
exported function: `<f>` inside the library, or `<f@plt>` resolved to the same library when
it defines f, else to the first library (sorted by file name) that exports f. Targets with an
offset (`<f+0x12>`, internal code) are dropped.
Label: the library (file name up to ".so"); the 25 libraries with the most exported
functions are classes, the rest unlabeled. Features: 128-dim signed hashed bag of the
demangled function name's word tokens and character trigrams (graph_common.name_tokens) --
the library name itself is never a feature.

Usage: make_symbol_graph.py OUT_DIR [LIBDIR]
"""
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_common  # noqa: E402

FUNC_HEADER = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
BRANCH = re.compile(r"\s(?:call|jmp)q?\s+[0-9a-f]+ <([^>]+)>")


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def exported_functions(path):
    out = subprocess.run(["objdump", "-T", path], capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        # addr flags... section align [version] name; defined functions live in .text
        if len(parts) >= 6 and any("F" in flag for flag in parts[1:3]) and ".text" in parts:
            name = parts[-1]
            if name != ".text":
                names.add(name)
    return names


def main():
    out = sys.argv[1]
    libdir = sys.argv[2] if len(sys.argv) > 2 else "/usr/lib/x86_64-linux-gnu"
    libs = {}
    for fn in sorted(os.listdir(libdir)):
        p = os.path.join(libdir, fn)
        if ".so" not in fn or not os.path.isfile(p):
            continue
        real = os.path.realpath(p)
        size = os.path.getsize(real)
        if not (20 << 10 <= size <= 4 << 20) or real in libs or not is_elf(real):
            continue
        libs[real] = re.sub(r"\.so.*$", "", os.path.basename(real))
    lib_paths = sorted(libs)
    exports = {p: exported_functions(p) for p in lib_paths}
    node_of = {}
    nodes = []  # (lib name, symbol)
    definer = {}
    for p in lib_paths:
        for name in sorted(exports[p]):
            node_of[(p, name)] = len(nodes)
            nodes.append((libs[p], name))
            definer.setdefault(name, p)
    edges = set()
    for k, p in enumerate(lib_paths):
        proc = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", p], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, errors="replace")
        current = None
        for line in proc.stdout:
            m = FUNC_HEADER.match(line)
            if m:
                current = node_of.get((p, m.group(1).split("@")[0]))
                continue
            if current is None:
                continue
            m = BRANCH.search(line)
            if not m or "+0x" in m.group(1):
                continue
            target = m.group(1)
            name = target[:-4] if target.endswith("@plt") else target.split("@")[0]
            callee = node_of.get((p, name))
            if callee is None and name in definer:
                callee = node_of[(definer[name], name)]
            if callee is not None and callee != current:
                edges.add((current, callee))
        proc.wait()
        if (k + 1) % 100 == 0:
            print(f"  {k + 1}/{len(lib_paths)} libraries disassembled, {len(edges)} edges", flush=True)
    edges = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    demangled = subprocess.run(["c++filt"], input="\n".join(s for _, s in nodes) + "\n", capture_output=True,
                               text=True).stdout.splitlines()
    labels, classes, counts = graph_common.select_labels([lib for lib, _ in nodes], min_size=100, max_classes=25)
    x = graph_common.hashed_features([graph_common.name_tokens(d) for d in demangled])
    graph_common.write_graph(out, edges, x, labels, classes, counts,
                             f"symbol graph over {len(lib_paths)} libraries")
    with open(os.path.join(out, "nodes.txt"), "w") as f:
        for (lib, _), d in zip(nodes, demangled):
            f.write(f"{lib}\t{d}\n")


if __name__ == "__main__":
    main()
