"""grade-batch, red team: a classmate's 64 busy threads leave a correct submission its CPU share, whether or not the
kernel groups threads by session.

The review found a correct submission's score intact beside 64 busy threads in `grade-batch --jobs 2` only because
sched_autogroup_enabled was 1: each sandbox, a session of its own, was one scheduling group. With it off the kernel
is fair between threads, 64 of the classmate's to each of the check's: the correct one's checks took 5.7 times as long
as alone (8.5 s for 1.5 s), with its calls' time limits the only bound. Each sandbox now has a cpu cgroup of its own, weighing as much as every other sandbox's (cgroup.py). The
test turns autogroup off where it may (root), grades the correct one alone and then both at once on two CPUs: it keeps
full marks, and its checks take at most BUDGET times as long beside the classmate. It puts the setting back.
"""
import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.results import problems
from grader.sandbox.policy import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="autogroup and cgroups are Linux's")

AUTOGROUP = Path("/proc/sys/kernel/sched_autogroup_enabled")
SAMPLING = (REPO / "solutions" / "sampling.py").read_text()
STUB = (REPO / "exercises" / "sampling.py").read_text()
NAMES = [n.name for n in ast.parse(STUB).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
BUSY = textwrap.dedent('''
    import hashlib, threading

    def _busy():
        block = bytes(2**20)
        while True:
            hashlib.sha256(block).digest()  # hashlib lets go of the GIL: the threads run at once

    for _ in range(64):
        threading.Thread(target=_busy, daemon=True).start()

    def _hang(*args, **kwargs):
        threading.Event().wait()
''') + "".join(f"{name} = _hang\n" for name in NAMES)  # every call hangs to its time limit, the threads busy


@pytest.fixture
def autogroup_off():
    """The kernel's autogroup turned off for the test, and back to what it was after."""
    if not AUTOGROUP.exists():
        pytest.skip("this kernel has no sched_autogroup_enabled (built without autogroup): there is no setting to "
                    "turn off, and threads were never grouped by session here")
    before = AUTOGROUP.read_text()
    try:
        AUTOGROUP.write_text("0")
    except OSError:
        pytest.skip("sched_autogroup_enabled cannot be written here (the test is not root): the CPU share cannot be "
                    "shown to hold without autogroup")
    try:
        yield
    finally:
        AUTOGROUP.write_text(before)


def grade_class(folder: Path, sources: dict[str, str], cpus: list[int]) -> dict[str, dict]:
    """`grade-batch --jobs 2` on sampling's public checks of a class of `sources` (name -> sampling.py), on `cpus`:
    each one's results document."""
    for name, source in sources.items():
        (folder / "class" / name).mkdir(parents=True)
        (folder / "class" / name / "sampling.py").write_text(source)
    graded = subprocess.run(
        [sys.executable, "-m", "grader", "grade-batch", str(folder / "class"), "--out", str(folder / "out"),
         "--jobs", "2", "--topic", "sampling", "--public", "--seed", "7"],
        cwd=folder, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=900,
        preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    docs = {name: json.loads((folder / "out" / f"{name}.json").read_text()) for name in sources}
    assert all(problems(doc) == [] for doc in docs.values()), graded.stderr
    return docs


def in_full(doc: dict) -> bool:
    return doc["score"] == doc["max_score"] > 0 and all(c["status"] == "passed" for t in doc["topics"]
                                                         for c in t["checks"])


# how much longer the correct submission's checks may take beside the classmate than alone (and a second): with a CPU
# share per sandbox they get half the two CPUs (1.8 s alone, 3.6 s beside, at a load of 20 from other work here); with
# one share per thread a few of 67 (1.5 s alone, 8.5 s beside)
BUDGET = 3.0


def test_a_classmates_busy_threads_leave_a_correct_submission_its_marks_and_time(tmp_path, autogroup_off):
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        pytest.skip("one CPU here: the two submissions would not be graded at once")
    (tmp_path / "alone").mkdir()
    (tmp_path / "beside").mkdir()
    alone = grade_class(tmp_path / "alone", {"ada": SAMPLING}, cpus)["ada"]
    docs = grade_class(tmp_path / "beside", {"ada": SAMPLING, "hog": BUSY}, cpus)
    hog = [c for t in docs["hog"]["topics"] for c in t["checks"]]
    assert hog and all(c["status"] in ("timeout", "error") for c in hog)  # it hung, its threads busy, to the end
    ada = docs["ada"]
    assert in_full(alone) and in_full(ada)
    assert ada["topics"][0]["duration_s"] <= BUDGET * alone["topics"][0]["duration_s"] + 1.0, \
        (ada["topics"][0]["duration_s"], alone["topics"][0]["duration_s"])
    isolation = ada["isolation"]
    assert isolation["cpu_cgroup"] in ("v1", "v2") or "nice" in isolation, isolation


PROBES = '''
import os, resource

def share():
    return os.getpriority(os.PRIO_PROCESS, 0), resource.getrlimit(resource.RLIMIT_CPU)
'''


def test_without_a_cpu_cgroup_or_autogroup_a_check_runs_below_the_grader_and_its_cpu_time_is_capped(tmp_path,
                                                                                                   autogroup_off):
    """Where no cpu cgroup can be made (not root, none delegated) and autogroup is off, nothing groups a sandbox's
    threads: the check's process is at least NICE below the grader, its CPU time capped, and the record says so."""
    from grader.sandbox import limits
    from grader.sandbox.policy import sandbox_config
    from grader.sandbox.pool import ChildPool
    from grader.sandbox.remote import Submission
    from grader.sandbox.zygote import Zygote

    (tmp_path / "demo.py").write_text(PROBES)
    config = {**sandbox_config(tmp_path, 2**30, 2**20), "topic": "demo", "forbidden": []}
    no_cpu_cgroup = Zygote(prelude="import grader.sandbox.cgroup as cgroup; cgroup.find_cpu = lambda: None")
    pool = ChildPool(no_cpu_cgroup)
    try:
        check = Submission(pool, config)
        nice, cpu = check.share()
        assert nice >= limits.NICE and cpu == (limits.CPU_SECONDS, limits.CPU_SECONDS + 5)
        isolation = check.isolation
        assert isolation["cpu_cgroup"] is None and isolation["autogroup"] is False and isolation["nice"] == nice
        check.close()
    finally:
        pool.close()
        no_cpu_cgroup.close()
