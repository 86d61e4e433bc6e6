"""Public flash_attention checks: fixed lattice inputs (exact in every dtype), answers from the goldens."""
import re

import torch

from grader.checks.flash_attention.expect import expect_attention, expect_finite, expected
from grader.checks.flash_attention.inputs import lattice_qkv, with_row_scores
from grader.checks.flash_attention.memory import T, expect_small_footprint
from grader.engine import check, expect_equal, expect_raises, expect_type, fail, golden, reference, require, tr

FORBIDDEN_CALLS = ["torch.nn.functional.scaled_dot_product_attention", "torch._C._nn.scaled_dot_product_attention"]
# the fused attention family at the dispatcher, whatever the entry point (torch.ops.aten._scaled_dot_product_...,
# nn.MultiheadAttention's fast path, the math fallback that returns the weights)
FORBIDDEN_OPERATORS = [r"scaled_dot_product|_attention|_transformer_encoder_layer_fwd|_fused_sdp_choice"]
MIB = 2**20


def expect_tiled(sub, key: str, shape: tuple, causal: bool, block_q: int, block_k: int, dtype=torch.float32,
                 salt: int = 0) -> None:
    """tiled_attention on lattice inputs of `shape` = (B, H, Tq, Tk, D) must match the golden `key`."""
    q, k, v = lattice_qkv(*shape, salt=salt, dtype=dtype)
    case = golden(key, lambda: expected(reference("flash_attention"), q, k, v, causal, block_q, block_k))
    result = sub.tiled_attention(q, k, v, causal=causal, block_q=block_q, block_k=block_k)
    expect_attention(result, case, sub.last_call, dtype)


@check("square", points=2, hint="tiled_attention",
       title="tiled_attention matches exact attention (o and lse), Tq = Tk = 50, D = 64, 16x16 tiles")
def test_square(sub):
    expect_tiled(sub, "square", (2, 2, 50, 50, 64), causal=False, block_q=16, block_k=16, salt=10)


@check("square_causal", points=2, hint="tiled_attention",
       title="causal tiled_attention, Tq = Tk = 45, D = 16, 16x8 tiles")
def test_square_causal(sub):
    expect_tiled(sub, "square_causal", (1, 3, 45, 45, 16), causal=True, block_q=16, block_k=8, salt=20)


@check("decode_alignment", points=2, hint="tiled_attention",
       title="causal masking is bottom-right aligned when Tq < Tk (Tq = 1 and Tq = 6 against a cache)")
def test_decode_alignment(sub):
    expect_tiled(sub, "decode_one", (1, 2, 1, 37, 32), causal=True, block_q=4, block_k=16, salt=30)
    expect_tiled(sub, "decode_six", (1, 2, 6, 40, 32), causal=True, block_q=4, block_k=16, salt=40)


@check("tile_sizes", points=1, hint="tiled_attention",
       title="tiles larger than the sequence, and odd tiles that do not divide it (D = 80)")
def test_tile_sizes(sub):
    expect_tiled(sub, "one_tile", (1, 2, 33, 33, 80), causal=False, block_q=64, block_k=64, salt=50)
    expect_tiled(sub, "odd_tiles", (2, 1, 20, 33, 80), causal=True, block_q=7, block_k=5, salt=60)


@check("low_precision", points=2, hint="tiled_attention",
       title="float16 (D = 128) and bfloat16 (D = 64) inputs: o in the input dtype, float32 accumulation")
def test_low_precision(sub):
    expect_tiled(sub, "float16", (1, 2, 24, 40, 128), causal=True, block_q=16, block_k=16, dtype=torch.float16,
                 salt=70)
    expect_tiled(sub, "bfloat16", (2, 1, 30, 30, 64), causal=False, block_q=8, block_k=16, dtype=torch.bfloat16,
                 salt=80)


@check("large_scores", points=2, hint="tiled_attention",
       title="scores of +-700 that overflow a naive softmax give finite, exact o and lse")
def test_large_scores(sub):
    q, k, v = lattice_qkv(1, 2, 12, 40, 64, salt=90)
    targets = torch.tensor([700, 0, -700, 300, 5, -150, 120, -3, 1000, -1000, 90, 40])  # row max ~ target
    q, k = with_row_scores(q, k, targets)
    case = golden("large_scores", lambda: expected(reference("flash_attention"), q, k, v, False, 8, 16))
    result = sub.tiled_attention(q, k, v, causal=False, block_q=8, block_k=16)
    what = tr("{call} with rows of scores around {targets}", call=sub.last_call, targets=targets.tolist())
    expect_finite(result, case, what, torch.float32)
    expect_attention(result, case, what, torch.float32)


@check("memory_8192", points=3, hint="tiled_attention",
       title="at Tq = Tk = 8192 (D = 64) a call stays far below the 256 MiB float32 score matrix")
