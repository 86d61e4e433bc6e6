"""Sandbox v4, red team: processes that hand their memory to a fresh fork every few ms, to stay out of the sum.

PID 1 kills the sandbox when the proportional sum (Pss from smaps_rollup) passes the cap. Walking a process of
0.7 GiB takes milliseconds, and a process that had ended by the time PID 1 read it counted as nothing; its fork,
which shared its pages while PID 1 read it, counted only its share: a worker that forks and exits in a loop
carried its block past every pass. Filled 16 MiB between forks, four such lines held 3.6 GiB of the host in a
sandbox capped at 1.1 GiB. Fixed in watchdog.py: /proc is listed again while processes end during a pass, and
one that ended counts with the resident size the sample saw. With a shared anonymous mapping the fork holds the
pages without mapping them (no process's resident size shows them): seccomp refuses such mappings, and the
private root has no /dev/zero to map shared.
"""
import errno
import sys

import pytest

from grader.sandbox.failures import ChildFailure

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30

PROBES = '''
import mmap
import os
import time


def churn(workers, gib, seconds):
    """Workers that each fill `gib` GiB a little at a time, handing the block to a fresh fork every few ms (the old
    process exits): no process of a worker lives long enough to be summed by its proportional size."""
    for _ in range(workers):
        if os.fork() == 0:
            try:
                block, filled = mmap.mmap(-1, int(gib * 2**30), flags=mmap.MAP_PRIVATE), 0
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    block[filled:filled + 2**24] = bytes(1) * min(2**24, len(block) - filled)
                    filled = min(filled + 2**24, len(block))
                    if os.fork():
                        os._exit(0)                 # the child carries on with the block under a new pid
            finally:
                os._exit(0)
    time.sleep(seconds + 2)
    return "survived"


def shared_anonymous():
    """What refuses each way to shared anonymous memory: the errno, or 'mapped'."""
    ways = {"mmap": lambda: mmap.mmap(-1, 2**20), "dev_zero": lambda: mmap.mmap(os.open("/dev/zero", os.O_RDWR), 2**20)}
    found = {}
    for name, way in ways.items():
        try:
            way()
            found[name] = "mapped"
        except OSError as error:
            found[name] = error.errno
    found["private"] = len(mmap.mmap(-1, 2**20, flags=mmap.MAP_PRIVATE))
    return found


def ping():
    return True
'''


@linux_only
def test_workers_that_re_fork_between_samples_are_still_killed(capped):
    sub = capped(PROBES, 1 * GIB, timeout=150)  # a slow or loaded machine fills slowly: the kill ends it early
    with pytest.raises(ChildFailure, match="together held more than"):
        sub.churn(3, 0.9, 120)                # 2.7 GiB in three lines of processes, each under its own headroom
    sub.close()


@linux_only
def test_shared_anonymous_memory_cannot_be_made(sandboxed):
    sub = sandboxed(PROBES)
    sub.ping()
    if not (sub.isolation.get("seccomp") and sub.isolation.get("private_root")):
        pytest.skip("no seccomp filter or no private root here")
    found = sub.shared_anonymous()
    assert found == {"mmap": errno.EPERM, "dev_zero": errno.ENOENT, "private": 2**20}
    sub.close()
