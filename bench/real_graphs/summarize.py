#!/usr/bin/python3
"""Markdown accuracy tables (mean +- std over training seeds) from run_accuracy.sh's logs and
the baselines.json files.

Usage: summarize.py WORK_DIR [--per-seed]
Reads WORK/<graph>.<model>.<seed>[.<extra>].log (the `seer train` output: the lines
"seer train: best valid acc V (epoch E), test acc T" and "seer train: done in S s") and
WORK/<graph>/baselines.json. Prints
  1. one table, models as rows and graphs as columns: test accuracy mean +- std (sample
     standard deviation, n-1) over the seeds found, best-validation accuracy in brackets;
  2. the GCN-vs-linear-2-hop comparison per graph (difference of means, in units of the GCN
     std);
  3. with --per-seed, every run (seed, best valid, epoch, test, seconds).
Logs without a result line (a run still going, or one that failed) are listed and skipped.
The numpy baselines are deterministic (convex, zero start), so they have no std.
"""
import glob
import json
import math
import os
import re
import sys

ORDER = ["sage", "gcn", "gcn-block", "gat", "mlp"]
LABEL = {
    "sage": "Seer sage",
    "gcn": "Seer gcn, `--gcn-norm graph` (default)",
    "gcn-block": "Seer gcn, `--gcn-norm block`",
    "gat": "Seer gat",
    "mlp": "Seer mlp (features only)",
}
BASELINE_LABEL = {
    "features": "numpy logistic regression on X (features only)",
    "sgc-2hop": "numpy SGC 2-hop: logistic regression on S²X",
    "sign-2hop": "numpy [X, SX, S²X]",
}


def mean_std(values):
    n = len(values)
    m = sum(values) / n
    s = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else float("nan")
    return m, s


def fmt(values):
    m, s = mean_std(values)
    if len(values) == 1:
        return f"{m:.4f} (1 seed)"
    return f"{m:.4f} ± {s:.4f}"


def read_runs(work):
    runs = {}  # (graph, name) -> list of (seed, valid, epoch, test, seconds)
    unfinished = []
    for log in sorted(glob.glob(os.path.join(work, "*.log"))):
        parts = os.path.basename(log)[:-4].split(".", 3)
        if len(parts) < 3 or not parts[2].isdigit():
            continue
        graph, model, seed = parts[:3]
        extra = parts[3].replace("_", " ").strip() if len(parts) > 3 else ""
        text = open(log, errors="replace").read()
        m = re.search(r"seer train: best valid acc ([0-9.]+) \(epoch (\d+)\), test acc ([0-9.]+)", text)
        t = re.search(r"seer train: done in ([0-9.]+) s", text)
        if not m:
            unfinished.append(os.path.basename(log))
            continue
        name = model + (f" ({extra})" if extra else "")
        runs.setdefault((graph, name), []).append(
            (int(seed), float(m.group(1)), int(m.group(2)), float(m.group(3)), float(t.group(1)) if t else float("nan")))
    return runs, unfinished


def main():
    work = sys.argv[1]
    runs, unfinished = read_runs(work)
    graphs = sorted({g for g, _ in runs} | {os.path.basename(os.path.dirname(p))
                                             for p in glob.glob(os.path.join(work, "*", "baselines.json"))})
    names = sorted({n for _, n in runs}, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    baselines = {}
    for g in graphs:
        p = os.path.join(work, g, "baselines.json")
        if os.path.exists(p):
            baselines[g] = json.load(open(p))

    print("| model | " + " | ".join(f"{g}: test mean ± std (best valid) [seeds]" for g in graphs) + " |")
    print("|---|" + "---|" * len(graphs))
    for n in names:
        cells = []
        for g in graphs:
            r = runs.get((g, n))
            if not r:
                cells.append("-")
                continue
            tests = [x[3] for x in r]
            valids = [x[1] for x in r]
            cells.append(f"{fmt(tests)} ({mean_std(valids)[0]:.4f}) [{len(r)}]")
        print(f"| {LABEL.get(n, 'Seer ' + n)} | " + " | ".join(cells) + " |")
    for b in ("features", "sgc-2hop", "sign-2hop"):
        cells = []
        for g in graphs:
            r = baselines.get(g, {}).get(b)
            cells.append(f"{r['test']:.4f} ({r['valid']:.4f})" if r else "-")
        print(f"| {BASELINE_LABEL[b]} | " + " | ".join(cells) + " |")

    print()
    for g in graphs:
        r = runs.get((g, "gcn"))
        if not r or g not in baselines:
            continue
        m, s = mean_std([x[3] for x in r])
        for b in ("sgc-2hop", "sign-2hop"):
            ref = baselines[g][b]["test"]
            d = m - ref
            unit = f", {d / s:+.1f} std" if len(r) > 1 and s > 0 else ""
            print(f"- {g}: gcn {m:.4f} vs {b} {ref:.4f}: {d * 100:+.2f} points{unit} ({len(r)} seeds)")
        rb = runs.get((g, "gcn-block"))
        if rb:
            mb = mean_std([x[3] for x in rb])[0]
            print(f"- {g}: gcn graph-degree - block-degree normalisation: {(m - mb) * 100:+.2f} points")

    if "--per-seed" in sys.argv:
        for g in graphs:
            print(f"\n**{g}**\n")
            print("| model | seed | best valid | (epoch) | test | seconds |")
            print("|---|---|---|---|---|---|")
            for n in names:
                for seed, v, e, te, secs in sorted(runs.get((g, n), [])):
                    print(f"| {n} | {seed} | {v:.4f} | {e} | {te:.4f} | {secs:.0f} |")
    if unfinished:
        print("\nno result yet: " + ", ".join(unfinished), file=sys.stderr)


if __name__ == "__main__":
    main()
