"""Hostile submissions against the sandbox's walls, each with its bait set up here: a listening UNIX socket, a
secret in the grader's environment, marker files and processes on the host. Whatever a submission finds it
raises as its message, which a public check shows: the tests read the results for the bait."""
import os
import socket
import subprocess
import sys
import threading
import uuid

import pytest

from grader.engine.runner import zygote
from grader.results import problems
from grader.sandbox.policy import REPO, sandbox_config
from grader.sandbox.failures import ChildFailure, SubmissionRaised
from grader.sandbox.pool import ChildPool
from grader.sandbox.remote import Submission
from grader.sandbox.zygote import Zygote

SAMPLING = (REPO / "solutions" / "sampling.py").read_text()
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")


def walls(sub) -> dict:
    sub.ping()
    return sub.isolation


PROBES = '''
import os, socket

def ping():
    return True

def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b"escaped")
    return "connected"

def families():
    made = []
    for family in ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET", "AF_VSOCK"):
        try:
            socket.socket(getattr(socket, family), socket.SOCK_DGRAM if family != "AF_UNIX" else socket.SOCK_STREAM)
            made.append(family)
        except (OSError, AttributeError):
            pass
    try:
        socket.socketpair()
        made.append("socketpair")
    except OSError:
        pass
    return made

def exists(path):
    return os.path.exists(path)

def read(path):
    with open(path, "rb") as f:
        return f.read(4096).decode("utf-8", "replace")

def pids():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())

def everything_proc_says():
    text = []
    for pid in os.listdir("/proc"):
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    text.append(f.read().decode("utf-8", "replace"))
            except OSError:
                pass
    return "\\n".join(text)

def fill_tmp(mib):
    written = 0
    for i in range(mib):
        try:
            with open(f"/tmp/fill{i}", "wb") as f:
                f.write(b"x" * (2**20 - 1))  # under the 1 MiB file-size limit
            written += 1
        except OSError:
            break
    return written

def whoami():
    return os.getuid()
'''


