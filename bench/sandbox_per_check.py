"""CPU and wall time per check of the sandbox: a topic's template (a fork per check) against a chain per check.

Run: python3 bench/sandbox_per_check.py [--runs 5] [--checks 20]
Each run is a fresh process that starts a zygote and imports `solutions/sampling.py` in 1 check, or in 1 + N
checks, with templates or with a chain per check; the figure is the difference divided by N, from the CPU time of
the whole process tree (user + sys, every process reaped below it) and its wall time, median over runs, the modes
and sizes interleaved so that a loaded machine weighs on each alike.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODES = ("template", "chain")


def run_checks(mode: str, checks: int) -> None:
    """In the measured process: `checks` checks of sampling that import the submission and end."""
    sys.path.insert(0, str(REPO))
    from grader.sandbox.policy import sandbox_config
    from grader.sandbox.pool import ChildPool
    from grader.sandbox.remote import Submission
    from grader.sandbox.zygote import shared

    pool = ChildPool(shared(), templates=mode == "template")
    config = {**sandbox_config(REPO / "solutions", 2**30, 2**20), "topic": "sampling", "forbidden": []}
    for _ in range(checks):
        sub = Submission(pool, config)
        assert sub.rss_before_import, "the check's child did not start"
        sub.close()
    pool.close()


def timed(mode: str, checks: int) -> tuple[float, float]:
    """Wall and process-tree CPU seconds of one measured process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--child", mode, str(checks)], cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"{mode} x{checks} failed"
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--checks", type=int, default=20)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_checks(args.child[0], int(args.child[1]))
        return
    per: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    for _ in range(args.runs):
        for mode in MODES:
            one, many = timed(mode, 1), timed(mode, 1 + args.checks)
            per[mode].append(((many[0] - one[0]) / args.checks, (many[1] - one[1]) / args.checks))
    print(f"{os.cpu_count()} cores, {args.runs} runs, {args.checks} checks over 1")
    for mode in MODES:
        wall = statistics.median(w for w, _ in per[mode])
        cpu = statistics.median(c for _, c in per[mode])
        print(f"{mode:9} per check: wall {wall * 1000:6.1f} ms  CPU {cpu * 1000:6.1f} ms  "
              f"(CPU min {min(c for _, c in per[mode]) * 1000:.1f}, max {max(c for _, c in per[mode]) * 1000:.1f})")


if __name__ == "__main__":
    main()
