"""Sandbox v6, red team: kcmp said two processes whose first threads exited alone share one address space.

watchdog.same_memory called kcmp(a, b, KCMP_VM) on the process ids, which name the first threads. A first thread
that exited alone (the v5 'ghost': SYS_exit, its other threads run on) has no mm, and kcmp compares two NULL
pointers as equal: two distinct ghosts whose resident sizes were equal counted as one address space in sample()
and proportional(), the second one's memory not summed. Fixed: kcmp gets the live thread that watchdog.live
read each process through.
"""
import ctypes
import os
import sys
import threading
import time

import pytest

from grader.sandbox import watchdog

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux") or watchdog.KCMP is None,
                                reason="kcmp is Linux's (x86_64, aarch64)")


def _ghost() -> int:
    """A child whose first thread exits alone while a second thread sleeps on: its pid."""
    pid = os.fork()
    if pid == 0:
        threading.Thread(target=time.sleep, args=(5,)).start()
        ctypes.CDLL(None).syscall(60, 0)                # SYS_exit: this thread only
    return pid


@linux_only
def test_two_ghost_processes_are_not_one_address_space():
    pids = [_ghost(), _ghost()]
    try:
        deadline = time.monotonic() + 5
        while any(watchdog._stat(f"/proc/{p}/stat")[0] != b"Z" for p in pids) and time.monotonic() < deadline:
            time.sleep(0.01)
        found = [watchdog.live(str(p)) for p in pids]
        assert None not in found, "a ghost read as ended"
        assert not watchdog.same_memory(found[0][2], found[1][2]), "two ghosts counted as one address space"
        spaces = watchdog.Spaces()
        assert spaces.first(found[0][2], 1) and spaces.first(found[1][2], 1)  # as the sums use it
    finally:
        for p in pids:
            os.kill(p, 9)
            os.waitpid(p, 0)