@linux_only
def test_a_listening_unix_socket_on_the_host_cannot_be_reached(tmp_path, sandboxed):
    path = str(tmp_path / "bait.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    listener.settimeout(3)
    got = []

    def accept():
        try:
            conn, _ = listener.accept()
            got.append(conn.recv(100))
        except OSError:
            pass
    thread = threading.Thread(target=accept)
    thread.start()
    sub = sandboxed(PROBES)
    with pytest.raises(SubmissionRaised):
        sub.connect(path)
    assert sub.families() == []
    thread.join()
    listener.close()
    assert got == []
    sub.close()


@linux_only
def test_the_host_filesystem_and_processes_are_out_of_sight(tmp_path, sandboxed):
    marker = tmp_path.parent / f"infergrade-bait-{uuid.uuid4().hex}"
    marker.write_text("host secret")
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        sub = sandboxed(PROBES)
        if not walls(sub).get("private_root"):
            pytest.skip("the kernel refused a private root here")
        for path in (str(marker), "/etc/shadow", "/run", "/dev/shm", "/home", str(REPO / ".git"),
                     str(REPO / "reference"), f"/proc/{sleeper.pid}/cmdline"):
            assert not sub.exists(path), path
        assert len(sub.pids()) <= 3  # the namespace's PID 1, the submission's process, nothing of the host
        if os.getuid() == 0:
            assert walls(sub)["host_uid"] != 0 and sub.whoami() != 0
        sub.close()
    finally:
        sleeper.kill()
        sleeper.wait()


@linux_only
def test_writes_go_to_a_private_size_limited_tmp(sandboxed):
    sub = sandboxed(PROBES)
    report = walls(sub)
    if not report.get("private_root"):
        pytest.skip("the kernel refused a private root here")
    written = sub.fill_tmp(report["tmp_bytes"] // 2**20 + 16)
    assert 0 < written < report["tmp_bytes"] // 2**20 + 1  # it ran out of room, not of files
    sub.close()
    other = sandboxed(PROBES)
    assert not other.exists("/tmp/fill0")  # each child has its own
    other.close()


LEAKER = SAMPLING + '''

def greedy(logits):
    import sys
    found = []
    for pid in os.listdir("/proc"):
        for name in ("cmdline", "environ"):
            try:
                found.append(open(f"/proc/{pid}/{name}", "rb").read().decode("utf-8", "replace"))
            except OSError:
                pass
    found.append(" ".join(sys.argv))
    found.append(repr(dict(os.environ)))
    raise ValueError("FOUND " + " | ".join(found)[:1800])
'''.replace("import sys", "import os, sys")


@linux_only
def test_the_graders_environment_and_arguments_never_reach_the_submission(tmp_path, sampling_command_messages):
    out = tmp_path / f"secret-out-{uuid.uuid4().hex}.json"
    env = {**os.environ, "INFERGRADE_BAIT_SECRET": "hunter2-bait"}
    found = sampling_command_messages(LEAKER, "97531", out, env, "FOUND")
    for secret in ("hunter2-bait", "97531", out.name, "--seed"):
        assert not any(secret in m for m in found), secret


@linux_only
def test_a_refused_private_root_still_grades_and_says_so(open_folder, sandboxed, private_root_refused):
    sub = sandboxed(PROBES, folder=open_folder, zygote_=private_root_refused)
    report = walls(sub)
    assert report["private_root"] is False and "private-root" not in _level(report)
    assert os.getuid() != 0 or (report["host_uid"] != 0 and sub.whoami() != 0)  # never root, walls or not
    assert sub.read(str(open_folder / "demo.py")).startswith("\nimport os")
    assert sub.families() == []  # the other walls still hold
    sub.close()


@linux_only
def test_a_folder_of_many_tiny_files_cannot_knock_down_the_private_root(tmp_path, sandboxed):
    folder = tmp_path / "sub"
    (folder / "data").mkdir(parents=True)
    for i in range(9000):  # 9 KB of data, 35 MiB of tmpfs pages
        (folder / "data" / f"f{i}.txt").write_text("x")
    sub = sandboxed(PROBES, folder=folder)
    report = walls(sub)
    assert report["private_root"] is True and (os.getuid() != 0 or sub.whoami() != 0)
    sub.close()


FORKING = PROBES + '''

def fork_many(n):
    import signal, time
    children = []
    try:
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError:
        pass
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return len(children)

def shared_memory():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.shmget(0, 2**20, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT

def memfd():
    return os.memfd_create("x")
'''


@linux_only
def test_processes_shared_memory_and_memfds_are_capped(sandboxed):
    sub = sandboxed(FORKING, timeout=120)  # 128 forks of a torch process took over 20 s at load 8
    report = walls(sub)
    if report.get("watchdog"):  # PID 1 counts every task of the sandbox and kills them all past its cap
        with pytest.raises(ChildFailure, match="processes and threads"):
            sub.fork_many(400)
        sub.restart()
    elif os.getuid() == 0 and report["host_uid"] != 0:
        assert sub.fork_many(400) < report["processes"]
    assert sub.shared_memory() == -1 or not report["ipc_namespace"]
    with pytest.raises(SubmissionRaised):
        sub.memfd()
    sub.close()


def _level(report: dict) -> str:
    from grader.results import isolation_level
    return isolation_level(report)["level"]


def test_the_isolation_reached_is_recorded_layer_by_layer():
    from grader.grading import grade
    doc = grade(REPO / "solutions", ["kv_cache"], hidden=False, seed=0, with_progress=False)
    isolation = doc["isolation"]
    assert problems(doc) == [] and isolation["level"].endswith("rlimits")
    for layer in ("user_namespace", "mount_namespace", "pid_namespace", "network_namespace", "private_root",
                  "host_uid", "seccomp", "landlock_abi"):
        assert layer in isolation, layer


def test_the_interpreter_and_its_packages_stay_readable_wherever_they_live(sandboxed):
    """A venv below the host's /tmp (as CI makes them) is bound on top of the private /tmp, not hidden by it."""
    from importlib import metadata

    sub = sandboxed(PROBES + "\n\ndef version(name):\n"
                             "    from importlib import metadata\n"
                             "    return metadata.version(name)\n")
    assert sub.version("numpy") == metadata.version("numpy") and sub.version("torch") == metadata.version("torch")
    sub.close()


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077], ids=oct)
def test_a_bound_folder_others_may_not_enter_is_still_readable_inside(tmp_path, umask):
    """As a venv made by `mktemp -d` (mode 0700): the submission runs as nobody, so its entries are bound open,
    whatever the umask of the grader that started the zygote (under 027 the recreated folder was 0750: CI's minimum
    versions' venv, whose torch could not import its lazy modules in a check)."""
    closed = tmp_path / "closed"
    (closed / "lib").mkdir(parents=True)
    (closed / "lib" / "data.txt").write_text("packaged")
    closed.chmod(0o700)
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "demo.py").write_text(PROBES)
    config = sandbox_config(folder, 2**30, 2**20)
    config = {**config, "topic": "demo", "forbidden": [], "bound_read_only": [*config["bound_read_only"], str(closed)],
              "read_roots": [*config["read_roots"], str(closed)]}
    before = os.umask(umask)
    try:
        started = Zygote()
    finally:
        os.umask(before)
    sub = Submission(ChildPool(started), config)
    try:
        assert sub.read(str(closed / "lib" / "data.txt")) == "packaged"
    finally:
        sub.close()
        started.close()


def test_no_setuid_program_can_raise_the_submissions_rights(sandboxed):
    sub = sandboxed(PROBES + "\n\ndef status():\n    return open('/proc/self/status').read()\n")
    report = walls(sub)
    assert "NoNewPrivs:\t1" in sub.status()
    if report.get("private_root"):
        mounts_seen = sub.read("/proc/self/mounts")  # the binds carry nosuid
        bound = [line for line in mounts_seen.splitlines() if " /usr " in line]
        assert bound and all("nosuid" in line for line in bound)
    sub.close()
