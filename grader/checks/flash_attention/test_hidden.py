"""Hidden flash_attention checks: random shapes, tiles, dtypes and score magnitudes drawn from the seed, compared
with the live reference."""
import re

import torch

from grader.checks.flash_attention.expect import expect_attention, expect_finite, expected
from grader.checks.flash_attention.inputs import between, pick, randn_qkv, with_row_scores
from grader.checks.flash_attention.memory import T, expect_small_footprint
from grader.engine import check, expect_equal, expect_raises, fail, reference, require, tr

FORBIDDEN_CALLS = ["torch.nn.functional.scaled_dot_product_attention", "torch._C._nn.scaled_dot_product_attention"]
# the fused attention family at the dispatcher, whatever the entry point (torch.ops.aten._scaled_dot_product_...,
# nn.MultiheadAttention's fast path, the math fallback that returns the weights)
FORBIDDEN_OPERATORS = [r"scaled_dot_product|_attention|_transformer_encoder_layer_fwd|_fused_sdp_choice"]
HEAD_DIMS = [16, 32, 48, 64, 80, 96, 128]
TILES = [4, 5, 8, 13, 16, 24, 32, 37, 64]  # odd ones that divide nothing, and ones longer than the sequence


def random_shape(rng: torch.Generator, causal: bool, max_tq: int = 80) -> tuple:
    """(B, H, Tq, Tk, D) with Tq <= Tk when causal (every query then sees at least one key)."""
    tk = between(rng, 1, 80)
    tq = between(rng, 1, min(tk, max_tq)) if causal else between(rng, 1, max_tq)
    return between(rng, 1, 2), between(rng, 1, 3), tq, tk, pick(rng, HEAD_DIMS)


def expect_random_tiled(sub, rng: torch.Generator, dtype: torch.dtype, causal: bool, max_tq: int = 80) -> None:
    """One random case of tiled_attention (shape, tiles) in `dtype`, against the live reference."""
    shape = random_shape(rng, causal, max_tq)
    q, k, v = randn_qkv(rng, *shape, dtype=dtype)
    block_q, block_k = pick(rng, TILES), pick(rng, TILES)
    case = expected(reference("flash_attention"), q, k, v, causal, block_q, block_k)
    result = sub.tiled_attention(q, k, v, causal=causal, block_q=block_q, block_k=block_k)
    expect_attention(result, case, sub.last_call, dtype)


@check("random_float32", points=12, hint="tiled_attention",
       title="tiled_attention matches exact attention on random float32 shapes, tiles and masks")
def test_random_float32(sub, rng):
    for _ in range(16):
        expect_random_tiled(sub, rng, torch.float32, causal=pick(rng, [False, True]))


@check("random_decode", points=8, hint="tiled_attention",
       title="causal tiled_attention with a few queries against a longer cache (bottom-right alignment)")
def test_random_decode(sub, rng):
    for _ in range(10):
        expect_random_tiled(sub, rng, torch.float32, causal=True, max_tq=4)


@check("random_low_precision", points=8, hint="tiled_attention",
       title="tiled_attention on random float16 and bfloat16 inputs, within calibrated tolerances")
def test_random_low_precision(sub, rng):
    for _ in range(10):
        expect_random_tiled(sub, rng, pick(rng, [torch.float16, torch.bfloat16]), causal=pick(rng, [False, True]))


@check("random_large_scores", points=7, hint="tiled_attention",
       title="random rows of scores up to +-1000: o and lse stay finite and exact")
def test_random_large_scores(sub, rng):
    for _ in range(8):
        b, h, tq, tk = between(rng, 1, 2), between(rng, 1, 2), between(rng, 1, 24), between(rng, 1, 64)
        d = pick(rng, [16, 64])  # sqrt(D) a power of two: exact scores in float32
        q, k, v = (torch.randint(-64, 64, (b, h, t, d), generator=rng) / 32 for t in (tq, tk, tk))
        # per row: a score level far beyond exp's range (either sign) or a moderate one
        far = torch.randint(100, 1001, (tq,), generator=rng) * (2 * torch.randint(0, 2, (tq,), generator=rng) - 1)
        targets = torch.where(torch.rand(tq, generator=rng) < 0.7, far, torch.randint(-20, 21, (tq,), generator=rng))
        q, k = with_row_scores(q, k, targets)
        block_q, block_k = pick(rng, TILES), pick(rng, TILES)
        case = expected(reference("flash_attention"), q, k, v, False, block_q, block_k)
        result = sub.tiled_attention(q, k, v, causal=False, block_q=block_q, block_k=block_k)
        expect_finite(result, case, sub.last_call, torch.float32)
        expect_attention(result, case, sub.last_call, torch.float32)


