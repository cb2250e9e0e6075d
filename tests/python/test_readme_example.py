"""The README's "Seer from Python" example, run as written on the demo graph of
tools/demo.sh (100 000 nodes), reaches `seer train`'s GraphSAGE test accuracy with the
same settings (3 epochs, hidden 64, fan-outs 10,10, a 6 MiB feature cache, seed 1)."""
import json
import os
import re
import subprocess
import sys

from conftest import ROOT, run_seer


def readme_example():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    block = re.search(r"<!-- seer-python-example:begin -->\n```python\n(.*?)```\n<!-- seer-python-example:end -->",
                      text, re.S)
    assert block, "README.md lost its seer-python-example block"
    return block.group(1)


def test_the_readme_example_reaches_seer_trains_accuracy(tmp_path):
    g = str(tmp_path / "graph")
    run_seer(f"gen --nodes 100000 --avg-degree 20 --feature-dim 64 --classes 8 --seed 1 --quiet --out {g}")
    metrics = str(tmp_path / "sage.jsonl")
    run_seer(f"train {g} --model sage --epochs 3 --hidden 64 --fanouts 10,10 --memory-budget 320M "
             f"--fcache-budget 6M --seed 1 --cpu --quiet --metrics {metrics}")
    with open(metrics) as f:
        cli = [json.loads(line) for line in f]
    cli_accuracy = [j for j in cli if j.get("type") == "final"][-1]["test_accuracy"]

    script = tmp_path / "example.py"
    script.write_text(readme_example())
    proc = subprocess.run([sys.executable, str(script), g], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    accuracies = [float(v) for v in re.findall(r"test accuracy (\d\.\d+)", proc.stdout)]
    assert len(accuracies) == 3, proc.stdout
    print(f"seer train {cli_accuracy:.4f}, README example {accuracies[-1]:.4f}")
    assert accuracies[-1] >= cli_accuracy - 0.02, proc.stdout
    assert accuracies[-1] > 0.9  # far above features alone (the demo's MLP: 0.52)
    assert re.search(r"feature cache hit \d+\.\d%, [1-9]\d* misses", proc.stdout), proc.stdout
