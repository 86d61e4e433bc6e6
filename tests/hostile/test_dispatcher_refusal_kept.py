"""Sandbox v3, red team: the dispatcher's refusal of fused attention cannot be undone from the submission.

The refusal was a `torch.library.Library` kept in `grader.sandbox.forbidden._libraries`; the submission runs in the
same interpreter, so `_libraries[0]._destroy()` (or any Library found by `gc`, or the finalizer that holds its C++
module) deregistered the refusing kernels, and `torch.ops.aten._scaled_dot_product_flash_attention_for_cpu` then
scored 70/70 on flash_attention in hidden mode with no tiling. The registrations now live in a C++ module that no
Python object holds (forbidden.forbid_operators).
"""
from grader.grading import grade
from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "flash_attention.py").read_text()

# At import: every Python route to the refusing registrations, then the fused kernel (bottom-right causal mask for
# Tq != Tk, so that a successful undo passes every tiled_attention check).
UNDO = '''
import gc as _gc
import sys as _sys
import weakref as _weakref

import torch as _torch

UNDONE = []
_forbidden = _sys.modules["grader.sandbox.forbidden"]
for _library in list(getattr(_forbidden, "_libraries", [])):
    _library._destroy()
    UNDONE.append("list")
for _obj in _gc.get_objects():
    try:
        if isinstance(_obj, _torch.library.Library):
            _obj._destroy()
            UNDONE.append("gc library")
        elif isinstance(_obj, _torch._C._DispatchModule):
            _obj.reset()
            UNDONE.append("gc module")
    except Exception:
        pass
for _info in list(getattr(_weakref.finalize, "_registry", {}).values()):
    for _arg in getattr(_info, "args", ()):
        if isinstance(_arg, _torch._C._DispatchModule):
            _arg.reset()
            UNDONE.append("finalizer")


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    _check_arguments(q, k, v, causal, block_q, block_k)
    tq, tk = q.shape[-2], k.shape[-2]
    mask = None
    if causal and tq != tk:
        rows, cols = _torch.arange(tq)[:, None], _torch.arange(tk)[None, :]
        mask = _torch.zeros(tq, tk, dtype=q.dtype).masked_fill(cols > rows + (tk - tq), float("-inf"))
        causal = False
    return _torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=mask)[:2]
'''


def test_the_refusal_of_fused_attention_cannot_be_deregistered(tmp_path):
    (tmp_path / "flash_attention.py").write_text(SOLUTION + UNDO)
    doc = grade(tmp_path, ["flash_attention"], hidden=False, seed=11, with_progress=False)
    checks = [c for t in doc["topics"] for c in t["checks"]]
    tiled = [c for c in checks if c["hint"] == "flash_attention.tiled_attention"
             and not c["id"].endswith("bad_arguments")]                  # refused before any attention runs
    assert tiled and all(c["status"] != "passed" for c in tiled), [c["id"] for c in tiled if c["status"] == "passed"]
    assert any("may not be used" in c["message"] for c in tiled)
    memory = [c for c in checks if c["hint"] == "flash_attention.attention_memory_bytes"]
    assert memory and all(c["status"] == "passed" for c in memory)     # a neighbour keeps its points
