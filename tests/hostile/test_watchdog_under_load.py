"""Hostile submission: memory past the sandbox's summed cap, on a loaded machine. A call that forks two workers that
each fill 2 GiB held 4.31 GiB in a sandbox capped at 3 GiB on a quiet machine, and reported it in a check message:
once the resident sum passed the cap, the proportional sum (which decides) was read at most a tenth of the time,
and both workers filled up between two reads. With the CPUs busy, PID 1's samples were late too. Where a memory
cgroup can be made the kernel holds the cap at every page (cgroup.py); elsewhere the watchdog alone does, and
both are tried here. The sizes are a sixth of the report's (two workers of 0.4 GiB under a 0.5 GiB cap): a virtual
machine that backs its memory on first touch fills about 0.1 GiB/s under load.
"""
import sys

import pytest

from grader.sandbox.failures import ChildFailure

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watchdog reads Linux's /proc")
GIB = 2**30

PROBES = r'''
import mmap
import os
import numpy as np


def ping():
    return True


def workers(count, gib):
    """`count` forked workers that each fill `gib` GiB (on huge pages where the kernel has them: a fault maps 2 MiB,
    a few milliseconds fill a GiB); returns the GiB they held together once all were full."""
    full_r, full_w = os.pipe()
    for _ in range(count):
        if os.fork() == 0:
            try:
                block = mmap.mmap(-1, int(gib * 2**30), flags=mmap.MAP_PRIVATE)
                block.madvise(mmap.MADV_HUGEPAGE)
                np.frombuffer(block, dtype=np.uint8)[:] = 1          # every page touched
                os.write(full_w, b"1")
                os.read(full_r, 1)                                  # held until the call ends
            finally:
                os._exit(0)
    got = b""
    while len(got) < count:
        got += os.read(full_r, count - len(got))
    return count * gib
'''


def test_two_workers_that_together_pass_the_cap_are_killed_under_load(capped, saturated_cpus):
    sub = capped(PROBES, GIB // 2, timeout=60)
    load = saturated_cpus()
    with pytest.raises(ChildFailure, match=r"together held more than [\d.]+ GiB of memory"):
        held = sub.workers(2, 0.4)
        pytest.fail(f"two workers held {held} GiB together under a 0.5 GiB cap")
    assert all(process.poll() is None for process in load), "the competing processes ended before the attack did"
    assert sub._child.killed_for_memory == (capped.kind == "memory_cgroup")  # the kernel's kill, at the cap
    sub.close()
