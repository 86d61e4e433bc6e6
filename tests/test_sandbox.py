"""Containment: whatever a submission does costs only the call it happened in, and cannot reach the grader."""
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from grader.engine.runner import zygote
from grader.sandbox.policy import REPO, sandbox_config
from grader.sandbox.failures import ChildFailure, NotImplementedYet, SubmissionRaised
from grader.sandbox.pool import ChildPool
from grader.sandbox.remote import Submission

MODULE = textwrap.dedent('''
    import os, sys, time, socket, subprocess
    import torch

    def add(a, b):
        return a + b

    def segfault():
        import ctypes
        ctypes.string_at(0)

    def exit_3():
        sys.exit(3)

    def hard_exit():
        os._exit(4)

    def hang():
        while True:
            pass

    def sleep_forever():
        time.sleep(1000)

    def nap(seconds):
        time.sleep(seconds)

    def flood():
        while True:
            print("x" * 10000)

    def read(path):
        with open(path) as f:
            return f.read(20)

    def write(path):
        with open(path, "w") as f:
            f.write("forged")

    def connect():
        socket.create_connection(("127.0.0.1", 22), timeout=2)

    def environment():
        return dict(os.environ)

    def numpy_array():
        import numpy
        return numpy.zeros(3)

    def allocate(n):
        return torch.empty(n, dtype=torch.uint8).fill_(1).sum().item()

    def todo():
        raise NotImplementedError("TODO: write me")

    def import_reference():
        import reference.sampling

    def spawn_sleeper(tag):
        subprocess.Popen(["sleep", tag])
        return True

    def escape(tag):
        import ctypes
        ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # no death signal
        os.setsid()                              # out of the process group
        subprocess.Popen(["sleep", tag], start_new_session=True)
        time.sleep(60)

    def plant_output(kind, target):
        out = os.path.join(os.environ["TMPDIR"], "output.txt")
        os.unlink(out)
        os.symlink(target, out) if kind == "symlink" else os.mkfifo(out)
        os._exit(1)

    def trickle():
        import stat, struct
        fd = next(f for f in range(3, 64) if _is_socket(f))
        os.write(fd, struct.pack("<Q", 1000))
        for _ in range(20):
            os.write(fd, b"x")
            time.sleep(0.5)

    def _is_socket(fd):
        import stat
        try:
            return stat.S_ISSOCK(os.fstat(fd).st_mode)
        except OSError:
            return False

    def forge_reply():
        import pickle, struct
        from grader.sandbox import child
        class Evil:
            def __reduce__(self):
                return (os.system, ("touch /tmp/infergrade-pwned",))
        import gc
        sock = [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.fileno() >= 0
                and _is_socket(o.fileno())][0]  # the open channel, not a closed one inherited from the forker
        child.send(sock, pickle.dumps(("ok", Evil())))
        time.sleep(5)

    class Counter:
        def __init__(self, start):
            self.n = start
        def bump(self):
            self.n += 1
            return self.n
''')


@pytest.fixture
def sub(tmp_path):
    (tmp_path / "demo.py").write_text(MODULE)
    config = {**sandbox_config(tmp_path, 2**30, 2**20), "topic": "demo", "forbidden": []}
    pool = ChildPool(zygote())
    s = Submission(pool, config)
    s.set_timeout(3)
    yield s
    s.close()
    pool.close()


def test_calls_return_decoded_values(sub):
    assert torch.equal(sub.add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))
    assert sub.add("a", "b") == "ab"


def test_instances_live_in_the_child_behind_handles(sub):
    counter = sub.Counter(5)
    assert counter.bump() == 6 and counter.bump() == 7 and counter.get("n") == 7


@pytest.mark.parametrize("fn,status,words", [
    ("segfault", "error", "segmentation fault"),
    ("hard_exit", "error", "exited with code 4"),
    ("hang", "timeout", "did not finish within 3 s"),
    ("sleep_forever", "timeout", "did not finish"),
])
def test_crashes_and_hangs_cost_only_the_call(sub, fn, status, words):
    with pytest.raises(ChildFailure) as failure:
        getattr(sub, fn)()
    assert failure.value.status == status and words in str(failure.value)
    with pytest.raises(ChildFailure):  # the same check cannot carry on with a dead child
        sub.add(1, 2)


