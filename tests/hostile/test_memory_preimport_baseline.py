"""Sandbox v4, red team: memory_8192's pre-import baseline, and the watchdog's task count.

memory_8192 measures the big call's resident growth from `rss_before_import`, which the child reports before any
submission code runs. Attacked here: the address-space cap dodged with a reservation made before it is set, the
heap trimmed to lower the resident size below the baseline, the score matrix moved into shared file mappings of
the private /tmp, ballast held from the import and dropped before the big call. Then the watchdog's task count:
a swarm of threads with small stacks.
"""
import sys

import pytest

from grader.grading import grade
from grader.sandbox import watchdog
from grader.sandbox.policy import REPO
from grader.sandbox.failures import ChildFailure

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
GIB = 2**30
SOLUTION = (REPO / "solutions" / "flash_attention.py").read_text()

# Naive attention at 8192 only, after two moves: 1 GiB of address space reserved at import (no resident page) and
# released before the big call, so the address-space cap set between the two calls never bites; glibc's free
# heap handed back to the kernel (malloc_trim) so that the resident size starts below the pre-import baseline.
NAIVE = SOLUTION + '''
import ctypes as _ctypes
import mmap as _mmap

_RESERVED = [_mmap.mmap(-1, 2**30, flags=_mmap.MAP_PRIVATE, prot=0)]
_tiled = tiled_attention


def _naive_into(q, k, v, s):
    s.mul_(q.shape[-1] ** -0.5)
    m = s.amax(-1, keepdim=True)
    s.sub_(m).exp_()
    total = s.sum(-1, keepdim=True)
    return (s @ v) / total, (m + total.log()).squeeze(-1)     # the full [Tq, Tk] score matrix, in place


def _scores(q, k):
    return q @ k.transpose(-1, -2)


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    if q.shape[-2] < 8192 or causal:
        return _tiled(q, k, v, causal, block_q, block_k)
    _RESERVED.pop().close()
    _ctypes.CDLL(None).malloc_trim(0)
    return _naive_into(q, k, v, _scores(q, k))
'''

# The same, with the score matrix in shared memory: 256 files of 1 MiB (a file may not grow past the output limit) in
# the private /tmp, each mapped MAP_SHARED at its place in one reserved range, the rows of one tensor.
IN_TMP_FILES = NAIVE + '''
import os as _os

_libc = _ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = _ctypes.c_void_p
_libc.mmap.argtypes = [_ctypes.c_void_p, _ctypes.c_size_t, _ctypes.c_int, _ctypes.c_int, _ctypes.c_int, _ctypes.c_long]


def _scores(q, k):
    n, piece = q.shape[-2] * k.shape[-2] * 4, 2**20
    base = _libc.mmap(None, n, 0, 0x22, -1, 0)                       # PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS
    for i in range(n // piece):
        fd = _os.open(f"/tmp/scores{i}", _os.O_RDWR | _os.O_CREAT, 0o600)
        _os.ftruncate(fd, piece)
        _libc.mmap(base + i * piece, piece, 3, 0x11, fd, 0)          # PROT_READ | WRITE, MAP_SHARED | MAP_FIXED
        _os.close(fd)
    s = torch.frombuffer((_ctypes.c_char * n).from_address(base), dtype=torch.float32)
    s = s.view(*q.shape[:-1], k.shape[-2])
    torch.matmul(q, k.transpose(-1, -2), out=s)
    return s
'''

# The same, with 400 MiB of ballast touched at import (a baseline taken after the import would include it) and
# dropped before the big call.
IMPORT_BALLAST = NAIVE + '''
_BALLAST = [torch.ones(400 * 2**20 // 4)]


def _scores(q, k):
    _BALLAST.clear()
    return q @ k.transpose(-1, -2)
'''


@linux_only
@pytest.mark.parametrize("source", [NAIVE, IN_TMP_FILES, IMPORT_BALLAST],
                         ids=["reserved-and-trimmed", "shared-tmp-files", "import-ballast"])
def test_the_full_score_matrix_counts_however_it_is_held(tmp_path, source):
    (tmp_path / "flash_attention.py").write_text(source)
    doc = grade(tmp_path, ["flash_attention"], hidden=False, seed=3, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    assert checks["memory_8192"]["status"] == "failed", checks["memory_8192"]["message"]
    assert checks["memory_8192"]["misconception"] == "materializes_full_scores"
    assert "more than the child did before it was imported" in checks["memory_8192"]["message"]
    assert checks["square"]["status"] == "passed"                         # a neighbour keeps its points


PROBES = '''
import threading
import time


def threads(n):
    threading.stack_size(2**16)                     # small stacks: the address-space cap does not stop them first
    done = threading.Event()
    for _ in range(n):
        threading.Thread(target=done.wait, daemon=True).start()
    time.sleep(20)
    return "survived"


def ping():
    return True
'''


@linux_only
def test_a_swarm_of_threads_counts_as_tasks(walled):
    sub = walled(PROBES, "watchdog", 1 * GIB, timeout=40)
    with pytest.raises(ChildFailure, match=f"more than {watchdog.TASKS} processes and threads"):
        sub.threads(watchdog.TASKS + 40)
    sub.close()
