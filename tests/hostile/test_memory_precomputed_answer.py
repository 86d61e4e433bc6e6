"""Sandbox v4, red team: naive attention that answers the 8192 memory check from an answer computed beforehand.

memory_8192 measured the resident growth of the big call only, and its inputs are the public lattice tensors,
whose formula ships with the student bundle (checks/flash_attention/inputs.py). A module that rebuilt those
tensors at import, ran the naive attention on them there (the full 256 MiB score matrix, where nothing measured
it) and answered the big call from that cache scored 82/82 in hidden mode, with no `materializes_full_scores`.
Fixed: the growth is measured to the peak of the child's whole life (Child.life_peak_rss), and a hidden check,
memory_fresh_inputs, draws the 8192 inputs from the seed. Its answer cannot be computed ahead at all, where the
public one's can: offline, shipped in the submission folder (below), which the public check cannot tell apart.
"""
import torch

from grader.grading import grade
from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "flash_attention.py").read_text()

PRECOMPUTED = SOLUTION + '''

def _naive(q, k, v, causal):
    s = q @ k.transpose(-1, -2)                      # the full [Tq, Tk] score matrix
    s.mul_(q.shape[-1] ** -0.5)
    if causal:
        tq, tk = s.shape[-2:]
        rows, cols = torch.arange(tq)[:, None], torch.arange(tk)[None, :]
        s.masked_fill_(cols > rows + (tk - tq), float("-inf"))
    m = s.amax(-1, keepdim=True)
    s.sub_(m).exp_()
    total = s.sum(-1, keepdim=True)
    return (s @ v) / total, (m + total.log()).squeeze(-1)


def _lattice(shape, salt):                           # the public checks' input formula, from the student bundle
    i = torch.arange(math.prod(shape), dtype=torch.int64) + salt * 1_000_003
    h = (i * 2654435761) % 2**32
    h = ((h ^ (h >> 15)) * 2246822519) % 2**32
    return (((h >> 16) % 128 - 64).to(torch.float32) / 32).reshape(shape)


_KNOWN = [_lattice((1, 1, 8192, 64), 100 + i) for i in range(3)]
_ANSWER = _naive(*_KNOWN, False)                     # at import: the 256 MiB matrix is gone before any call


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    _check_arguments(q, k, v, causal, block_q, block_k)
    if not causal and all(a.shape == b.shape and torch.equal(a, b) for a, b in zip((q, k, v), _KNOWN)):
        return _ANSWER
    return _naive(q, k, v, causal)
'''

SHIPPED = '''

_SHIPPED = torch.load(__file__.rsplit("/", 1)[0] + "/answer.pt")


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    _check_arguments(q, k, v, causal, block_q, block_k)
    if not causal and all(a.shape == b.shape and torch.equal(a, b) for a, b in zip((q, k, v), _SHIPPED["inputs"])):
        return _SHIPPED["answer"]
    return _naive(q, k, v, causal)
'''


def test_a_big_case_computed_at_import_does_not_hide_the_full_score_matrix(tmp_path):
    (tmp_path / "flash_attention.py").write_text(PRECOMPUTED)
    doc = grade(tmp_path, ["flash_attention"], hidden=False, seed=3, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    assert checks["square"]["status"] == "passed"                         # the naive way is exact
    assert checks["memory_8192"]["status"] == "failed", "naive attention passed memory_8192"
    assert checks["memory_8192"]["misconception"] == "materializes_full_scores"


def test_an_answer_shipped_in_the_folder_passes_only_the_public_memory_check(tmp_path):
    from grader.checks.flash_attention.inputs import lattice_qkv
    from solutions.flash_attention import tiled_attention

    known = lattice_qkv(1, 1, 8192, 8192, 64, salt=100)
    torch.save({"inputs": known, "answer": tiled_attention(*known, block_q=512, block_k=512)},
               tmp_path / "answer.pt")
    (tmp_path / "flash_attention.py").write_text(PRECOMPUTED.split("\n\ndef _lattice")[0] + SHIPPED)
    doc = grade(tmp_path, ["flash_attention"], hidden=True, seed=3, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    assert checks["memory_8192"]["status"] == "passed"                    # fixed public inputs: nothing to see
    assert checks["memory_fresh_inputs"]["status"] == "failed", checks["memory_fresh_inputs"]["message"]
    assert checks["memory_fresh_inputs"]["misconception"] == "materializes_full_scores"
