"""The critical path of a cold `infergrade check`, as a timeline: when the zygote starts, when its first sandbox is
forked (the zygote has imported torch, and the grader asked for the topic's sandbox), when the first and the last
check's process run, and when the command exits, beside `import torch` alone.

Run: python3 bench/timeline.py [TOPIC] [--runs 3]
The process tree below the command is sampled every 2 ms from /proc (a process that lives under 2 ms can be
missed); each figure is the median over runs, in seconds from the command's start.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from grading import tree  # bench/grading.py, beside this file

REPO = Path(__file__).resolve().parent.parent
INTERVAL = 0.002


def one_run(topic: str) -> dict[str, float]:
    """Times of one cold check: the zygote seen, its first child seen, the checks' processes first and last seen
    (the deepest level of the tree, where each check's process runs), the exit."""
    env = {**os.environ, "INFERGRADE_WARM": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "grader", "check", topic, "--submission", "solutions"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    marks: dict[str, float] = {}
    deepest, seen_at_deepest = 0, []
    while proc.poll() is None:
        now = time.perf_counter() - start
        depths = tree(proc.pid)
        level = max(depths.values())
        if level >= 1:
            marks.setdefault("zygote started", now)
        if level >= 2:
            marks.setdefault("first sandbox forked", now)
        if level > deepest:
            deepest, seen_at_deepest = level, []
        if level == deepest and level >= 3:
            seen_at_deepest.append(now)
        time.sleep(INTERVAL)
    marks["command exited"] = time.perf_counter() - start
    if seen_at_deepest:
        marks["first check's process"], marks["last check's process"] = seen_at_deepest[0], seen_at_deepest[-1]
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("topic", nargs="?", default="sampling")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    torch_s = statistics.median(_timed([sys.executable, "-c", "import torch"]) for _ in range(args.runs))
    runs = [one_run(args.topic) for _ in range(args.runs)]
    print(f"cold `infergrade check {args.topic}`, median of {args.runs} runs, seconds from the start "
          f"(load {os.getloadavg()[0]:.2f})")
    print(f"{'import torch alone':32} {torch_s:6.2f}")
    order = ["zygote started", "first sandbox forked", "first check's process", "last check's process",
             "command exited"]
    for mark in order:
        values = [r[mark] for r in runs if mark in r]
        if values:
            print(f"{mark:32} {statistics.median(values):6.2f}")


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
