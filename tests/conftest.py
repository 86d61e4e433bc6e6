"""The suite's set-up: the grader's zygote in every process that runs tests, the walls' tests on one worker."""
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
import torch

from grader.engine.runner import zygote

os.environ.setdefault("TRITON_INTERPRET", "1")
torch.set_num_threads(1)  # as in the CLI: grading stays steady on a loaded 2-core machine
SIGNAL_HANDLERS = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}  # pytest's, before any import
WALLS = ("tests/hostile/", "tests/test_sandbox.py")  # tests that watch the machine's processes or choose its next pid
SPREAD = ("tests/test_selftest.py",)


def pytest_configure(config):
    """Start the zygote now (its `import torch` runs beside collection) where tests run: not in pytest-xdist's
    controller, which only hands tests out."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        zygote()


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject's addopts) takes one worker per core, at most four: each holds a zygote with torch."""
    return max(1, min(len(os.sched_getaffinity(0)), 4))


def pytest_xdist_make_scheduler(config, log):
    """Whole files to a worker, so that a module's fixtures (a graded class, executed notebooks) are made once; the
    walls' tests all to one worker, one after another; the self-test's gradings, which share nothing, one by one."""
    from xdist.scheduler import LoadFileScheduling

    class Scopes(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(WALLS):
                return "walls"
            return nodeid if nodeid.startswith(SPREAD) else super()._split_scope(nodeid)

    return Scopes(config, log)


@pytest.fixture
def open_folder():
    """A submission folder anyone may read: without a private root, a root grader's child runs as nobody."""
    path = Path(tempfile.mkdtemp(prefix="infergrade-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def close_child_pools(monkeypatch):
    """Close every ChildPool a test makes: its spare child and that child's folder end with the test."""
    from grader.sandbox import pool as pools

    made = []
    start = pools.ChildPool.__init__

    def remember(pool, *args, **kwargs):
        start(pool, *args, **kwargs)
        made.append(pool)

    monkeypatch.setattr(pools.ChildPool, "__init__", remember)
    yield
    for pool in made:
        pool.close()


def graders_handlers() -> dict:
    """The SIGINT and SIGTERM handlers of this process that are the grader's own."""
    found = {s: signal.getsignal(s) for s in SIGNAL_HANDLERS}
    return {s: h for s, h in found.items() if getattr(h, "__module__", "").startswith("grader")}


@pytest.fixture(autouse=True)
def signal_handlers_kept():
    """Ctrl-C still stops the suite: no import (at collection) and no test leaves the grader's SIGINT or SIGTERM
    handlers in this process. What a library puts back (nbclient's event loop restores Python's own SIGINT handler,
    where a pytest-xdist worker had it ignored) is undone after each test."""
    assert not graders_handlers(), "a grader's signal handler was left before this test"
    yield
    left = graders_handlers()
    for s, handler in SIGNAL_HANDLERS.items():
        signal.signal(s, handler)
    assert not left, "this test left the grader's signal handler"
