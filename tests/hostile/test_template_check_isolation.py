"""One sandbox per topic (template.py), red team: nothing one check does reaches a later check of the same topic.

Each test runs a first check that leaves bait (files in /tmp, a POSIX queue, SysV memory, a detached process,
memory, module globals, printed output, bytes on its socket, a signal to PID 1) and then a second check of the
same topic, in the same sandbox, that looks for it. Landlock keeps a submission from opening a POSIX queue at all,
so the queue is laid where Landlock is missing (a zygote whose kernel refuses it), as on an older kernel. The last
test runs the same probes in a sandbox whose PID 1 is deliberately broken (it clears nothing between checks) and
sees the bait: the probes can see what they look for.
"""
import sys

import pytest

from grader.engine.runner import zygote
from grader.sandbox.policy import sandbox_config
from grader.sandbox.failures import ChildFailure
from grader.sandbox.pool import ChildPool
from grader.sandbox.remote import Submission
from grader.sandbox.zygote import Zygote

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

BAIT_BYTES = 256 * 2**20

PROBES = '''
import ctypes, os, signal, socket, stat, struct, time

libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.restype = ctypes.c_int
imports = [1]  # this module's own state: one entry per import of it in this process
kept = []

def ping():
    return True

def processes():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())

def leave(tag):
    """Bait of every kind this check can leave; what of it was made."""
    made = []
    with open("/tmp/left-" + tag, "w") as f:
        f.write(tag)
    made.append("file")
    if rt.mq_open(("/" + tag).encode(), os.O_CREAT | os.O_RDWR, 0o666, None) >= 0:
        made.append("mqueue")
    if libc.shmget(0x1F2E3D, 4096, 0o1666) >= 0:
        made.append("shm")
    if os.fork() == 0:  # a detached sleeper, out of the check's process group and session
        os.setsid()
        if os.fork() == 0:
            libc.prctl(15, ("bait-" + tag).encode(), 0, 0, 0)  # PR_SET_NAME: what find() looks for
            time.sleep(120)
        os._exit(0)
    os.wait()
    imports.append(tag)
    kept.append(bytearray(%(bait)d))  # memory held, each page written
    for i in range(0, len(kept[-1]), 4096):
        kept[-1][i] = 1
    print("printed-by-" + tag, flush=True)
    return made

def find(tag):
    """Bait of every kind a check of this topic could have left; what of it is here."""
    found = []
    if os.path.exists("/tmp/left-" + tag):
        found.append("file")
    if rt.mq_open(("/" + tag).encode(), os.O_RDWR, 0, None) >= 0:
        found.append("mqueue")
    if libc.shmget(0x1F2E3D, 0, 0) >= 0:
        found.append("shm")
    if any(_name(pid) == "bait-" + tag for pid in processes()):  # /proc shows a check its own uid's processes
        found.append("process")
    if len(imports) > 1:
        found.append("globals")
    return found

def _name(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None

def own_socket():
    """The inode of this check's socket to the grader."""
    fd = next(f for f in range(3, 256) if _is_socket(f))
    return os.fstat(fd).st_ino

def desync():
    """Write a frame header that promises bytes never sent, then end: a reader of this socket would be lost."""
    fd = next(f for f in range(3, 256) if _is_socket(f))
    os.write(fd, struct.pack("<Q", 1000) + b"partial")
    os._exit(0)

def _is_socket(fd):
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False

def reach_init():
    """Try to change or stop PID 1 (the template); what worked."""
    reached = []
    try:
        with open("/proc/1/mem", "wb") as f:
            f.write(b"x")
        reached.append("memory")
    except OSError:
        pass
    for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM):
        try:
            os.kill(1, sig)
            reached.append(signal.Signals(sig).name + " sent")
        except OSError:
            pass
    return reached
''' % {"bait": BAIT_BYTES}


