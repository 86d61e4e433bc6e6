"""A class with hostile uploads, timed: a good submission, a corrupt zip, a disguised bz2 bomb and another good one.

Run: python3 bench/hostile_batch.py [--runs 3] [--topic sampling ...] [--jobs 2]
Issue 17's figure: the batch ends within a minute with a row for every student in grades.csv (the bomb, 1.25 TB
declared in a few MiB named .tar.gz, and the zip whose deflate stream is corrupt are each that student's error).
Prints the median wall time of `grade-batch` over the runs, and how long the bomb and the zip took to refuse.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "hostile"))

from test_archives import bz2_bomb, corrupt_zip  # noqa: E402 - the uploads the hostile tests use


def build_class(folder: Path, topics: list[str]) -> None:
    """ann and zed: the model solutions of `topics`; bob.zip: corrupt; cat.tar.gz: a bz2 bomb."""
    for name in ("ann", "zed"):
        (folder / name).mkdir(parents=True)
        for topic in topics:
            shutil.copy(REPO / "solutions" / f"{topic}.py", folder / name)
    corrupt_zip(folder / "bob.zip")
    bz2_bomb(folder / "cat.tar.gz")


def run_batch(klass: Path, out: Path, topics: list[str], jobs: int) -> float:
    """Wall seconds of one grade-batch over `klass`; asserts that every student has a row."""
    topic_args = [arg for t in topics for arg in ("--topic", t)]
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "grade-batch", str(klass), "--out", str(out), *topic_args,
                    "--hidden", "--seed", "3", "--jobs", str(jobs)], cwd=REPO, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False, env={**os.environ, "PYTHONPATH": str(REPO)})
    took = time.perf_counter() - started
    with (out / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == ["ann", "bob", "cat", "zed"], sorted(rows)
    assert rows["ann"]["status"] == rows["zed"]["status"] == "completed", rows
    assert rows["bob"]["status"] == rows["cat"]["status"] == "error", rows
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--topic", action="append", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    topics = args.topic or ["sampling"]
    with tempfile.TemporaryDirectory() as tmp:
        klass = Path(tmp) / "class"
        build_class(klass, topics)
        walls, refused = [], {}
        for run in range(args.runs):
            out = Path(tmp) / f"out{run}"
            walls.append(run_batch(klass, out, topics, args.jobs))
            for name in ("bob", "cat"):
                refused.setdefault(name, []).append(json.loads((out / f"{name}.json").read_text())["duration_s"])
    print(f"grade-batch --jobs {args.jobs} of 2 good ({', '.join(topics)}), a corrupt zip and a bz2 bomb: "
          f"median {statistics.median(walls):.1f} s wall over {args.runs} runs (min {min(walls):.1f}, max "
          f"{max(walls):.1f}); target <= 60 s")
    print(f"  refused in: corrupt zip {statistics.median(refused['bob']):.2f} s, bz2 bomb "
          f"{statistics.median(refused['cat']):.2f} s (medians)")


if __name__ == "__main__":
    main()