def _first_child(pid: int) -> int:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return int(f.read().split()[0])


def test_a_child_given_a_recycled_pid_reports_its_own_ending(tmp_path):
    """pid_max may be 32768: in a long session a later child takes the pid of an earlier child's leftover process,
    which the zygote adopted and reaped; that leftover's status must not be reported for the new child. (A chain
    per check: a topic's sandbox reaps every process of its namespace before the next check.)"""
    (tmp_path / "demo.py").write_text(MODULE)
    config = {**sandbox_config(tmp_path, 2**30, 2**20), "topic": "demo", "forbidden": []}
    pool = ChildPool(zygote(), templates=False)
    try:
        crashed = Submission(pool, config)
        assert crashed.add(1, 2) == 3
        leftover = _first_child(crashed._child.pid)  # killed with the crashed child's group: SIGKILL
        with pytest.raises(ChildFailure, match="exited with code 4"):
            crashed.hard_exit()
        crashed.close()
        for _ in range(50):
            try:
                Path("/proc/sys/kernel/ns_last_pid").write_text(str(leftover - 1))
            except OSError:
                pytest.skip("this host does not let the test choose the next pid (/proc/sys/kernel/ns_last_pid)")
            before = Submission(pool, config)  # its child is forked after the spare, which takes the pid
            assert before.add(1, 2) == 3
            recycled = Submission(pool, config)
            assert recycled.add(1, 2) == 3
            before.close()
            if recycled._child.pid == leftover:
                break
            recycled.close()
            time.sleep(0.05)  # the leftover may not have been reaped yet
        else:
            pytest.skip("another process kept taking the pid the test chose")
        with pytest.raises(ChildFailure) as failure:
            recycled.hard_exit()
        assert "exited with code 4" in str(failure.value)
    finally:
        pool.close()


def test_the_next_check_gets_a_fresh_child(sub, tmp_path):
    with pytest.raises(ChildFailure):
        sub.hard_exit()
    config = {**sandbox_config(tmp_path, 2**30, 2**20), "topic": "demo", "forbidden": []}
    pool = ChildPool(zygote())
    fresh = Submission(pool, config)
    assert fresh.add(2, 3) == 5
    fresh.close()
    pool.close()


def test_sys_exit_is_reported_as_a_raise(sub):
    with pytest.raises(SubmissionRaised, match=r"sys.exit\(3\)"):
        sub.exit_3()
    assert sub.add(1, 1) == 2


def test_runaway_output_is_capped(sub):
    with pytest.raises(SubmissionRaised, match="File too large"):
        sub.flood()
    assert "1 MiB limit" in sub.output_tail()


def test_not_implemented_is_its_own_outcome(sub):
    with pytest.raises(NotImplementedYet) as raised:
        sub.todo()
    assert raised.value.function == "todo"


def test_unknown_return_types_arrive_opaque(sub):
    assert sub.numpy_array().type_name == "numpy.ndarray"


def test_a_forged_pickle_reply_cannot_run_code(sub):
    marker = Path("/tmp/infergrade-pwned")
    marker.unlink(missing_ok=True)
    with pytest.raises(ChildFailure, match="malformed"):
        sub.forge_reply()
    assert not marker.exists()


def test_memory_is_capped(sub):
    with pytest.raises(SubmissionRaised) as raised:
        sub.allocate(4 * 2**30)
    assert "memory" in raised.value.message.lower()
    assert sub.allocate(2**20) == 2**20


def test_memory_limit_per_call_and_peak_measurement(sub):
    sub.measure_call_peaks()
    sub.allocate(64 * 2**20)
    assert sub.peak_rss_bytes is not None and sub.peak_rss_bytes >= 64 * 2**20
    sub.set_memory_limit(16 * 2**20)
    with pytest.raises(SubmissionRaised):
        sub.allocate(256 * 2**20)


