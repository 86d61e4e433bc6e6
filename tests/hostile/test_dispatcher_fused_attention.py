"""Sandbox v2, red team: the fused attention family is refused at PyTorch's dispatcher, by every entry point.

`torch.ops.aten._scaled_dot_product_flash_attention_for_cpu` returns o and the logsumexp and once scored 33/33 on
flash_attention with no tiling, because only the Python name of scaled_dot_product_attention was replaced. Each
submission here reaches the family another way; every tiled_attention check must fail, and a neighbour keep its
points.
"""
import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "flash_attention.py").read_text()

LSE = "torch.logsumexp((q.float() @ k.float().transpose(-1, -2)) / q.shape[-1] ** 0.5, dim=-1)"
ENTRY_POINTS = {
    "flash_for_cpu": "o, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal)[:2]"
                     "\n    return o, lse",
    "aten_overload": f"return torch.ops.aten.scaled_dot_product_attention.default(q, k, v, is_causal=causal), {LSE}",
    "c_nn": f"return torch._C._nn.scaled_dot_product_attention(q, k, v, is_causal=causal), {LSE}",
    "math_fallback": f"return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, is_causal=causal)[0], {LSE}",
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_entry_point_to_fused_attention_is_refused(tmp_path, entry):
    folder = tmp_path / entry
    folder.mkdir()
    (folder / "flash_attention.py").write_text(
        f"{SOLUTION}\n\ndef tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):\n"
        f"    {ENTRY_POINTS[entry]}\n")
    doc = grade(folder, ["flash_attention"], hidden=False, seed=11, with_progress=False)
    checks = [c for t in doc["topics"] for c in t["checks"]]
    tiled = [c for c in checks if c["hint"] == "flash_attention.tiled_attention"]
    assert tiled and all(c["status"] != "passed" for c in tiled), [c["id"] for c in tiled if c["status"] == "passed"]
    assert any("may not be used" in c["message"] for c in tiled)
    memory = [c for c in checks if c["hint"] == "flash_attention.attention_memory_bytes"]
    assert memory and all(c["status"] == "passed" for c in memory)
