"""Sandbox v5, red team: a process whose main thread exits alone looked like a zombie to the watchdog.

When the first thread of a process calls the exit syscall (not exit_group), /proc/PID/stat shows state Z and a
resident size of 0 while the process's other threads run on with all its memory. watchdog.status() counts such
a process as ended: neither its memory nor its threads entered the sums. A sandbox capped at 1 GiB held 2.4 GiB,
and naive attention run in such a worker passed both memory checks of flash_attention (86/86 hidden). Fixed:
watchdog.live reads such a process through one of its live threads.
"""
import sys

import pytest

from grader.grading import grade
from grader.sandbox.failures import ChildFailure
from grader.sandbox.policy import REPO

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30

GHOST = r'''
import ctypes
import os
import threading

_libc = ctypes.CDLL(None, use_errno=True)


def ghost(work):
    """Fork a worker whose main thread exits alone; `work(r, w)` runs in its other thread on two fresh pipes."""
    to_r, to_w = os.pipe()
    back_r, back_w = os.pipe()
    if os.fork() == 0:
        threading.Thread(target=work, args=(to_r, back_w)).start()
        _libc.syscall(60, 0)              # SYS_exit: this thread only; /proc/PID/stat now reads 'Z', rss 0
    return to_w, back_r


def read_exact(fd, n):
    chunks = []
    while n:
        chunks.append(os.read(fd, min(n, 2**20)))
        n -= len(chunks[-1])
    return b"".join(chunks)
'''

HOLDERS = GHOST + r'''

def hold(r, w, gib=0.8):
    block = bytearray(int(gib * 2**30))
    for i in range(0, len(block), 4096):
        block[i] = 1
    os.write(w, b"1")
    os.read(r, 1)                         # until the sandbox ends


def holders(n):
    for _ in range(n):
        os.read(ghost(hold)[1], 1)
    return n
'''

ATTENTION = (REPO / "solutions" / "flash_attention.py").read_text() + GHOST + r'''

def _naive(r, w):
    while True:
        head = read_exact(r, 16)
        tq, tk = int.from_bytes(head[:8], "little"), int.from_bytes(head[8:], "little")
        q, k, v = (torch.frombuffer(bytearray(read_exact(r, t * 64 * 4)), dtype=torch.float32).view(t, 64)
                   for t in (tq, tk, tk))
        s = (q @ k.T) * 64 ** -0.5                      # the full [Tq, Tk] score matrix: 256 MiB at 8192
        lse = torch.logsumexp(s, -1)
        o = torch.softmax(s, -1) @ v
        del s
        os.write(w, o.numpy().tobytes() + lse.numpy().tobytes())


_PIPES = ghost(_naive)
_tiled = tiled_attention


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    if causal or q.shape[:2] != (1, 1) or q.shape[-2] < 4096 or q.shape[-1] != 64:
        return _tiled(q, k, v, causal, block_q, block_k)
    _check_arguments(q, k, v, causal, block_q, block_k)
    tq, tk = q.shape[-2], k.shape[-2]
    os.write(_PIPES[0], tq.to_bytes(8, "little") + tk.to_bytes(8, "little"))
    for t in (q, k, v):
        data = t.contiguous().numpy().tobytes()
        for i in range(0, len(data), 2**20):
            os.write(_PIPES[0], data[i:i + 2**20])
    raw = read_exact(_PIPES[1], tq * 64 * 4 + tq * 4)
    o = torch.frombuffer(bytearray(raw[:tq * 256]), dtype=torch.float32).view(1, 1, tq, 64)
    lse = torch.frombuffer(bytearray(raw[tq * 256:]), dtype=torch.float32).view(1, 1, tq)
    return o, lse
'''


@linux_only
def test_memory_held_by_threads_of_a_zombie_leader_is_counted(capped):
    sub = capped(HOLDERS + "\n\ndef ping():\n    return True\n", 1 * GIB, timeout=40)
    sub.holders(1)
    with pytest.raises(ChildFailure, match="together held more than"):
        sub.holders(2)                                  # 2.4 GiB held in all, the cap 1 GiB over the start
    sub.close()


@linux_only
def test_naive_attention_in_a_ghost_worker_fails_the_memory_checks(tmp_path):
    (tmp_path / "flash_attention.py").write_text(ATTENTION)
    doc = grade(tmp_path, ["flash_attention"], hidden=True, seed=3, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    for name in ("memory_8192", "memory_fresh_inputs"):
        assert checks[name]["status"] == "failed", f"naive attention passed {name}"
