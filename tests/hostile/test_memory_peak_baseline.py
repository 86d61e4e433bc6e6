"""Sandbox v3, red team: flash_attention's memory_8192 measures growth from a baseline the submission chose.

memory_8192 takes as baseline the peak resident memory of a small call the submission serves first, caps the
address space at the size *then* plus 160 MiB, and fails a big call that grows the peak more than 64 MiB past the
baseline. The submission controls the baseline: it keeps a 256 MiB buffer from the small call ("reuse": the full
score matrix is then computed into the buffer's pages, no new page at all) or keeps 400 MiB and frees them before
computing the 256 MiB matrix ("ballast"). Either way naive attention, which materializes the full 8192x8192 score
matrix, scored memory_8192 (82/82 on flash_attention in hidden mode). Not fixed here; the fix: measure from a point
before any submission code ran (PID 1's first sample, taken before the import; report the pre-import VmSize in the
"isolated" frame) and cap the address space from there, with an allowance measured on the solution.
"""
import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "flash_attention.py").read_text()

NAIVE = '''

def _naive(q, k, v, causal, s):
    d, (tq, tk) = q.shape[-1], s.shape[-2:]
    s.mul_(d ** -0.5)
    if causal:
        rows, cols = torch.arange(tq)[:, None], torch.arange(tk)[None, :]
        s.masked_fill_(cols > rows + (tk - tq), float("-inf"))
    m = s.amax(-1, keepdim=True)
    s.sub_(m).exp_()
    total = s.sum(-1, keepdim=True)
    return (s @ v) / total, (m + total.log()).squeeze(-1)      # the full [Tq, Tk] score matrix, in place
'''

BASELINES = {
    "reuse": NAIVE + '''
_BUFFER = []


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    _check_arguments(q, k, v, causal, block_q, block_k)
    if q.shape[-2] == 1024 and not _BUFFER:       # the small call: touch 256 MiB and keep them
        _BUFFER.append(torch.zeros(8192 * 8192))
    n = q.shape[0] * q.shape[1] * q.shape[-2] * k.shape[-2]
    if _BUFFER and n <= _BUFFER[0].numel():
        s = _BUFFER[0][:n].view(*q.shape[:-1], k.shape[-2])
        torch.matmul(q, k.transpose(-1, -2), out=s)
    else:
        s = q @ k.transpose(-1, -2)
    return _naive(q, k, v, causal, s)
''',
    "ballast": NAIVE + '''
_BALLAST = []


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    _check_arguments(q, k, v, causal, block_q, block_k)
    if q.shape[-2] == 1024 and not _BALLAST:      # the small call: raise the baseline by 400 MiB
        _BALLAST.append(torch.ones(400 * 2**20 // 4))
    if q.shape[-2] == 8192:                       # the big call: drop them first
        _BALLAST.clear()
    return _naive(q, k, v, causal, q @ k.transpose(-1, -2))
''',
}


@pytest.mark.parametrize("how", sorted(BASELINES))
def test_a_baseline_raised_by_the_submission_does_not_hide_the_full_score_matrix(tmp_path, how):
    (tmp_path / "flash_attention.py").write_text(SOLUTION + BASELINES[how])
    doc = grade(tmp_path, ["flash_attention"], hidden=False, seed=3, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    assert checks["square"]["status"] == "passed"                        # the naive way is exact: a fair baseline
    assert checks["memory_8192"]["status"] == "failed", checks["memory_8192"]["message"]
    assert checks["bad_arguments"]["status"] == "passed"                 # a neighbour keeps its points
