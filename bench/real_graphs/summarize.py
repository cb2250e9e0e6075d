#!/usr/bin/python3
"""Markdown accuracy table from run_accuracy.sh's logs and baselines.json files.

Usage: summarize.py WORK_DIR
Reads WORK/<graph>.<model>.<seed>[.<extra>].log (the `seer train` output: the line
"seer train: best valid acc V (epoch E), test acc T" and "done in S s") and
WORK/<graph>/baselines.json.
"""
import glob
import json
import os
import re
import sys


def main():
    work = sys.argv[1]
    rows = {}
    for log in sorted(glob.glob(os.path.join(work, "*.log"))):
        parts = os.path.basename(log)[:-4].split(".", 3)
        if len(parts) < 3:
            continue
        graph, model, seed = parts[:3]
        extra = parts[3].replace("_", " ").strip() if len(parts) > 3 else ""
        text = open(log).read()
        m = re.search(r"seer train: best valid acc ([0-9.]+) \(epoch (\d+)\), test acc ([0-9.]+)", text)
        t = re.search(r"seer train: done in ([0-9.]+) s", text)
        if not m:
            continue
        name = model + (f" ({extra})" if extra else "")
        rows.setdefault(graph, []).append((name, seed, float(m.group(1)), int(m.group(2)), float(m.group(3)),
                                           float(t.group(1)) if t else float("nan")))
    for graph in sorted(rows):
        print(f"\n**{graph}**\n")
        print("| model | seed | best valid | (epoch) | test | seconds |")
        print("|---|---|---|---|---|---|")
        for name, seed, v, e, te, s in rows[graph]:
            print(f"| Seer {name} | {seed} | {v:.4f} | {e} | **{te:.4f}** | {s:.0f} |")
        bl = os.path.join(work, graph, "baselines.json")
        if os.path.exists(bl):
            for name, r in json.load(open(bl)).items():
                print(f"| numpy {name} (logistic regression, l2 {r['l2']:g}) | - | {r['valid']:.4f} | - | **{r['test']:.4f}** | - |")


if __name__ == "__main__":
    main()
