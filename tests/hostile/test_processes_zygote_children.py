"""Sandbox v7, red team (stopped): the zygote keeps spawned children as zombies until the grader reaps or discards
them, mirrors PID 1's report at once, and reaps adopted orphans at every request.

Tried: a crash while a forked worker still holds the channel (the first process must report the crash, not the
zygote's kill of the group); children that fork detached grandchildren (setsid) and exit, in several checks in a row,
so that orphans reach the zygote: the zygote's children must not accumulate (they stay at the last discarded ones).
"""
import sys
import time

import pytest

from grader.engine.runner import zygote
from grader.sandbox.failures import ChildFailure

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import ctypes
import os
import time


def crash_beside_a_worker():
    if os.fork() == 0:                              # holds the channel on after the crash
        time.sleep(60)
        os._exit(0)
    ctypes.string_at(0)


def orphans_then_exit(n):
    for _ in range(n):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)
            os._exit(0)
    os._exit(3)


def ping():
    return 1
'''


def _zygote_children() -> list[str]:
    pid = zygote().pid
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return f.read().split()


@linux_only
def test_a_crash_beside_a_worker_holding_the_channel_reports_the_crash(sandboxed):
    sub = sandboxed(PROBES, timeout=20)
    assert sub.ping() == 1
    with pytest.raises(ChildFailure, match="segmentation fault"):
        sub.crash_beside_a_worker()
    sub.close()


@linux_only
def test_orphans_of_ended_children_do_not_accumulate_in_the_zygote(sandboxed):
    counts = []
    for _ in range(6):
        sub = sandboxed(PROBES, timeout=20)
        assert sub.ping() == 1
        with pytest.raises(ChildFailure, match="exited with code 3"):
            sub.orphans_then_exit(5)
        sub.close()
        sub._pool.close()
        counts.append(len(_zygote_children()))
    time.sleep(0.5)
    sub = sandboxed(PROBES, timeout=20)
    assert sub.ping() == 1                          # a request: the zygote collects what has ended
    sub.close()
    sub._pool.close()
    assert max(counts) <= 4 and len(_zygote_children()) <= 4, counts
