"""Starting an attack: a `demo.py` of probes in a sandboxed child, or a speculative submission graded whole; the
machine's CPUs kept busy by competing processes, as on a shared grading server."""
import os
import subprocess
import sys

import pytest

from grader.engine.runner import zygote
from grader.grading import grade
from grader.sandbox.policy import sandbox_config
from grader.sandbox.remote import ChildPool, Submission


@pytest.fixture
def sandboxed(tmp_path):
    """`sandboxed(source)`: a Submission serving `demo.py` = `source` in its own child, as a check's would be."""
    pools = []

    def start(source: str, memory_bytes: int = 2**30, timeout: float = 20, folder=None, zygote_=None) -> Submission:
        folder = folder or tmp_path / "sub"
        folder.mkdir(exist_ok=True)
        (folder / "demo.py").write_text(source)
        config = {**sandbox_config(folder, memory_bytes, 2**20), "topic": "demo", "forbidden": []}
        pools.append(ChildPool(zygote_ or zygote()))
        sub = Submission(pools[-1], config)
        sub.set_timeout(timeout)
        return sub
    yield start
    for pool in pools:  # the spare child each pool started ahead
        pool.close()


@pytest.fixture
def graded_speculative(tmp_path):
    """`graded_speculative(name, source)`: each public check's result for `speculative.py` = `source`, by name."""
    def run(name: str, source: str) -> dict:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "speculative.py").write_text(source)
        doc = grade(folder, ["speculative"], hidden=False, seed=5, with_progress=False)
        return {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    return run


@pytest.fixture
def saturated_cpus():
    """Two busy processes per CPU for the length of the test, at the grader's own priority: a watchdog that can be
    starved misses what a submission does meanwhile (the memory tests failed every time at load 9 to 20)."""
    busy = [subprocess.Popen([sys.executable, "-S", "-c", "while True: pass"]) for _ in range(2 * os.cpu_count())]
    yield len(busy)
    for process in busy:
        process.kill()
        process.wait()
