"""Sandbox v6, red team: fork chains on transparent huge pages held twice the summed cap for seconds.

The v4 attack (a process fills its block a little, forks, exits; the child carries on under a new pid) is
caught on 4 KiB pages because fork, exit and PID 1's smaps_rollup walk each take tens of ms for 0.8 GiB. With
madvise(MADV_HUGEPAGE) on the block, fork copies 400 PMDs (about 1 ms), the exit about as long, and the walk
takes 0.3 ms: every pass of watchdog.over_cap sees a line end (its pass is repeated, no longer counting the
ended one), and reads the lines at their shared half or not at all. Three lines of 0.8 GiB fill to 2.4 GiB in a
sandbox capped at 1.1 GiB and hold it for seconds (host MemAvailable fell by 2.7 GiB), often until the call
ends. Fixed: PID 1 freezes the namespace while it reads it (watchdog.frozen: SIGSTOP to all, wait until every
thread is stopped or ended, sum, SIGCONT), so no fork or exit happens mid-pass. The race it closed was won only
some of the time: this test failed on the old watchdog in about one run of two to four.
"""
import sys

import pytest

from grader.sandbox.failures import ChildFailure

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30

PROBES = r'''
import mmap
import os
import time


def lines(count, gib, seconds):
    """`count` chains that each fill `gib` GiB of huge pages 8 MiB at a time, handing the block to a fresh fork
    after each step; returns as soon as every chain holds its whole block at once ('all full')."""
    full_r, full_w = os.pipe()
    for _ in range(count):
        if os.fork() == 0:
            try:
                block = mmap.mmap(-1, int(gib * 2**30), flags=mmap.MAP_PRIVATE)
                block.madvise(mmap.MADV_HUGEPAGE)
                filled, told, end = 0, False, time.monotonic() + seconds
                while time.monotonic() < end:
                    if filled < len(block):
                        block[filled:filled + 2**23] = b"\1" * min(2**23, len(block) - filled)
                        filled += 2**23
                    elif not told:
                        os.write(full_w, b"1")
                        told = True
                    if os.fork():
                        os._exit(0)
            finally:
                os._exit(0)
    os.close(full_w)
    got = b""
    while len(got) < count:
        more = os.read(full_r, count)
        if not more:
            return "timed out"
        got += more
    return "all full"


def ping():
    return True
'''


@linux_only
def test_huge_page_fork_chains_are_killed_before_they_fill(capped, saturated_cpus):
    sub = capped(PROBES, 1 * GIB, timeout=150)  # a slow or loaded machine fills slowly: the kill ends it early
    saturated_cpus()                        # at load 9 to 20 this failed every time
    with pytest.raises(ChildFailure, match="together held more than"):
        print(sub.lines(3, 0.8, 120))       # 2.4 GiB in three chains, each under its own headroom
    sub.close()
