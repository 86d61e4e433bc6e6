"""Sandbox v2, red team: nothing a check's child starts or creates outlives it or reaches the next child.

Bait: detached processes (setsid and a double fork, a name the host can look for), SysV shared memory and a
message queue with fixed keys, a file in /tmp.
"""
import subprocess
import sys
import time
import uuid

import pytest


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import ctypes, os, time

libc = ctypes.CDLL(None, use_errno=True)

def ping():
    return True

def detach(n, name):
    for _ in range(n):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                libc.prctl(15, name.encode(), 0, 0, 0)
                time.sleep(120)
            os._exit(0)
        os.wait()
    return n

def leave(key):
    made = []
    if libc.shmget(key, 4096, 0o1666) >= 0:
        made.append("shm")
    if libc.msgget(key, 0o1666) >= 0:
        made.append("msg")
    with open("/tmp/left-behind", "w") as f:
        f.write("x")
    made.append("file")
    return made

def find(key):
    found = []
    if libc.shmget(key, 0, 0) >= 0:
        found.append("shm")
    if libc.msgget(key, 0) >= 0:
        found.append("msg")
    if os.path.exists("/tmp/left-behind"):
        found.append("file")
    return found
'''


def _host_processes_named(name: str) -> int:
    out = subprocess.run(["ps", "-eo", "comm"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.strip() == name)


@linux_only
def test_detached_processes_end_with_the_child(sandboxed):
    name = "rt" + uuid.uuid4().hex[:10]
    sub = sandboxed(PROBES)
    sub.ping()
    if not sub.isolation.get("pid_namespace"):
        pytest.skip("no PID namespace here")
    assert sub.detach(20, name) == 20
    deadline = time.monotonic() + 5
    while _host_processes_named(name) < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _host_processes_named(name) == 20  # the bait is really running
    sub.close()
    deadline = time.monotonic() + 5
    while _host_processes_named(name) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _host_processes_named(name) == 0


@linux_only
def test_ipc_objects_and_files_do_not_reach_the_next_child(sandboxed):
    key = 0x5EED0000 + int(uuid.uuid4().hex[:4], 16)
    first = sandboxed(PROBES)
    first.ping()
    if not (first.isolation.get("ipc_namespace") and first.isolation.get("private_root")):
        pytest.skip("no IPC namespace or private root here")
    assert "file" in first.leave(key)  # System V objects are refused outright in the sandbox's IPC namespace
    second = sandboxed(PROBES)
    assert second.find(key) == []  # while the first is still alive
    first.close()
    assert second.find(key) == []
    second.close()
    assert subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout.count(hex(key)[2:]) == 0
