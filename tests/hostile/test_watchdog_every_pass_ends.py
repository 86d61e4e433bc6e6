"""Sandbox v6, red team: passes of the proportional sum that always see an ending, and threads PID 1 cannot read.

watchdog.over_cap repeats a pass during which a process ended (PASSES times at most) and no longer counts the
ended one at its sampled size. Unreaped zombies read as ended to watchdog.live, so with a few hundred of them
left behind every pass of every check ends 'ended'; memory held beside them must still kill on the pass that
sums it. Memory held by the live threads of a process whose leader exited alone, which also made itself
unreadable (PR_SET_DUMPABLE 0: PID 1 cannot open its smaps_rollup), must count at its resident size. Both are
stopped: a pass over the cap kills whether or not a process ended in it, and an unreadable process counts whole.
"""
import sys

import pytest

from grader.sandbox.failures import ChildFailure

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30

PROBES = r'''
import ctypes
import mmap
import os
import threading
import time

_libc = ctypes.CDLL(None, use_errno=True)


def zombies(n):
    """Leave `n` children unreaped: each reads as ended in every pass PID 1 makes."""
    for _ in range(n):
        if os.fork() == 0:
            os._exit(0)
    return n


def _fill(gib):
    block = mmap.mmap(-1, int(gib * 2**30), flags=mmap.MAP_PRIVATE)
    for i in range(0, len(block), 2**24):
        block[i:i + 2**24] = b"\1" * min(2**24, len(block) - i)
    return block


def holders(n, gib, ghost=False, undumpable=False):
    """`n` processes that each hold `gib` GiB (each under its own address-space headroom), for 3 s; a ghost's
    first thread exits alone, an undumpable one's smaps_rollup is closed to PID 1."""
    r, w = os.pipe()
    for _ in range(n):
        if os.fork() == 0:
            def hold():
                if undumpable:
                    _libc.prctl(4, 0, 0, 0, 0)          # PR_SET_DUMPABLE
                block = _fill(gib)
                os.write(w, b"1")
                time.sleep(30)
                del block
            if ghost:
                threading.Thread(target=hold).start()
                _libc.syscall(60, 0)                    # SYS_exit: the first thread only
            hold()
    for _ in range(n):
        os.read(r, 1)
    time.sleep(3)
    return "survived"


def ping():
    return True
'''


@linux_only
def test_zombies_that_end_every_pass_do_not_hide_memory(capped, saturated_cpus):
    sub = capped(PROBES, 1 * GIB, timeout=150)  # a slow or loaded machine fills slowly: the kill ends it early
    assert sub.zombies(200) == 200
    saturated_cpus()                                    # at load 9 to 20 both tests failed every time
    with pytest.raises(ChildFailure, match="together held more than"):
        sub.holders(2, 0.8)                             # 1.6 GiB beside 200 zombies, the cap 1 GiB over the start
    sub.close()


@linux_only
def test_unreadable_threads_of_a_zombie_leader_count_whole(capped, saturated_cpus):
    sub = capped(PROBES, 1 * GIB, timeout=150)
    saturated_cpus()
    with pytest.raises(ChildFailure, match="together held more than"):
        sub.holders(2, 0.8, ghost=True, undumpable=True)
    sub.close()