def test_memory_8192(sub):
    q, k, v = lattice_qkv(1, 1, T, T, 64, salt=100)
    rows = torch.arange(0, T, 97)  # spot-check these query rows against the reference
    case = golden("memory_8192_rows", lambda: expected(reference("flash_attention"), q[:, :, rows], k, v, False,
                                                       512, 512))
    expect_small_footprint(sub, q, k, v, rows, case)


@check("bad_arguments", points=1, hint="tiled_attention",
       title="tiled_attention raises ValueError naming block_q, block_k, q, v, or causal when Tq > Tk")
def test_bad_arguments(sub):
    q, k, v = lattice_qkv(1, 1, 8, 8, 16, salt=110)
    for kwargs, name in (({"block_q": 0}, "block_q"), ({"block_k": 0}, "block_k"), ({"block_k": -4}, "block_k")):
        message = expect_raises(ValueError, sub.tiled_attention, q, k, v, **kwargs)
        if name not in message:
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}", call=sub.last_call,
                    message=message, name=name))
    message = expect_raises(ValueError, sub.tiled_attention, q[0], k, v)
    if not re.search(r"\bq\b", message):
        fail(unnamed(sub.last_call, tr("q is 3-d"), message, "q"))
    message = expect_raises(ValueError, sub.tiled_attention, q, k, v[:, :, :5])
    if not re.search(r"\bv\b", message):
        fail(unnamed(sub.last_call, tr("k has 8 keys, v 5"), message, "v"))
    # 8 queries, 5 keys, bottom-right aligned: query i sees keys j <= i - 3, so queries 0, 1 and 2 see none
    message = expect_raises(ValueError, sub.tiled_attention, q, k[:, :, :5], v[:, :, :5], causal=True)
    if not re.search(r"\bcausal\b", message):
        fail(unnamed(sub.last_call, tr("Tq = 8 > Tk = 5: queries 0-2 would see no key"), message, "causal"))


def unnamed(call: str, why: str, message: str, name: str) -> str:
    """The failure of a call (`why` it is refused) whose ValueError does not name the argument `name`."""
    return tr("{call} ({why}) raised ValueError({message!r}); the message should name {name!r}", call=call, why=why,
              message=message, name=name)


MEMORY_CASES = {  # key: (tq, tk, d, block_q, block_k, dtype_bytes); tiles no larger than the sequences
    "memory_bytes_8k_64": (8192, 8192, 64, 64, 64, 4),
    "memory_bytes_8k_512_bf16": (8192, 8192, 64, 512, 512, 2),
    "memory_bytes_1k_4k": (1024, 4096, 128, 128, 256, 4),
    "memory_bytes_4k_d256_bf16": (4096, 4096, 256, 64, 32, 2),  # the state outweighs the score tile
}
MEMORY_KEYS = ("naive_scores", "tiled_scores", "tiled_state")


@check("memory_bytes", points=2, hint="attention_memory_bytes",
       title="attention_memory_bytes: the full T x T scores against one tile and one query block's float32 state")
def test_memory_bytes(sub):
    for key, args in MEMORY_CASES.items():
        want = golden(key, lambda: reference("flash_attention").attention_memory_bytes(*args))
        got = sub.attention_memory_bytes(*args)
        what = sub.last_call
        expect_type(got, dict, what)
        for name in MEMORY_KEYS:
            if name not in got:
                fail(tr("{what} returned keys {keys}; expected {expected}", what=what, keys=sorted(map(str, got)),
                        expected=", ".join(map(repr, MEMORY_KEYS))))
            expect_type(got[name], int, f"{what}[{name!r}]")
        tiled = want["tiled_scores"] + want["tiled_state"]
        expect_equal({n: got[n] for n in want}, want,
                     tr("{what} (naive holds {naive:g} MiB of scores; the tiled algorithm a {tile:g} KiB tile and "
                        "{state:g} KiB of float32 accumulator, max and sum: {ratio:.0f}x less)", what=what,
                        naive=want["naive_scores"] / MIB, tile=want["tiled_scores"] / 1024,
                        state=want["tiled_state"] / 1024, ratio=want["naive_scores"] / tiled)
                     + state_slip(got["tiled_state"], *args))


def state_slip(state, tq: int, tk: int, d: int, block_q: int, block_k: int, dtype_bytes: int) -> str:
    """What a wrong tiled_state leaves out, when it equals a known slip; else nothing."""
    if state == (block_q * d + 2 * block_q) * 4:
        return ""
    slips = {block_q * d * 4: tr("the running max and sum of every row are part of the state too"),
             2 * block_q * 4: tr("the [block_q, d] output accumulator is part of the state too"),
             (block_q * d + 2 * block_q) * dtype_bytes: tr("the state is float32, 4 bytes an entry, whatever the "
                                                            "input dtype")}
    return tr("; {slip}", slip=slips[state]) if state in slips else ""


@check("memory_bytes_bad_arguments", points=1, hint="attention_memory_bytes",
       title="attention_memory_bytes raises ValueError naming a size below 1")
