"""Inputs for the paged_attention checks, and what the reference (and one misconception) make of them."""
import math
import re

import torch

from grader.engine import expect_close, expect_raises, fail, tolerance

TOLERANCE_FLOOR = {torch.float64: 1e-12, torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 1e-2}


def paged_case(gen: torch.Generator, context_lens: list, heads: int, kv_heads: int, head_dim: int,
               block_size: int, dtype: torch.dtype, scale: float | None = None,
               table_dtype: torch.dtype = torch.int32) -> dict:
    """paged_attention's arguments: each sequence's tokens in shuffled blocks of a pool with spare blocks.

    Every slot of the pool holds random values, so the slots past a context's end (in its last block, in spare
    blocks, and in the padding entries of the block table, which are valid block ids) must be ignored.
    """
    per_seq = [math.ceil(n / block_size) for n in context_lens]
    num_blocks = sum(per_seq) + 2                                   # two blocks nobody uses
    order = torch.randperm(num_blocks, generator=gen)               # physical blocks in shuffled order
    max_blocks = max(per_seq) + 1                                   # at least one padding entry per row
    tables = torch.randint(0, num_blocks, (len(context_lens), max_blocks), generator=gen)
    start = 0
    for s, n in enumerate(per_seq):
        tables[s, :n] = order[start:start + n]
        start += n
    shape = (num_blocks, block_size, kv_heads, head_dim)
    return {
        "q": torch.randn(len(context_lens), heads, head_dim, generator=gen).to(dtype),   # q: [S, H, D]
        "k_cache": torch.randn(shape, generator=gen).to(dtype),                         # [N, B, H_kv, D]
        "v_cache": torch.randn(shape, generator=gen).to(dtype),
        "block_tables": tables.to(table_dtype),                                         # [S, max_blocks]
        "context_lens": torch.tensor(context_lens, dtype=table_dtype),                  # [S]
        "scale": 1 / math.sqrt(head_dim) if scale is None else scale,
    }


def describe(case: dict) -> str:
    """A short text of the case for failure messages."""
    q, k = case["q"], case["k_cache"]
    return (f"paged_attention(q=[S={q.shape[0]}, H={q.shape[1]}, D={q.shape[2]}] {str(q.dtype)[6:]}, "
            f"k_cache/v_cache=[{k.shape[0]} blocks, block_size={k.shape[1]}, H_kv={k.shape[2]}, D={k.shape[3]}], "
            f"block_tables={case['block_tables'].tolist()}, context_lens={case['context_lens'].tolist()}, "
            f"scale={case['scale']:.4g})")


def calibration_case(case: dict) -> dict:
    """The case with six times the queries (signs flipped, head dims rotated or reversed) on the same cache.

    The reference's low-precision error on these gives tolerances a steady estimate of the rounding error of
    this cache, scale and lengths, even when the case itself holds only a few outputs.
    """
    q = case["q"]                                                                   # q: [S, H, D]
    queries = torch.cat([q, -q, q.roll(1, -1), -q.roll(1, -1), q.flip(-1), -q.flip(-1)])   # [6S, H, D]
    return {**case, "q": queries, "block_tables": case["block_tables"].repeat(6, 1),
            "context_lens": case["context_lens"].repeat(6)}


def expected_outputs(ref, case: dict) -> dict:
    """The float64 answer, the reference's float64 and input-dtype answers on the calibration case (for the
    tolerance), and the answer of the GQA-mapping mistake."""
    heads, kv_heads = case["q"].shape[1], case["k_cache"].shape[2]
    calibration = calibration_case(case)
    out = {"expected": ref.paged_attention(**case),
           "calibration": (ref.paged_attention(**calibration),
                           ref.paged_attention(**calibration, dtype=case["q"].dtype))}
    if 1 < kv_heads < heads:
        # query head h reading KV head h % H_kv: the KV heads tiled instead of each repeated for its group
        group = heads // kv_heads
        tiled = {**case, "k_cache": case["k_cache"].repeat(1, 1, group, 1),
                 "v_cache": case["v_cache"].repeat(1, 1, group, 1)}
        out["gqa_head_mapping"] = ref.paged_attention(**tiled)
    return out


def expect_attention(sub, case: dict, outputs: dict) -> None:
    """The submission's paged_attention on `case` must match the float64 answer within the dtype's tolerance."""
    atol, rtol = tolerance(*outputs["calibration"], TOLERANCE_FLOOR[case["q"].dtype])
    wrong = {mid: value for mid, value in outputs.items() if mid == "gqa_head_mapping"}
    expect_close(sub.paged_attention(**case), outputs["expected"], describe(case), atol, rtol, misconceptions=wrong)


def expect_refused(sub, case: dict, names, why: str) -> None:
    """paged_attention(**case) must raise ValueError whose message names one of `names` (`why` says what is bad)."""
    names = (names,) if isinstance(names, str) else names
    message = expect_raises(ValueError, sub.paged_attention, **case)
    if not any(re.search(rf"\b{name}\b", message) for name in names):
        fail(f"{describe(case)} raised ValueError({message!r}) ({why}); the message should name "
             f"{' or '.join(map(repr, names))}")
