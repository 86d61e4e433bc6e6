"""The memory cgroup of each sandbox child (grader/sandbox/cgroup.py): capped at the sandbox's memory, holding every
process of the sandbox, named in the results' isolation record, and never left behind, not even by a grader that
was killed. Skipped where no memory controller is writable (not root, none delegated): there the watchdog alone
holds the cap, as test_memory_under_load shows."""
import os
import subprocess
import sys

import pytest

from grader.results import isolation_level, validator
from grader.sandbox import cgroup
from grader.sandbox.policy import sandbox_config
from grader.sandbox.failures import ChildFailure
from grader.sandbox.pool import ChildPool
from grader.sandbox.remote import Submission
from grader.sandbox.zygote import Zygote

GIB = 2**30
PROBES = "def ping():\n    return True\n"
LIMIT_FILE = {"v2": "memory.max", "v1": "memory.limit_in_bytes"}


@pytest.fixture
def controller():
    found = cgroup.find() if sys.platform.startswith("linux") else None
    if found is None:
        pytest.skip("no writable memory controller here (not root, or no memory cgroup delegated to the grader)")
    return found


def _read(folder: str, name: str) -> str:
    with open(os.path.join(folder, name)) as f:
        return f.read()


def owner(child) -> int:
    """The pid the zygote forked for a check's child: its topic's sandbox (template.py), or its own chain."""
    return child.sandbox.pid if child.sandbox is not None else child.pid


def test_each_sandbox_runs_in_its_own_memory_cgroup_and_the_isolation_record_says_which(sandboxed, controller):
    sub = sandboxed(PROBES, GIB // 2)
    assert sub.ping() is True
    child = sub._child
    folder = cgroup.Cgroups(controller, os.getpid()).folder(owner(child))
    assert int(_read(folder, LIMIT_FILE[controller.version])) == GIB // 2
    members = {int(pid) for pid in _read(folder, "cgroup.procs").split()}
    assert {owner(child), child.inner_pid} <= members  # the sandbox's first process and the submission's
    record = isolation_level(sub.isolation)
    assert record["memory_cgroup"] == controller.version and "memory-cgroup" in record["level"].split("+")
    schema = validator().evolve(schema=validator().schema["properties"]["isolation"])
    assert [e.message for e in schema.iter_errors(record)] == []
    sub.close()


def test_the_isolation_record_names_no_cgroup_but_those_that_exist():
    for reported in (None, "v3", 2, ["v1"]):  # none made, or a value no child of ours sends
        record = isolation_level({"watchdog": True, "memory_cgroup": reported})
        assert record["memory_cgroup"] is None and record["level"] == "watchdog+rlimits"
    assert isolation_level({"memory_cgroup": "v1"})["level"] == "memory-cgroup+rlimits"


@pytest.mark.parametrize("templates", [True, False], ids=["sandbox-per-topic", "chain-per-check"])
def test_no_memory_cgroup_outlives_its_sandbox(tmp_path, controller, templates):
    """A check reaped after its call, one discarded, the topic's sandbox (or, with a chain per check, the spare a
    pool starts ahead): all gone once the zygote is closed (and each existed while its check ran)."""
    (tmp_path / "demo.py").write_text(PROBES)
    config = {**sandbox_config(tmp_path, GIB // 2, 2**20), "topic": "demo", "forbidden": []}
    zygote = Zygote()
    cgroups = cgroup.Cgroups(controller, os.getpid())
    pool = ChildPool(zygote, templates=templates)
    owners = set()
    for close in ("reap", "discard"):
        sub = Submission(pool, config)
        assert sub.ping() is True
        owners.add(owner(sub._child))
        assert os.path.isdir(cgroups.folder(owner(sub._child)))
        sub._child.close() if close == "reap" else sub.close()
    owners |= {owner(child) for child in pool.started}
    assert len(owners) == (1 if templates else 3)  # one sandbox; or two chains and the spare
    pool.close()
    zygote.close()
    assert [pid for pid in owners if os.path.exists(cgroups.folder(pid))] == []


def test_cgroups_left_by_a_killed_grader_are_removed_at_the_next_start(controller):
    gone = cgroup.Cgroups(controller, 4200000).folder(1)  # above the largest pid Linux hands out
    running = cgroup.Cgroups(controller, os.getpid()).folder(1)  # no child of this grader has pid 1
    for folder in (gone, running):
        os.mkdir(folder)
    left = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(60)"])
    try:
        with open(os.path.join(gone, "cgroup.procs"), "w") as f:
            f.write(str(left.pid))  # a process the killed grader's sandbox left running
        assert cgroup.remove_stale(controller) == 1
        assert not os.path.exists(gone) and os.path.isdir(running)
        assert left.wait(timeout=5) == -9
    finally:
        left.kill()
        os.rmdir(running)


HOG = '''
import os, time

def hog(workers, gib):
    """Each of `workers` processes holds `gib` GiB (each under the per-process address space headroom)."""
    for _ in range(workers):
        if os.fork() == 0:
            block = bytearray(int(gib * 2**30))
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(60)
    time.sleep(5)
    return workers

def ping():
    return True
'''


def test_a_kill_for_memory_ends_the_topic_sandbox_and_the_next_check_gets_a_new_one(tmp_path, controller):
    """The kernel's kill in a topic's cgroup is said as a memory kill, and costs only the check that made it."""
    (tmp_path / "demo.py").write_text(HOG)
    config = {**sandbox_config(tmp_path, GIB // 2, 2**20), "topic": "demo", "forbidden": []}
    zygote = Zygote()
    pool = ChildPool(zygote)
    try:
        greedy = Submission(pool, config)
        assert greedy.ping() is True
        with pytest.raises(ChildFailure, match="together held more than 0.5 GiB"):
            greedy.hog(3, 0.3)
        first = owner(greedy._child)
        greedy.close()
        after = Submission(pool, config)
        assert after.ping() is True
        assert owner(after._child) != first and after.isolation["memory_cgroup"] == controller.version
        after.close()
    finally:
        pool.close()
        zygote.close()
