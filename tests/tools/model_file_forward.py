#!/usr/bin/python3
"""Runs the PyTorch snippet of docs/formats.md ("Model file") on a dataset and a model
file, and compares its logits and classes with the CSV of `seer predict --fanouts -1,..
--output logits` (an independent re-implementation of the forward pass through
torch.load). Exit 0: equal within 1e-4; 1: different; 77: no torch/numpy here (skip).

usage: model_file_forward.py FORMATS_MD DATASET_DIR MODEL_FILE PREDS_CSV
"""
import csv
import re
import sys

try:
    import numpy  # noqa: F401
    import torch  # noqa: F401
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

formats_md, dataset, model, preds = sys.argv[1:5]
doc = open(formats_md, encoding="utf-8").read()
section = doc[doc.index("## Model file"):]
code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
code = code.replace("DS/", dataset + "/").replace('"model.pt"', repr(model))
scope = {}
exec(code, scope)
logits, classes, np = scope["logits"], scope["classes"], scope["np"]
rows = list(csv.reader(open(preds, newline="")))
header, rows = rows[0], rows[1:]
assert header[:3] == ["id", "class", "logit_0"], header
ids = [int(r[0]) for r in rows]
got = np.array([[float(v) for v in r[2:]] for r in rows])
ref = logits[ids].detach().numpy()
diff = float(abs(got - ref).max())
same = all(int(r[1]) == c for r, c in zip(rows, classes[ids].tolist()))
print(f"{len(rows)} nodes: max |logit difference| {diff:.3g}, classes equal: {same}")
sys.exit(0 if diff < 1e-4 and same else 1)
