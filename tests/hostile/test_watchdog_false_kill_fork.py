"""Sandbox v5, red team: a correct submission under its memory cap was killed for a short-lived fork.

watchdog.proportional counts a process that ended during the pass with the resident size the sample saw. A fork
shows its parent's whole resident size; when it exits between the sample (which then sums the parent twice and
passes the cap) and the proportional pass, the pass counts it whole again, beside its parent that now holds all
its pages alone; and a vfork child (subprocess.run) shares its parent's address space until its exec, so both
showed all of it. A process holding 0.6 GiB of a 1 GiB headroom that ran `subprocess.run(["true"])` or forked a
worker of a few ms, in a loop, was killed for 'more than 1.2 GiB' within seconds. Fixed: a pass during which a
process ended is done again (watchdog.over_cap), and an address space shared by processes counts once (kcmp).
"""
import sys

import pytest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30

PROBES = '''
import os
import subprocess
import time


def hold_and_fork(gib, seconds, spawn):
    """Hold `gib` GiB and start a short-lived process again and again for `seconds`: how many it started."""
    block = bytearray(int(gib * 2**30))
    for i in range(0, len(block), 4096):
        block[i] = 1
    end, started = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        if spawn:
            subprocess.run(["true"], check=True)
        elif (pid := os.fork()) == 0:
            time.sleep(0.005)
            os._exit(0)
        else:
            os.waitpid(pid, 0)
        started += 1
    return started
'''


@linux_only
@pytest.mark.parametrize("spawn", [True, False], ids=["subprocess_run_true", "fork_a_worker"])
def test_a_short_lived_process_does_not_kill_a_submission_under_its_cap(sandboxed, spawn):
    sub = sandboxed(PROBES, 1 * GIB, timeout=40)
    assert sub.hold_and_fork(0.6, 6, spawn) > 0, "the sandbox killed a submission using 0.6 of 1 GiB"
    sub.close()