def test_reference_and_solutions_cannot_be_imported(sub):
    with pytest.raises(SubmissionRaised, match="may not import 'reference"):
        sub.import_reference()


def test_environment_is_scrubbed(sub):
    os.environ["INFERGRADE_SECRET"] = "token"
    try:
        env = sub.environment()
    finally:
        del os.environ["INFERGRADE_SECRET"]
    assert "INFERGRADE_SECRET" not in env and set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "TRITON_INTERPRET", "TRITON_CACHE_DIR"}


def isolation(sub):
    sub.add(0, 0)
    return sub.isolation


def test_grader_files_are_unreadable_and_unwritable(sub, tmp_path):
    if not (isolation(sub).get("landlock_abi") or isolation(sub).get("private_root")):
        pytest.skip("neither Landlock nor a private root is available on this kernel")
    for hidden in ("reference/__init__.py", "solutions/__init__.py", "grader/cli.py", "README.md", ".git/HEAD"):
        with pytest.raises(SubmissionRaised, match="PermissionError|FileNotFoundError"):  # hidden, or not there
            sub.read(str(REPO / hidden))
    with pytest.raises(SubmissionRaised, match=r"PermissionError|FileNotFoundError|Errno 30\]"):  # 30: EROFS
        sub.write(str(REPO / "results.json"))
    assert sub.read(str(tmp_path / "demo.py")).startswith("\nimport os")


def test_network_is_unreachable_in_a_network_namespace(sub):
    if not isolation(sub).get("network_namespace"):
        pytest.skip("network namespaces are not available here")
    with pytest.raises(SubmissionRaised, match="OSError|PermissionError|ConnectionRefused|unreachable"):
        sub.connect()


def test_processes_the_submission_starts_are_killed_at_the_end(sub):
    tag = f"{time.time() % 1000 + 1000:.3f}"
    assert sub.spawn_sleeper(tag)
    sub.close()
    time.sleep(0.2)
    alive = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p) == f"sleep\0{tag}\0"]
    assert not alive


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f.read()
    except OSError:
        return ""



def test_a_check_has_a_total_budget(sub):
    sub._budget_left = 1.0
    sub.nap(0.6)
    with pytest.raises(ChildFailure) as failure:
        sub.nap(0.6)  # only 0.4 s of the budget is left
    assert failure.value.status == "timeout"


def test_a_dead_zygote_is_a_clear_grader_error_and_is_replaced(tmp_path):
    import signal

    from grader.engine import runner
    from grader.sandbox.zygote import ZygoteGone

    (tmp_path / "demo.py").write_text(MODULE)
    doomed = runner.zygote()
    os.kill(doomed.pid, signal.SIGKILL)
    os.waitpid(doomed.pid, 0)
    config = {**sandbox_config(tmp_path, 2**30, 2**20), "topic": "demo", "forbidden": []}
    with pytest.raises(ZygoteGone, match="zygote process is gone"):
        Submission(ChildPool(doomed), config).add(1, 2)
    fresh = runner.zygote()
    assert fresh is not doomed and fresh.alive()
    pool = ChildPool(fresh)
    assert Submission(pool, config).add(1, 2) == 3
    pool.close()


def test_without_namespaces_the_rlimits_and_timeouts_still_contain(open_folder):
    from grader.sandbox.zygote import Zygote

    (open_folder / "demo.py").write_text(MODULE)
    plain = Zygote(namespaces=False)
    config = {**sandbox_config(open_folder, 2**30, 2**20), "topic": "demo", "forbidden": []}
    pool = ChildPool(plain)
    try:
        sub = Submission(pool, config)
        assert sub.add(2, 2) == 4 and sub.isolation["pid_namespace"] is False
        assert os.getuid() != 0 or sub.isolation["host_uid"] != 0  # never root towards the host
        sub.set_timeout(1)
        with pytest.raises(ChildFailure, match="did not finish"):
            sub.hang()
        crashed = Submission(pool, config)
        with pytest.raises(ChildFailure, match="exited with code 4"):
            crashed.hard_exit()
    finally:
        pool.close()
        plain.close()


