"""Round trips to served toy models: how many calls each check's submission makes to the grader's objects, and
what answering them costs the grader, for a hidden grade of one topic (issue 20 item 4).

Run: python3 bench/round_trips.py [-t speculative] [--seed 1] [--submission solutions]
Counts every callback frame the grader answers (`served.answer`), by check, with the grader's CPU time (user +
sys of this process) spent answering and waiting between them; the total CPU line is the whole process tree's.
"""
from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.grading import grade  # noqa: E402 - the checkout's own, whatever is installed
from grader.sandbox import connection, served  # noqa: E402


def tree_cpu() -> float:
    """User + sys seconds of this process and its reaped children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-t", "--topic", default="speculative")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--submission", type=Path, default=REPO / "solutions")
    parser.add_argument("--public", action="store_true", help="public checks only")
    args = parser.parse_args()

    calls, cpu_in_calls = collections.Counter(), collections.Counter()
    answer = served.answer

    def counted(objects, payload):
        check = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[-1].split(" ")[0]
        calls[check] += 1
        t0 = time.process_time()
        try:
            return answer(objects, payload)
        finally:
            cpu_in_calls[check] += time.process_time() - t0

    served.answer = counted
    request = connection.Child.request
    grader_cpu = collections.Counter()

    def timed_request(self, *a, **k):
        check = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[-1].split(" ")[0]
        t0 = time.process_time()
        try:
            return request(self, *a, **k)
        finally:
            grader_cpu[check] += time.process_time() - t0

    connection.Child.request = timed_request
    cpu0, wall0 = tree_cpu(), time.monotonic()
    doc = grade(args.submission, [args.topic], hidden=not args.public, seed=args.seed, with_progress=False)
    cpu, wall = tree_cpu() - cpu0, time.monotonic() - wall0
    print(f"{'check':45s} {'calls':>7s} {'answer s':>9s} {'requests s':>10s}")
    for check in sorted(grader_cpu, key=lambda c: -calls[c]):
        print(f"{check:45s} {calls[check]:7d} {cpu_in_calls[check]:9.3f} {grader_cpu[check]:10.3f}")
    print(f"{'total':45s} {sum(calls.values()):7d} {sum(cpu_in_calls.values()):9.3f} "
          f"{sum(grader_cpu.values()):10.3f}")
    print(f"score {doc['score']}/{doc['max_score']}; whole tree CPU {cpu:.2f} s, wall {wall:.2f} s")


if __name__ == "__main__":
    main()
