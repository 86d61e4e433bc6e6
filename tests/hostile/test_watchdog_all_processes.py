"""Sandbox v2, red team: limits hold over all the sandbox's processes together, not one process at a time.

Found by the review: naive attention passed the 8192 memory check by handing the big call to a helper forked
before the cap; two workers held 4.3 GiB between them; one call started 250 processes. PID 1 of the sandbox now
sums and counts every process it holds (grader/sandbox/watchdog.py).
"""
import sys
import time

import pytest

from grader.grading import grade
from grader.sandbox import watchdog
from grader.sandbox.policy import REPO
from grader.sandbox.failures import ChildFailure

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30

# A helper forked at import computes the big call the naive way and sends the answer back through a pipe.
HELPER = (REPO / "solutions" / "flash_attention.py").read_text() + '''
import os as _os
import pickle as _pickle

_tiled = tiled_attention
_to_helper_r, _to_helper_w = _os.pipe()
_from_helper_r, _from_helper_w = _os.pipe()
if _os.fork() == 0:
    with _os.fdopen(_to_helper_r, "rb") as _in, _os.fdopen(_from_helper_w, "wb") as _out:
        while True:
            _q, _k, _v = (torch.from_numpy(a) for a in _pickle.load(_in))
            _s = (_q @ _k.transpose(-1, -2)) / _q.shape[-1] ** 0.5          # the full score matrix
            _pickle.dump(((torch.softmax(_s, -1) @ _v).numpy(), torch.logsumexp(_s, -1).numpy()), _out)
            _out.flush()
_send, _receive = _os.fdopen(_to_helper_w, "wb"), _os.fdopen(_from_helper_r, "rb")


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    if q.shape[-2] < 4096 or causal:
        return _tiled(q, k, v, causal, block_q, block_k)
    _pickle.dump([t.numpy() for t in (q, k, v)], _send)
    _send.flush()
    o, lse = _pickle.load(_receive)
    return torch.from_numpy(o), torch.from_numpy(lse)
'''

PROBES = '''
import os, time

def hold(workers, gib):
    for _ in range(workers):
        if os.fork() == 0:
            block = bytearray(int(gib * 2**30))
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(60)
            os._exit(0)
    time.sleep(30)
    return "survived"

def swarm(n):
    for _ in range(n):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
    time.sleep(30)
    return "survived"

def ping():
    return True
'''


@linux_only
def test_a_helper_process_does_not_hide_the_full_score_matrix(tmp_path):
    (tmp_path / "flash_attention.py").write_text(HELPER)
    doc = grade(tmp_path, ["flash_attention"], hidden=False, seed=3, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    if not doc["isolation"].get("watchdog"):
        pytest.skip("no watchdog here (no private root)")
    assert checks["memory_8192"]["status"] == "failed", checks["memory_8192"]["message"]
    assert checks["memory_8192"]["misconception"] == "materializes_full_scores"
    assert checks["bad_arguments"]["status"] == "passed"                  # a neighbour keeps its points


@linux_only
def test_workers_cannot_share_out_more_memory_than_one_sandbox_has(capped):
    sub = capped(PROBES, 2 * GIB, timeout=40)
    started = time.monotonic()
    with pytest.raises(ChildFailure, match="together held more than"):
        sub.hold(2, 1.5)                      # 3 GiB in two processes, each under its own 2 GiB headroom
    assert time.monotonic() - started < 30    # killed when the sum passed the cap, not at the timeout
    sub.close()


@linux_only
def test_a_swarm_of_processes_is_killed(walled):
    sub = walled(PROBES, "watchdog", 64 * GIB, timeout=40)  # counted per process, their shared pages pass any cap
    with pytest.raises(ChildFailure, match=f"more than {watchdog.TASKS} processes"):
        sub.swarm(watchdog.TASKS + 40)
    sub.close()
