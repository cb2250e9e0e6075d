"""Whole-process behaviour, in child processes: Ctrl-C stops the pipeline's threads (no
hang, no trace file left) and peak RSS stays within a process-wide budget."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import run_seer

CHILD_ENV = dict(os.environ)

INTERRUPTED = textwrap.dedent("""
    import os, sys, time
    import seer
    dataset, runtime_dir, consumer = sys.argv[1:4]
    def thread_names():
        # The kernel's io_uring workers (iou-wrk-*, iou-sqp-*) are listed as the process's
        # tasks too; they come and go on the kernel's schedule, not Seer's: not counted.
        names = []
        for t in os.listdir("/proc/self/task"):
            try:
                names.append(open(f"/proc/self/task/{t}/comm").read().strip())
            except OSError:
                pass  # a task that ended while listed
        return [n for n in names if not n.startswith("iou-")]
    def threads():
        return len(thread_names())
    loader = seer.NeighborLoader(dataset, fanouts=[-1, -1], batch_size=50, memory_budget="64M",
                                 budget_scope="data", direct_io=False, runtime_dir=runtime_dir)
    before = threads()
    print("ready", flush=True)
    try:
        while True:
            for batch in loader:
                if consumer == "sleep":
                    time.sleep(0.05)
    except KeyboardInterrupt:
        pass
    import gc; gc.collect()   # the abandoned epoch (consumer == "sleep") is closed with its generator
    left = [n for d in os.listdir(runtime_dir) for n in os.listdir(os.path.join(runtime_dir, d)) if n.endswith(".sbt")]
    # A joined thread can stay listed in /proc/self/task for a moment (its tid is cleared,
    # and pthread_join returns, before the kernel reaps the task): give it up to 2 s.
    for _ in range(200):
        after = thread_names()
        if len(after) <= before:
            break
        time.sleep(0.01)
    print("interrupted", len(after) <= before, len(left), flush=True)
    if len(after) > before:
        print("threads", sorted(after), file=sys.stderr, flush=True)
    loader.close()
    print("closed", os.listdir(runtime_dir), flush=True)
""")


@pytest.mark.parametrize("consumer", ["noop", "sleep"])
def test_ctrl_c_stops_the_threads_cleanly(graph, tmp_path, consumer):
    runtime_dir = tmp_path / "rt"
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED, graph["dataset"], str(runtime_dir), consumer],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=CHILD_ENV)
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.5)  # a few epochs in
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail("the child did not stop after SIGINT")
    assert child.returncode == 0, err
    lines = out.splitlines()
    assert lines[0] == "interrupted True 0", out + err  # threads joined, no trace file left
    assert lines[1] == "closed []", out + err


BUDGETED = textwrap.dedent("""
    import os, resource, sys
    import torch
    import seer
    float(torch.ones(4096, 64).sum())  # the consumer's own start-up (torch's threads) before the loader
    # The runtime (Python, torch) as it stands, plus 48 MiB for Seer's data path and the batches.
    budget = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") + (48 << 20)
    loader = seer.NeighborLoader(sys.argv[1], fanouts=[10, 10], batch_size=500, memory_budget=budget,
                                 direct_io=False, seed=1)
    split = loader.memory_split()
    total = 0.0
    for epoch in range(2):
        for batch in loader:
            total += float(batch.x.sum())        # the consumer touches every row
    # VmHWM, this process's own peak: ru_maxrss also counts a forking parent's RSS
    # (kept across execve), e.g. pytest's after earlier tests' loaders.
    peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) * 1024
    print(budget, split["runtime_bytes"], split["fcache_bytes"], peak, loader.stats()["misses"])
""")


def test_peak_rss_stays_within_a_process_wide_budget(tmp_path):
    g = str(tmp_path / "g")
    run_seer(f"gen --nodes 60000 --avg-degree 10 --feature-dim 64 --seed 4 --quiet --out {g}")  # 15 MiB of features
    proc = subprocess.run([sys.executable, "-c", BUDGETED, g], capture_output=True, text=True, env=CHILD_ENV,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    budget, runtime, fcache, peak, misses = (int(v) for v in proc.stdout.split())
    assert runtime > 100 << 20  # Python + torch, measured and paid first
    assert 0 < fcache < 15 << 20 and misses > 0  # the split sized a partial cache
    assert peak <= budget, f"peak RSS {peak} > budget {budget}"
