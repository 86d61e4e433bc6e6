"""Starting an attack: a `demo.py` of probes in a sandboxed child, or a speculative submission graded whole; the
machine's CPUs kept busy by competing processes, as on a shared grading server."""
import json
import os
import subprocess
import sys

import pytest

from grader.engine.runner import zygote
from grader.grading import grade
from grader.results import problems
from grader.sandbox.failures import ChildFailure
from grader.sandbox.policy import sandbox_config
from grader.sandbox.pool import ChildPool
from grader.sandbox.remote import Submission
from grader.sandbox.zygote import Zygote


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


# Why a test that needs a wall is skipped where the wall does not stand, by its key in `sub.isolation`.
MISSING_WALL = {"watchdog": "no watchdog here (no private root)", "ipc_namespace": "no IPC namespace here",
                "pid_namespace": "no PID namespace here"}


@pytest.fixture
def walled(sandboxed):
    """`walled(source, wall, memory_bytes, timeout)`: as `sandboxed`, started (its `ping()` answered); skipped where
    the wall (a key of `sub.isolation`) does not stand here, since the attack proves nothing without it."""
    def start(source: str, wall: str, memory_bytes: int, timeout: float) -> Submission:
        sub = sandboxed(source, memory_bytes, timeout=timeout)
        sub.ping()
        if not sub.isolation.get(wall):
            pytest.skip(MISSING_WALL[wall])
        return sub
    return start


@pytest.fixture
def failure_of(sandboxed):
    """`failure_of(source, name, *args)`: what the ChildFailure says that ends call `name(*args)` of a sandbox serving
    `demo.py` = `source` (20 s calls), whose `ping()` answered 1 first; the sandbox is closed after."""
    def run(source: str, name: str, *args) -> str:
        sub = sandboxed(source, timeout=20)
        assert sub.ping() == 1
        with pytest.raises(ChildFailure) as failure:
            getattr(sub, name)(*args)
        sub.close()
        return str(failure.value)
    return run


@pytest.fixture
def private_root_refused():
    """A zygote whose children meet a refused private root (mounts.build_root raises), as where the kernel says no
    (pass it as `zygote_`)."""
    refused = Zygote(prelude="from grader.sandbox import mounts\n"
                             "def refuse(*args, **kwargs):\n"
                             "    raise mounts.MountError(1, 'refused for this test')\n"
                             "mounts.build_root = refuse\n")
    yield refused
    refused.close()


@pytest.fixture(scope="session")
def watchdog_alone():
    """A zygote in which no memory cgroup can be made, as where the kernel refuses one (not root, say): its children's
    summed memory cap is held by the watchdog alone, which the watchdog's own attacks test (pass it as `zygote_`)."""
    zygote_ = Zygote(prelude="import grader.sandbox.cgroup as cgroup; cgroup.find = lambda: None")
    yield zygote_
    zygote_.close()


@pytest.fixture(params=["memory_cgroup", "watchdog"])
def capped(request, sandboxed):
    """`capped(source, memory_bytes, timeout)`: as `sandboxed`, started (its `ping()` answered), with its summed
    memory cap held by a memory cgroup (the kernel, beside the watchdog) or by the watchdog alone, as `capped.kind`
    says; skipped where that one cannot hold here."""
    def start(source: str, memory_bytes: int, timeout: float) -> Submission:
        alone = request.getfixturevalue("watchdog_alone") if request.param == "watchdog" else None
        sub = sandboxed(source, memory_bytes, timeout=timeout, zygote_=alone)
        sub.ping()
        if request.param == "memory_cgroup" and sub.isolation.get("memory_cgroup") is None:
            pytest.skip("no memory cgroup can be made here (not root, or no writable memory controller)")
        if request.param == "watchdog" and not sub.isolation.get("watchdog"):
            pytest.skip("no watchdog here (no private root)")
        return sub
    start.kind = request.param
    return start


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
def sampling_command_messages(tmp_path):
    """`sampling_command_messages(source, seed, out, env, marker)`: the check messages that hold `marker` when
    `python -m grader grade` runs as a command with `env` on topic sampling, `sampling.py` = `source`, writing `out`;
    its results document is sound and the probe reported (some message holds the marker)."""
    def run(source: str, seed: str, out, env: dict, marker: str) -> list[str]:
        folder = tmp_path / "sub"
        folder.mkdir()
        (folder / "sampling.py").write_text(source)
        subprocess.run([sys.executable, "-m", "grader", "grade", "--topic", "sampling", "--submission", str(folder),
                        "--seed", seed, "--out", str(out)], env=env, capture_output=True, timeout=120, cwd=tmp_path)
        doc = json.loads(out.read_text())
        assert problems(doc) == []
        found = [c["message"] for t in doc["topics"] for c in t["checks"] if marker in c["message"]]
        assert found  # the probe ran and reported
        return found
    return run


@pytest.fixture
def saturated_cpus():
    """`saturated_cpus()`: two busy processes per CPU from then to the end of the test, at the grader's own
    priority: a watchdog that can be starved misses what a submission does meanwhile (the memory tests failed every
    time at load 9 to 20). Called once the sandbox is up, so that the attack, not the zygote's import, runs under
    the load; it returns the processes, for the test to check they were still busy when the attack ended."""
    busy = []

    def saturate() -> list[subprocess.Popen]:
        busy.extend(subprocess.Popen([sys.executable, "-S", "-c", "while True: pass"])
                    for _ in range(2 * os.cpu_count()))
        return busy
    yield saturate
    for process in busy:
        process.kill()
        process.wait()


# A grader that is not root: its sandboxes' user namespaces map one uid, as the grader writes them where the host
# refuses a second one (a check then has PID 1's uid).
ONE_UID = ("from grader.sandbox import namespaces\n"
           "def _one_uid(pid, uid, gid):\n"
           "    namespaces._write(f'/proc/{pid}/setgroups', 'deny')\n"
           "    namespaces._write(f'/proc/{pid}/uid_map', f'0 {uid} 1\\n')\n"
           "    namespaces._write(f'/proc/{pid}/gid_map', f'0 {gid} 1\\n')\n"
           "namespaces.write_maps = _one_uid\n")


@pytest.fixture
def topic_checks_of(tmp_path):
    """`topic_checks_of(source, memory_bytes, output_bytes, one_uid, prelude)`: a function that starts the next check
    of topic `demo` = `source` (a Submission with 30 s calls); every check from one pool, so one topic sandbox serves
    them all in turn (with `one_uid`, a sandbox that maps one uid, as for a grader that is not root; with `prelude`,
    a zygote of its own that runs it first)."""
    pools, zygotes = [], []

    def start(source: str, memory_bytes: int = 2**30, output_bytes: int = 2**20, one_uid: bool = False,
              prelude: str = ""):
        folder = tmp_path / "sub"  # below the host's /tmp where TMPDIR is: bound below the sandbox's /tmp
        folder.mkdir(exist_ok=True)
        (folder / "demo.py").write_text(source)
        config = {**sandbox_config(folder, memory_bytes, output_bytes), "topic": "demo", "forbidden": []}
        if one_uid or prelude:
            zygotes.append(Zygote(prelude=(ONE_UID if one_uid else "") + prelude))
        pools.append(ChildPool(zygotes[-1] if one_uid or prelude else zygote()))
        pool = pools[-1]

        def next_check() -> Submission:
            sub = Submission(pool, config)
            sub.set_timeout(30)
            return sub
        return next_check
    yield start
    for pool in pools:
        pool.close()
    for started in zygotes:
        started.close()

