"""Sandbox v3, red team: the watchdog's memory sum cannot be evaded, and the submission's dumpable flag opens nothing.

PID 1 kills the sandbox once the proportional sum (Pss from /proc/PID/smaps_rollup) passes the cap, and the
submission is made dumpable (walls.let_init_read) only so that PID 1 may read that file. Found: a submission could
undo it, `prctl(PR_SET_DUMPABLE, 0)`, in each of its workers: PID 1 could no longer read their smaps_rollup, left
them out of the sum, and two workers held 1.5 GiB in a sandbox capped at 1 GiB (any number of workers, each up to
its own address-space cap, could hold the host's memory). Fixed in grader/sandbox/watchdog.py: a process whose
summary cannot be read counts with its whole resident size. Regression guards: System V shared memory (which no
process's resident size shows) is refused, and the dumpable flag gives no access to PID 1.
"""
import sys
import time

import pytest

from grader.sandbox.failures import ChildFailure

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30

PROBES = '''
import ctypes
import os
import time

libc = ctypes.CDLL(None, use_errno=True)


def hold_unreadable(workers, gib):
    for _ in range(workers):
        if os.fork() == 0:
            libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: PID 1 can no longer read /proc/PID/smaps_rollup
            block = bytearray(int(gib * 2**30))
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(60)
            os._exit(0)
    time.sleep(20)
    return "survived"


def shared_memory(mib):
    libc.shmget.restype = ctypes.c_int
    libc.shmat.restype = ctypes.c_void_p
    held, chunk = 0, 64 * 2**20
    while held < mib * 2**20:
        sid = libc.shmget(0, ctypes.c_size_t(chunk), 0o1600)
        if sid < 0:
            return ["refused", held]
        addr = libc.shmat(sid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return ["refused", held]
        ctypes.memset(addr, 1, chunk)
        libc.shmdt(ctypes.c_void_p(addr))
        held += chunk
    return ["held", held]


def read_init():
    opened = []
    for path in ("/proc/1/mem", "/proc/1/environ", "/proc/1/maps", "/proc/1/smaps_rollup", "/proc/1/fd",
                 "/proc/1/root/.", "/proc/1/cwd/.", "/proc/1/map_files"):
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                with open(path, "rb") as f:
                    f.read(1)
            opened.append(path)
        except OSError:
            pass
    for fd in range(3, 16):
        try:
            os.close(os.open(f"/proc/1/fd/{fd}", os.O_RDWR))
            opened.append(f"/proc/1/fd/{fd}")
        except OSError:
            pass
    return opened


def ping():
    return True
'''


@linux_only
def test_workers_that_make_themselves_unreadable_still_count(capped):
    sub = capped(PROBES, 1 * GIB, timeout=40)
    started = time.monotonic()
    with pytest.raises(ChildFailure, match="together held more than"):
        sub.hold_unreadable(2, 0.75)          # 1.5 GiB in two non-dumpable processes, each under its headroom
    assert time.monotonic() - started < 20    # killed when the sum passed the cap, not at the end of the call
    sub.close()
    after = capped(PROBES, 1 * GIB, timeout=40)
    assert after.ping() is True               # the next child starts as usual
    after.close()


@linux_only
def test_system_v_shared_memory_is_refused(walled):
    sub = walled(PROBES, "ipc_namespace", 1 * GIB, timeout=40)
    kind, held = sub.shared_memory(1536)      # memory no process's resident size would show
    assert kind == "refused" and held == 0
    sub.close()


@linux_only
def test_the_dumpable_submission_reaches_nothing_of_pid_1(walled):
    sub = walled(PROBES, "pid_namespace", 1 * GIB, timeout=40)
    assert sub.read_init() == []
    sub.close()