@pytest.fixture
def checks(tmp_path):
    """`checks(zygote_=None)`: a function that starts the next check of topic `demo` (a Submission) from one pool,
    as the checks of one topic are in a grading run."""
    pools = []
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "demo.py").write_text(PROBES)
    config = {**sandbox_config(folder, 2 * BAIT_BYTES + 2**30, 2**20), "topic": "demo", "forbidden": []}

    def start(zygote_=None):
        def next_check() -> Submission:
            sub = Submission(pools[-1], config)
            sub.set_timeout(30)
            return sub
        pools.append(ChildPool(zygote_ or zygote()))
        return next_check
    yield start
    for pool in pools:
        pool.close()


def _same_sandbox(first: Submission, second: Submission) -> bool:
    """Whether both checks ran in one topic sandbox (the template), not in chains of their own."""
    return first._child.sandbox is not None and first._child.sandbox is second._child.sandbox


def _first_then_second(next_check, tag):
    first = next_check()
    made = first.leave(tag)
    first_rss = first.rss_before_import
    first_output = first.output_tail()
    first.close()
    second = next_check()
    found = second.find(tag)
    return first, second, made, found, first_rss, first_output


NO_LANDLOCK = "from grader.sandbox import landlock\nlandlock.restrict_filesystem = lambda *args: None\n"
BROKEN = ("from grader.sandbox import template\n"
          "template._clear_namespace = lambda *args: None\n"
          "template._private_ipc = lambda: None\n"
          "template._kill_namespace = lambda inner=None: None\n"
          "template._end_namespace = lambda: None\n")


def test_a_check_finds_nothing_an_earlier_check_of_its_topic_left(checks):
    first, second, made, found, first_rss, first_output = _first_then_second(checks(), "bait-a")
    assert _same_sandbox(first, second) and second.isolation["template"]
    assert "file" in made, "the first check could not lay its bait: the test would prove nothing"
    assert "printed-by-bait-a" in first_output
    assert found == []
    assert "printed-by-bait-a" not in second.output_tail()
    # the bait's memory is not the second check's: it starts from the template's state, as the first did
    assert second.rss_before_import < first_rss + BAIT_BYTES // 2
    second.close()


def test_a_queue_left_where_landlock_is_missing_is_gone_for_the_next_check(checks):
    """Without Landlock a check can make a POSIX message queue; the next check's IPC namespace is a new one."""
    without = Zygote(prelude=NO_LANDLOCK)
    try:
        first, second, made, found, _, _ = _first_then_second(checks(without), "bait-q")
        assert _same_sandbox(first, second) and not second.isolation["landlock_abi"]
        assert "mqueue" in made, "the first check could not lay its bait: the test would prove nothing"
        assert found == []
        second.close()
    finally:
        without.close()


def test_a_check_cannot_reach_the_template(checks):
    next_check = checks()
    first = next_check()
    assert first.reach_init() == []
    first.close()
    second = next_check()
    assert second.ping() and _same_sandbox(first, second)
    second.close()


def test_bytes_left_on_a_socket_do_not_reach_the_next_check(checks):
    next_check = checks()
    first = next_check()
    first_socket = first.own_socket()
    with pytest.raises(ChildFailure):
        first.desync()
    first.close()
    second = next_check()
    assert second.ping() is True
    assert second.own_socket() != first_socket
    assert _same_sandbox(first, second)
    second.close()


def test_the_probes_see_the_bait_where_pid_1_clears_nothing(checks):
    """A deliberately broken template (no kill, no new /tmp, no new IPC namespace between checks), run in a zygote
    of its own: the same probes find the bait, so their silence above means the bait is gone."""
    broken = Zygote(prelude=NO_LANDLOCK + BROKEN)
    try:
        first, second, made, found, _, _ = _first_then_second(checks(broken), "bait-b")
        assert _same_sandbox(first, second)
        assert {"file", "mqueue", "process"} <= set(found)
        second.close()
    finally:
        broken.close()
