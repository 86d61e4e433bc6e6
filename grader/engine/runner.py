"""Run the checks of some topics against one submission: pytest in-process, children from one warm zygote."""
from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader import collection, topics as topic_registry
from grader.engine import blame, goldens
from grader.engine.plugin import CheckResult, ScorePlugin
from grader.interrupt import Interrupted
from grader.sandbox import cgroup, connection, folders, pool, remote
from grader.sandbox.policy import sandbox_config
from grader.sandbox.zygote import Zygote, shared

_swept: list[bool] = []


def zygote() -> Zygote:
    """The process's zygote (the CLI starts it before importing torch); the first call also removes the child
    folders and memory cgroups that killed runs left behind."""
    if not _swept:
        folders.remove_stale_folders()
        cgroup.remove_stale()
        _swept.append(True)
    return shared()


def load_hypothesis_profile() -> None:
    """No example database (no replay of old failures), no deadlines, no health checks, no explain phase, and
    hypothesis's storage in a private folder (`_private_hypothesis_home`).

    The explain phase replays a shrunk failure many times over to annotate hypothesis's own report, which the grader
    never shows (a check's message is its own); it changes no example, and it took 15 of the 23 s a broken
    allocator spent in paged_kv's state machine."""
    import hypothesis

    _private_hypothesis_home()
    _no_local_constants()
    hypothesis.settings.register_profile(
        "infergrade", database=None, deadline=None, print_blob=False,
        suppress_health_check=list(hypothesis.HealthCheck),
        phases=[p for p in hypothesis.Phase if p is not hypothesis.Phase.explain])
    hypothesis.settings.load_profile("infergrade")


def _no_local_constants() -> None:
    """Hypothesis draws about 5% of its values from the literal constants of the modules it deems local: an editable
    checkout's are, an installed grader's (site-packages) are not, so one seed would draw other hidden cases on an
    instructor's checkout than on Gradescope. No module is local to the checks: one seed, one set of cases."""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "is_local_module_file"):  # tests/test_determinism.py notices a release that moves it
        providers.is_local_module_file = lambda path: False


@functools.cache
def _private_hypothesis_home() -> None:
    """Hypothesis keeps the literal constants of every module loaded (the hidden checks', the reference's) in its
    storage folder, `.hypothesis` in the working folder by default, which may be the submission's: it goes to a
    folder of this process instead, named as a child's folder so that a killed run's is swept at the next start."""
    from hypothesis import configuration

    home = tempfile.mkdtemp(prefix=f"{folders.CHILD_FOLDER}{os.getpid()}-hypothesis-")
    atexit.register(shutil.rmtree, home, True)
    configuration.set_hypothesis_home_dir(home)


@dataclass
class Run:
    """What a run of checks produced: each check's result, the interrupt that stopped it early, its deadline."""
    results: list[CheckResult]
    interrupted: Interrupted | None = None
    deadline_s: float | None = None
    deadline_passed: bool = False


class OnlyFunctions:
    """A pytest plugin that keeps the checks of some functions only (a class's methods count as the class)."""

    def __init__(self, functions: set[str]):
        self.functions = functions

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items):
        items[:] = [i for i in items if unit_of(getattr(getattr(i, "obj", None), "__infergrade__", None))
                    in self.functions]


def unit_of(meta) -> str | None:
    """The top-level name a check's hint points at: `BlockAllocator` for `BlockAllocator.append`."""
    return meta.hint.split(".")[0] if meta is not None and meta.hint else None


def run_checks(submission: Path, topics: list[str], hidden: bool, seed: int, record_goldens: bool = False,
               memory_bytes: int = remote.MEMORY_BYTES, deadline_s: float | None = None,
               only: set[str] | None = None) -> Run:
    """Every selected check's result, in file order, within the run's deadline (by default
    DEADLINE_PER_TOPIC for each topic), of which each topic has an equal share; `only` keeps the checks of those
    functions (watch, notebooks).

    A check module that fails to load gives an error result. Checks run with plain asserts: a failure message
    never holds pytest's rendering of grader objects.
    """
    # every topic's public checks before any hidden one: a child could leave bits of a hidden case in what
    # outlives it (the page cache of shared read-only files), and no later check's message may be public
    files = sorted((f for t in topics for f in topic_registry.check_files(t, hidden)),
                   key=lambda f: f.name == "test_hidden.py")
    if not files:
        return Run([])
    deadline_s = pool.DEADLINE_PER_TOPIC * len(topics) if deadline_s is None else deadline_s
    if any("hypothesis" in p.read_text() for t in topics for p in (topic_registry.CHECKS_DIR / t).glob("*.py")):
        load_hypothesis_profile()  # before the check modules build their settings (hypothesis costs ~0.1 s)
    args = [*map(str, files), "-c", str(topic_registry.CHECKS_DIR / "pytest.ini"),
            "--rootdir", str(topic_registry.CHECKS_DIR), "-p", "no:cacheprovider", "-p", "no:terminal",
            "-p", "no:warnings", "-p", "no:unraisableexception", "-p", "no:threadexception", "--capture=sys",
            "--assert=plain"]
    if record_goldens:
        for t in topics:
            goldens.start_recording(t)
    collection.resume()  # the imports are done: what they made is never scanned again
    with pytest.MonkeyPatch.context() as env:
        plugin = ScorePlugin(zygote(), sandbox_config(submission, memory_bytes, connection.OUTPUT_BYTES),
                             hidden, seed, record_goldens, topic_registry.signature, deadline_s, len(topics))
        for name in [name for name in os.environ if name.startswith("PYTEST_")]:
            env.delenv(name)  # no option or plugin from the environment (PYTEST_ADDOPTS, PYTEST_PLUGINS) counts
        env.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        code = pytest.main(args, plugins=[plugin] + ([OnlyFunctions(only)] if only is not None else []))
    assert code not in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR), f"pytest could not run: {code!r}"
    results = list(plugin.results.values())
    for nodeid, text in plugin.collection_errors:
        topic = Path(nodeid.split("::")[0]).parent.name or "grader"
        results.append(CheckResult(f"{topic}.load_checks", topic, "the checks of this topic load", "public", 0,
                                   status="error", message=f"grader error: could not load {nodeid}:\n{text}",
                                   internal_error=True))
    blame.point_at_callees(results, submission)
    return Run(results, plugin.interrupted, deadline_s, plugin.pool.deadline_passed)