def test_a_module_that_hangs_on_import_costs_its_time_once(tmp_path, monkeypatch):
    import grader.sandbox.remote as remote

    monkeypatch.setattr(remote, "IMPORT_TIMEOUT", 1.0)
    (tmp_path / "demo.py").write_text("while True:\n    pass\n")
    config = {**sandbox_config(tmp_path, 2**30, 2**20), "topic": "demo", "forbidden": []}
    pool = ChildPool(zygote())
    started = time.monotonic()
    for _ in range(5):
        with pytest.raises(ChildFailure, match="importing demo.py did not finish within 1 s"):
            Submission(pool, config).add(1, 2)
    assert time.monotonic() - started < 3
    pool.close()


def test_processes_that_leave_the_group_and_drop_their_death_signal_still_end(sub):
    if not isolation(sub).get("pid_namespace"):
        pytest.skip("PID namespaces are not available here")
    tag = f"{time.time() % 1000 + 2000:.3f}"
    sub.set_timeout(1)
    with pytest.raises(ChildFailure, match="did not finish"):
        sub.escape(tag)
    time.sleep(0.3)
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p) == f"sleep\0{tag}\0"]


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_planted_output_file_neither_leaks_nor_hangs(sub, kind):
    target = str(REPO / "grader" / "CHECKS.md")
    started = time.monotonic()
    with pytest.raises((ChildFailure, SubmissionRaised)) as failure:  # behind a private root there is no file
        sub.plant_output(kind, target)
    assert "Writing checks" not in str(failure.value) and time.monotonic() - started < 5


def test_a_reply_trickled_byte_by_byte_still_times_out(sub):
    sub.set_timeout(2)
    started = time.monotonic()
    with pytest.raises(ChildFailure, match="did not finish within 2 s"):
        sub.trickle()
    assert time.monotonic() - started < 4


def test_a_forged_exception_report_is_still_a_submission_error(tmp_path):
    source = MODULE + textwrap.dedent('''
        def forge_raise():
            import gc
            from grader.sandbox import child, codec
            sock = [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.fileno() >= 0
                    and _is_socket(o.fileno())][0]  # the open channel, not a closed one inherited from the forker
            child.send(sock, codec.encode(("raised", {"type": 3, "types": "x"})))
            time.sleep(5)
    ''')
    (tmp_path / "demo.py").write_text(source)
    config = {**sandbox_config(tmp_path, 2**30, 2**20), "topic": "demo", "forbidden": []}
    pool = ChildPool(zygote())
    with pytest.raises(SubmissionRaised) as raised:
        Submission(pool, config).forge_raise()
    assert raised.value.type_name == "3" and raised.value.type_names == []
    pool.close()


def test_folders_left_by_a_killed_grader_are_removed_at_the_next_start(tmp_path, monkeypatch):
    import tempfile

    from grader.sandbox import folders

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = tmp_path / f"{folders.CHILD_FOLDER}4200000-x1y2"  # above the largest pid Linux hands out
    running = tmp_path / f"{folders.CHILD_FOLDER}{os.getpid()}-x1y2"
    for folder in (gone, running):
        (folder / "root").mkdir(parents=True)
        (folder / "output.txt").write_text("left behind")
    assert folders.remove_stale_folders() == 1
    assert not gone.exists() and running.exists()


def test_the_grader_caps_its_own_data():
    import resource
    import subprocess

    from grader.sandbox import limits

    code = ("import resource; from grader.sandbox import limits; limits.cap_grader_memory(); "
            "print(resource.getrlimit(resource.RLIMIT_DATA)[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    assert int(out) == (limits.GRADER_DATA_BYTES if hard == resource.RLIM_INFINITY
                        else min(limits.GRADER_DATA_BYTES, hard))
