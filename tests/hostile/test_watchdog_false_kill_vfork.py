"""Sandbox v6, red team: correct code under its cap must not be killed for a vfork child while it allocates.

watchdog.Spaces counts an address space once among processes whose resident sizes are equal (kcmp KCMP_VM). A
vfork child (subprocess.run, os.posix_spawn) shares its parent's address space until its exec, so it shows
its parent's whole resident size; counted twice, a process holding 0.6 of a 1 GiB headroom passes the cap.
Here another thread of the parent allocates and frees 8 MiB blocks all the while, so the resident size moves
between PID 1's reads of parent and child, and a spawn goes on in a loop: the submission is not killed.
"""
import sys

import pytest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30

PROBES = '''
import os
import subprocess
import threading
import time


def _churn(stop):
    while not stop.is_set():
        block = bytearray(8 * 2**20)          # a fresh mapping each time: the resident size rises and falls
        for i in range(0, len(block), 4096):
            block[i] = 1
        del block


def hold_and_spawn(gib, seconds, way):
    """Hold `gib` GiB while a thread churns memory, and spawn `true` again and again for `seconds`: how often."""
    block = bytearray(int(gib * 2**30))
    for i in range(0, len(block), 4096):
        block[i] = 1
    stop = threading.Event()
    churn = threading.Thread(target=_churn, args=(stop,))
    churn.start()
    end, started = time.monotonic() + seconds, 0
    try:
        while time.monotonic() < end:
            if way == "run":
                subprocess.run(["true"], check=True)
            else:
                os.waitpid(os.posix_spawn("/bin/true", ["true"], {}), 0)
            started += 1
    finally:
        stop.set()
        churn.join()
    return started
'''


@linux_only
@pytest.mark.parametrize("way", ["run", "posix_spawn"])
def test_a_vfork_child_beside_an_allocating_thread_is_not_a_kill(sandboxed, way):
    sub = sandboxed(PROBES, 1 * GIB, timeout=40)
    assert sub.hold_and_spawn(0.6, 6, way) > 0, "the sandbox killed a submission using 0.6 of 1 GiB"
    sub.close()