def test_memory_bytes_bad_arguments(sub):
    for args, name in (((0, 64, 64, 16, 16), "tq"), ((64, 64, 0, 16, 16), "d"), ((64, 64, 64, 16, 0), "block_k"),
                       ((64, 64, 64, 16, 16, 0), "dtype_bytes")):
        message = expect_raises(ValueError, sub.attention_memory_bytes, *args)
        if not re.search(rf"\b{name}\b", message):
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}", call=sub.last_call,
                    message=message, name=name))


HBM_CASES = {  # key: (n, d, block_q, dtype_bytes)
    "hbm_8k_d128_bq128": (8192, 128, 128, 2),  # K and V are re-read 64 times, S and P never leave the chip
    "hbm_8k_d64_bq128": (8192, 64, 128, 2),  # half the bytes per re-read of K and V
    "hbm_8k_d128_bq16": (8192, 128, 16, 2),  # 512 re-reads of K and V: more traffic than writing S and P
    "hbm_200_one_block": (200, 64, 256, 4),  # one query block: K and V are read once
}


def intensity(n: int, d: int, moved: int) -> float:
    """FLOPs per HBM byte of an attention forward pass: Q K^T and P V are 2 n^2 d each, whichever algorithm."""
    return 4 * n * n * d / moved


@check("hbm_bytes", points=2, hint="attention_hbm_bytes",
       title="attention_hbm_bytes: same FLOPs, less HBM traffic when the query blocks are large enough")
def test_hbm_bytes(sub):
    for key, (n, d, block_q, dtype_bytes) in HBM_CASES.items():
        want = golden(key, lambda: reference("flash_attention").attention_hbm_bytes(n, d, block_q, dtype_bytes))
        got = sub.attention_hbm_bytes(n, d, block_q, dtype_bytes)
        what = sub.last_call
        expect_type(got, dict, what)
        for name in ("naive", "tiled"):
            if name not in got:
                fail(tr("{what} returned keys {keys}; expected 'naive' and 'tiled'", what=what,
                        keys=sorted(map(str, got))))
            expect_type(got[name], int, f"{what}[{name!r}]")
        expect_equal({name: got[name] for name in want}, want,
                     tr("{what} (both passes do {gflop:.3g} GFLOP; the naive one moves {naive:.4g} MiB, "
                        "{naive_intensity:.0f} FLOP/byte, the tiled one {tiled:.4g} MiB, {tiled_intensity:.0f} "
                        "FLOP/byte)", what=what, gflop=4 * n * n * d / 1e9, naive=want["naive"] / MIB,
                        naive_intensity=intensity(n, d, want["naive"]), tiled=want["tiled"] / MIB,
                        tiled_intensity=intensity(n, d, want["tiled"]))
                     + traffic_slip(got["tiled"], want["tiled"], n, d, dtype_bytes))


def traffic_slip(tiled, right: int, n: int, d: int, dtype_bytes: int) -> str:
    """What a wrong tiled traffic leaves out, when it equals a known slip; else nothing."""
    slips = {right - 4 * n: tr("the float32 lse is written too, 4 bytes a query"),
             4 * n * d * dtype_bytes + 4 * n: tr("every query block reads all of K and V, not only the first")}
    return tr("; {slip}", slip=slips[tiled]) if tiled != right and tiled in slips else ""


@check("hbm_bytes_bad_arguments", points=1, hint="attention_hbm_bytes",
       title="attention_hbm_bytes raises ValueError naming a size below 1")
def test_hbm_bytes_bad_arguments(sub):
    for args, name in (((0, 64, 64), "n"), ((64, 0, 64), "d"), ((64, 64, 0), "block_q"),
                       ((64, 64, 64, 0), "dtype_bytes")):
        message = expect_raises(ValueError, sub.attention_hbm_bytes, *args)
        if not re.search(rf"\b{name}\b", message):
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}", call=sub.last_call,
                    message=message, name=name))


TRITON_CASES = {  # key: ((B, H, Tq, Tk, D), causal)
    "triton_square": ((1, 2, 40, 40, 32), False),
    "triton_causal": ((1, 1, 24, 70, 64), True),
    "triton_decode": ((2, 1, 1, 33, 16), True),
}


@check("triton_kernel", points=3, hint="flash_attention_triton",
       title="flash_attention_triton (float16) matches exact attention, causal or not, Tq <= Tk")
def test_triton_kernel(sub):
    require("triton", "gpu")
    device = "cuda" if torch.cuda.is_available() else "cpu"  # on CPU the child runs TRITON_INTERPRET=1
    sub.set_timeout(30)
    for salt, (key, (shape, causal)) in enumerate(TRITON_CASES.items(), start=120):
        q, k, v = lattice_qkv(*shape, salt=salt, dtype=torch.float16)
        case = golden(key, lambda: expected(reference("flash_attention"), q, k, v, causal, diagnose_tiles=False))
        result = sub.flash_attention_triton(q.to(device), k.to(device), v.to(device), causal=causal)
        expect_attention(result, case, sub.last_call, torch.float16)
