"""Batch grading against separate runs: `grade-batch` on N copies of the model solutions, against N `grade` calls.

Run: python3 bench/batch.py [--count 20] [--jobs 2] [--topic T ...]
Both grade every submission in hidden mode with one seed. The target: the batch takes at most 60% of the
separate calls' time on 2 cores (it pays for `import torch` and a zygote once per worker, not once per student,
and grades two at once).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GRADER = [sys.executable, "-m", "grader"]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--topic", action="append", default=[])
    args = parser.parse_args()
    topics = [a for t in args.topic for a in ("--topic", t)]
    work = Path(tempfile.mkdtemp(prefix="infergrade-bench-batch-"))
    try:
        for i in range(args.count):
            shutil.copytree(REPO / "solutions", work / "class" / f"student{i:02d}",
                            ignore=shutil.ignore_patterns("__pycache__"))
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {args.count} submissions of "
              f"{', '.join(args.topic) or 'every topic'}, hidden checks\n")
        separate = sum(timed([*GRADER, "grade", "--hidden", "--submission", str(work / "class" / s.name), *topics,
                              "--seed", "1", "--out", str(work / "separate" / f"{s.name}.json")])
                       for s in sorted((work / "class").iterdir()))
        print(f"{args.count} separate `grade --hidden` calls        {separate:8.1f} s")
        batch = timed([*GRADER, "grade-batch", str(work / "class"), "--out", str(work / "batch"), *topics,
                       "--seed", "1", "--jobs", str(args.jobs)])
        print(f"one `grade-batch --jobs {args.jobs}`                   {batch:8.1f} s")
        ratio = batch / separate
        print(f"batch / separate                               {ratio:8.2f}   (target <= 0.60: "
              f"{'met' if ratio <= 0.6 else 'MISSED'})")
        graded = len(list((work / "batch").glob("student*.json")))
        if graded != args.count:
            print(f"  ! the batch wrote {graded} results, expected {args.count}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
