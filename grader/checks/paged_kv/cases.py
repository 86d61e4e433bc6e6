"""Inputs for the paged_attention checks, and what the reference (and one misconception) make of them."""
import math
import re

import torch

from grader.engine import SubmissionRaised, expect_close, expect_raises, fail, tolerance, tr

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


def used_blocks(case: dict) -> list:
    """Per sequence, how many entries of its block_tables row hold its tokens: ceil(context_len / block_size)."""
    block_size = case["k_cache"].shape[1]
    return [math.ceil(n / block_size) for n in case["context_lens"].tolist()]


def with_garbage(gen: torch.Generator, case: dict) -> dict:
    """The case as a real pool holds it: unwritten memory, and block tables padded with ids that are no block.

    Every cache slot that no sequence attends to (past a context's end in its last block, and the two blocks nobody
    uses) holds NaN, +inf, -inf or the dtype's largest value of either sign, each kind in equal shares, shuffled
    element by element; each padding entry of block_tables (past a sequence's ceil(context_len / block_size)
    blocks) is -1, 0, the pool's size or the table dtype's largest id. The answer is unchanged: only the used slots
    and entries may be read.
    """
    k_cache, tables = case["k_cache"], case["block_tables"]
    num_blocks, block_size = k_cache.shape[:2]                          # k_cache: [N, B, H_kv, D]
    attended = torch.zeros(num_blocks, block_size, dtype=torch.bool)    # attended: [N, B]
    for s, n in enumerate(case["context_lens"].tolist()):
        for t in range(n):
            attended[int(tables[s, t // block_size]), t % block_size] = True
    big = torch.finfo(k_cache.dtype).max
    junk = torch.tensor([math.nan, math.inf, -math.inf, big, -big], dtype=k_cache.dtype)

    def garbage_in_unused_slots(cache: torch.Tensor) -> torch.Tensor:
        unused = (~attended[:, :, None, None]).expand(cache.shape).flatten().nonzero()[:, 0]   # unused: [U]
        assert len(unused) >= len(junk), "the spare blocks hold every kind of garbage"
        filled = cache.flatten().clone()                                                       # filled: [N*B*H_kv*D]
        filled[unused[torch.randperm(len(unused), generator=gen)]] = junk[torch.arange(len(unused)) % len(junk)]
        return filled.view(cache.shape)

    odd_ids = torch.tensor([-1, 0, num_blocks, torch.iinfo(tables.dtype).max], dtype=tables.dtype)
    padded = tables.clone()                                             # padded: [S, max_blocks]
    assert all(padded.shape[1] > n for n in used_blocks(case)), "every row needs a padding entry"
    for s, n in enumerate(used_blocks(case)):
        padded[s, n:] = odd_ids[torch.randint(0, len(odd_ids), (padded.shape[1] - n,), generator=gen)]
    return {**case, "k_cache": garbage_in_unused_slots(k_cache),
            "v_cache": garbage_in_unused_slots(case["v_cache"]), "block_tables": padded}


def holds_garbage(case: dict) -> bool:
    """Whether the case's caches hold non-finite values or its block tables ids outside the pool."""
    num_blocks = case["k_cache"].shape[0]
    tables = case["block_tables"]
    return (not bool(torch.isfinite(case["k_cache"]).all() and torch.isfinite(case["v_cache"]).all())
            or bool(((tables < 0) | (tables >= num_blocks)).any()))


def describe(case: dict) -> str:
    """A short text of the case for failure messages."""
    q, k = case["q"], case["k_cache"]
    garbage = (tr(" (unused slots hold NaN, +-inf and +-the largest float; padding entries of block_tables are -1, 0 "
                  "or ids past the pool)") if holds_garbage(case) else "")
    return (f"paged_attention(q=[S={q.shape[0]}, H={q.shape[1]}, D={q.shape[2]}] {str(q.dtype)[6:]}, "
            f"k_cache/v_cache=[{k.shape[0]} blocks, block_size={k.shape[1]}, H_kv={k.shape[2]}, D={k.shape[3]}], "
            f"block_tables={case['block_tables'].tolist()}, context_lens={case['context_lens'].tolist()}, "
            f"scale={case['scale']:.4g}){garbage}")


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
    garbage = holds_garbage(case)
    try:
        out = sub.paged_attention(**case)
    except SubmissionRaised as raised:
        if not garbage:
            raise
        fail(tr("{what} raised {type}: {message}; entries of block_tables past a sequence's "
                "ceil(context_lens[s] / block_size) blocks are padding and may hold any id: read only the entries (and "
                "slots) each sequence uses", what=describe(case), type=raised.type_name, message=raised.message))
    if garbage and isinstance(out, torch.Tensor) and out.shape == outputs["expected"].shape:
        spurious = ~torch.isfinite(out) & torch.isfinite(outputs["expected"])   # spurious: [S, H, D]
        if bool(spurious.any()):
            fail(tr("{what} returned NaN or inf in {spurious} of {outputs} outputs, though every slot the sequences "
                    "attend to is finite: NaN from unused cache slots: mask by selecting the used positions (0 x NaN "
                    "and 0 x inf are NaN, so a weight of 0 does not remove a garbage value)", what=describe(case),
                    spurious=int(spurious.sum()), outputs=out.numel()))
    expect_close(out, outputs["expected"], describe(case), atol, rtol, misconceptions=wrong)


def expect_refused(sub, case: dict, names, why: str) -> None:
    """paged_attention(**case) must raise ValueError whose message names one of `names` (`why` says what is bad)."""
    names = (names,) if isinstance(names, str) else names
    message = expect_raises(ValueError, sub.paged_attention, **case)
    if not any(re.search(rf"\b{name}\b", message) for name in names):
        fail(tr("{what} raised ValueError({message!r}) ({why}); the message should name {names}", what=describe(case),
                message=message, why=why, names=tr(" or ").join(map(repr, names))))
