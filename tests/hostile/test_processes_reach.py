"""Sandbox v2, red team: what the submission's process can reach of other processes and descriptors.

Bait: the namespace's PID 1 (root in the child's user namespace, full capabilities there), the host file the
child's output goes to, and the channel. The submission reports what it could do; nothing may succeed.
"""
import sys

import pytest


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import ctypes, os, signal

libc = ctypes.CDLL(None, use_errno=True)

def ping():
    return True

def fds():
    return sorted(int(f) for f in os.listdir("/proc/self/fd"))

def own_environ():
    with open("/proc/self/environ", "rb") as f:
        return [e.decode("latin-1") for e in f.read().split(b"\\0") if e]

def opens(paths):
    done = []
    for p in paths:
        try:
            if os.path.isdir(p):
                os.listdir(p)
            else:
                with open(p, "rb") as f:
                    f.read(1)
            done.append(p)
        except OSError:
            pass
    return done

def reopen_output():
    done = []
    for mode in (os.O_RDONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC):
        try:
            os.close(os.open("/proc/self/fd/1", mode))
            done.append(mode)
        except OSError:
            pass
    return done

def pid1_cmdline():
    """PID 1's command line, as far as this process can read it ('' where its /proc shows no PID 1)."""
    try:
        with open("/proc/1/cmdline", "rb") as f:
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""

def syscalls():
    worked = []
    buf = ctypes.create_string_buffer(64)
    iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
    tries = {
        "kill_pid1": lambda: os.kill(1, 0) or 0,
        "process_vm_readv": lambda: libc.syscall(310, 1, iov, 1, iov, 1, 0),
        "ptrace_attach": lambda: libc.syscall(101, 16, 1, 0, 0),
        "pidfd_getfd": lambda: libc.syscall(438, os.pidfd_open(1), 3, 0),
        "open_by_handle_at": lambda: libc.syscall(304, -100, buf, 0),
        "unshare_user": lambda: libc.syscall(272, 0x10000000),
        "setns": lambda: libc.syscall(308, os.open("/proc/self/ns/net", os.O_RDONLY), 0),
        "open_tree": lambda: libc.syscall(428, -100, b"/usr", 1),
        "open_tree_attr": lambda: libc.syscall(467, -100, b"/usr", 1, None, 0),
        "setuid0": lambda: os.setuid(0) or 0,
    }
    for name, call in tries.items():
        try:
            if call() >= 0:
                worked.append(name)
        except OSError:
            pass
    return worked
'''


@pytest.fixture
def sub(sandboxed):
    s = sandboxed(PROBES)
    s.ping()
    if not s.isolation.get("private_root"):
        pytest.skip("no private root here")
    yield s
    s.close()


@linux_only
def test_no_descriptor_but_the_standard_three_and_the_channel(sub):
    assert len(sub.fds()) == 5  # 0, 1, 2, the channel, and the descriptor listdir itself opened


@linux_only
def test_the_namespaces_pid_1_is_out_of_reach(sub):
    assert sub.opens(["/proc/1/root", "/proc/1/cwd", "/proc/1/fd", "/proc/1/environ", "/proc/1/mem",
                      "/proc/1/ns/user", "/proc/1/ns/mnt", "/proc/1/map_files", "/proc/self/mem"]) == []
    assert "grader" not in sub.pid1_cmdline() and "pytest" not in sub.pid1_cmdline()


@linux_only
def test_the_exec_time_environment_is_wiped(sub):
    # The submission's own /proc/self/environ opens (PID 1 must read its memory summary, see walls.py), and it
    # shows the exec-time environment block: wiped before the fork, so no variable of the grader's is there.
    assert sub.own_environ() == []


@linux_only
def test_the_host_output_file_cannot_be_reopened(sub):
    assert sub.reopen_output() == []


@linux_only
def test_process_and_namespace_syscalls_are_refused(sub):
    assert sub.syscalls() == []