@check("random_bad_shapes", points=2, hint="tiled_attention",
       title="tiled_attention raises ValueError naming causal when Tq > Tk, and naming v when k and v differ; the "
             "same inputs without causal are answered")
def test_random_bad_shapes(sub, rng):
    for _ in range(4):
        b, h, tk, d = between(rng, 1, 2), between(rng, 1, 3), between(rng, 1, 40), pick(rng, HEAD_DIMS)
        q, k, v = randn_qkv(rng, b, h, tk + between(rng, 1, 40), tk, d, torch.float32)
        block_q, block_k = pick(rng, TILES), pick(rng, TILES)
        message = expect_raises(ValueError, sub.tiled_attention, q, k, v, causal=True, block_q=block_q,
                                block_k=block_k)
        if not re.search(r"\bcausal\b", message):
            fail(tr("tiled_attention with causal=True and Tq > Tk raised a ValueError that does not name 'causal'"))
        message = expect_raises(ValueError, sub.tiled_attention, q, k, v[..., :d // 2])
        if not re.search(r"\bv\b", message):
            fail(tr("tiled_attention with v of another head dim than k raised a ValueError that does not name 'v'"))
        # the same inputs without the mask: more queries than keys is fine (refusing every call fails here)
        case = expected(reference("flash_attention"), q, k, v, False, block_q, block_k)
        expect_attention(sub.tiled_attention(q, k, v, causal=False, block_q=block_q, block_k=block_k), case,
                         sub.last_call, torch.float32)


@check("memory_fresh_inputs", points=4, hint="tiled_attention",
       title="at Tq = Tk = 8192 (D = 64) on random inputs, a call stays far below the 256 MiB score matrix")
def test_memory_fresh_inputs(sub, rng):
    # the public memory check's inputs are fixed, so its answer could be computed ahead (at import, or offline
    # and shipped in the submission): here they are drawn from the seed, and the reference answers live
    q, k, v = randn_qkv(rng, 1, 1, T, T, 64, torch.float32)
    rows = torch.randperm(T, generator=rng)[:64].sort().values
    case = expected(reference("flash_attention"), q[:, :, rows], k, v, False, 512, 512)
    expect_small_footprint(sub, q, k, v, rows, case)


def expect_reference_figures(sub, function: str, args: tuple) -> None:
    """The submission's `function`(*args) gives the reference's figures (other keys of a dict are ignored)."""
    got = getattr(sub, function)(*args)
    want = getattr(reference("flash_attention"), function)(*args)
    picked = {name: got[name] for name in want if name in got} if isinstance(got, dict) else got
    expect_equal(picked, want, sub.last_call)


@check("random_memory_bytes", points=7, hint="attention_memory_bytes",
       title="attention_memory_bytes on random sizes (tiles no larger than the sequence)")
def test_random_memory_bytes(sub, rng):
    for _ in range(20):
        # Tiles no larger than the sequences: whether a larger tile counts whole or clamped is left open.
        tq, tk = between(rng, 1, 2**17), between(rng, 1, 2**17)
        args = (tq, tk, pick(rng, HEAD_DIMS), between(rng, 1, min(tq, 1024)), between(rng, 1, min(tk, 1024)),
                pick(rng, [1, 2, 4, 8]))
        expect_reference_figures(sub, "attention_memory_bytes", args)


@check("random_hbm_bytes", points=7, hint="attention_hbm_bytes",
       title="attention_hbm_bytes on random lengths, head dims, query blocks (some longer than n) and dtypes")
def test_random_hbm_bytes(sub, rng):
    for _ in range(20):
        n = between(rng, 1, 2**17)
        args = (n, pick(rng, HEAD_DIMS), between(rng, 1, 2 * min(n, 1024)), pick(rng, [1, 2, 4]))
        expect_reference_figures(sub, "attention_hbm_bytes", args)


@check("random_triton", points=7, hint="flash_attention_triton",
       title="flash_attention_triton on random small float16 shapes, causal or not")
def test_random_triton(sub, rng):
    require("triton", "gpu")
    device = "cuda" if torch.cuda.is_available() else "cpu"  # on CPU the child runs TRITON_INTERPRET=1
    sub.set_timeout(30)
    for _ in range(3):
        causal = pick(rng, [False, True])
        shape = random_shape(rng, causal, max_tq=48)
        q, k, v = randn_qkv(rng, *shape, dtype=torch.float16)
        case = expected(reference("flash_attention"), q, k, v, causal, diagnose_tiles=False)
        result = sub.flash_attention_triton(q.to(device), k.to(device), v.to(device), causal=causal)
        expect_attention(result, case, sub.last_call, torch.float16)
