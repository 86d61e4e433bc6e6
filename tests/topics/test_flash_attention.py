"""Project tests for the flash_attention topic: the float64 oracle against PyTorch's attention, the reference and
solution tiled algorithms against the oracle, the Triton FlashAttention-2 kernels (forward and backward) under
TRITON_INTERPRET=1, the check inputs, the stub, the hints and the mutants."""
import importlib.util
import math
import os
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

os.environ.setdefault("TRITON_INTERPRET", "1")  # before any kernel is defined; conftest does the same
os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")  # on a GPU, float32 tl.dot without TF32 rounding

from exercises import flash_attention as stub  # noqa: E402
from grader.checks.flash_attention.expect import expected  # noqa: E402
from grader.checks.flash_attention.inputs import lattice, lattice_qkv, with_row_scores  # noqa: E402
from grader.checks.flash_attention.misconceptions import no_rescale, top_left_causal  # noqa: E402
from grader.engine import mismatch  # noqa: E402
from mutated import mutant  # noqa: E402
from reference import flash_attention as ref  # noqa: E402
from solutions import flash_attention as sol  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "flash_attention"
MISCONCEPTIONS = {"no_rescale", "materializes_full_scores", "causal_alignment", "lse_without_max", "unstable_softmax"}
QUICK = settings(max_examples=30, deadline=None)
DEVICE = "cuda" if torch.cuda.is_available() and os.environ["TRITON_INTERPRET"] != "1" else "cpu"


@st.composite
def shapes(draw, causal: bool) -> tuple:
    """(B, H, Tq, Tk, D): ragged lengths, Tq <= Tk when causal, head dims 16-128 (not all powers of two)."""
    tk = draw(st.integers(1, 70))
    tq = draw(st.integers(1, tk)) if causal else draw(st.integers(1, 70))
    return draw(st.integers(1, 2)), draw(st.integers(1, 2)), tq, tk, draw(st.sampled_from([16, 24, 64, 80, 128]))


def qkv(shape: tuple, seed: int, dtype=torch.float64, scale: float = 1.0):
    """Gaussian q (times `scale`), k, v of `shape` = (B, H, Tq, Tk, D)."""
    b, h, tq, tk, d = shape
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, tq, d, generator=g, dtype=torch.float64) * scale
    k = torch.randn(b, h, tk, d, generator=g, dtype=torch.float64)
    v = torch.randn(b, h, tk, d, generator=g, dtype=torch.float64)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def bottom_right_mask(tq: int, tk: int) -> torch.Tensor:
    """Independent construction of the causal mask: the lower triangle shifted right by Tk - Tq."""
    return torch.ones(tq, tk, dtype=torch.bool).tril(diagonal=tk - tq)


# --- the oracle -----------------------------------------------------------------------------------------------

@QUICK
@given(shape=st.booleans().flatmap(lambda c: st.tuples(st.just(c), shapes(c))), seed=st.integers(0, 2**16))
def test_oracle_is_pytorch_attention(shape, seed):
    causal, shape = shape
    q, k, v = qkv(shape, seed)
    o, lse = ref.attention(q, k, v, causal)
    mask = bottom_right_mask(q.shape[2], k.shape[2]) if causal else None
    torch.testing.assert_close(o, torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                               atol=1e-12, rtol=1e-12)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(~mask, -math.inf)
    torch.testing.assert_close(lse, torch.exp(scores).sum(-1).log(), atol=1e-12, rtol=1e-12)  # small scores


def test_oracle_decode_query_sees_every_key():
    q, k, v = qkv((1, 2, 1, 9, 16), seed=3)
    assert torch.equal(ref.attention(q, k, v, causal=True)[0], ref.attention(q, k, v, causal=False)[0])


def test_torch_names_both_causal_conventions_on_a_3x5_case():
    # issue 26, point 14, as the stub, the notebook and causal_alignment's text say: PyTorch's is_causal=True is
    # top-left (query i sees keys j <= i); the exercise's bottom-right mask is torch's causal_lower_right (and
    # FlashAttention's since 2.1); the two differ when Tq < Tk
    from torch.nn.attention.bias import causal_lower_right

    q, k, v = qkv((1, 1, 3, 5, 4), seed=7)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    is_causal = sdpa(q, k, v, is_causal=True)
    torch.testing.assert_close(is_causal, top_left_causal(ref, q, k, v)[0], atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(sdpa(q, k, v, attn_mask=causal_lower_right(3, 5)), ref.attention(q, k, v, True)[0],
                               atol=1e-12, rtol=1e-12)
    assert (is_causal - ref.attention(q, k, v, True)[0]).abs().max() > 0.1


def test_memory_model_matches_the_contract():
    # 8192 x 8192 float32 scores = 2**26 * 4 bytes = 256 MiB; a 64 x 64 tile 16 KiB; the state of 64 query rows
    # at d = 64: 64 * 64 accumulator entries + 64 maxima + 64 sums = 4224 float32 = 16,896 bytes
    want = {"naive_scores": 256 * 2**20, "tiled_scores": 64 * 64 * 4, "tiled_state": 16_896}
    # d = 8, 2-byte scores, 64 x 16 tiles of a 100 x 30 matrix: 6000, 2048, and (64 * 8 + 128) * 4 = 2560
    small = {"naive_scores": 6000, "tiled_scores": 2048, "tiled_state": 2560}
    for module in (ref, sol):
        assert module.attention_memory_bytes(8192, 8192, 64, 64, 64) == want
        assert module.attention_memory_bytes(100, 30, 8, 64, 16, 2) == small
        with pytest.raises(ValueError, match="block_k"):
            module.attention_memory_bytes(8, 8, 8, 4, 0)
        with pytest.raises(ValueError, match=r"\bd\b"):
            module.attention_memory_bytes(8, 8, 0, 4, 4)


def test_hbm_model_worked_by_hand():
    # n = 8192, d = 128, block_q = 128, 2 bytes. Naive: Q, K read and S written (2 * 2**20 + 2**26 elements),
    # S read and P written (2 * 2**26), P and V read and O written (2**26 + 2 * 2**20): 4 * 2**20 + 4 * 2**26
    # elements = 272,629,760, times 2 = 545,259,520 bytes. Tiled: 64 query blocks; Q read and O written once
    # (2 * 2**20), K and V read 64 times (128 * 2**20): 136 * 2**20 elements = 272,629,760 bytes, plus 8192 * 4
    # bytes of lse = 272,662,528.
    # With block_q = 16: 512 query blocks, (2 + 1024) * 2**20 elements * 2 bytes + 32,768 = 2,151,710,720 bytes.
    # One query block (n = 200 <= block_q = 256, d = 64, 4 bytes): tiled = 4 * 200 * 64 * 4 + 800 = 205,600;
    # naive = (4 * 200 * 64 + 4 * 200**2) * 4 = 844,800.
    for module in (ref, sol):
        assert module.attention_hbm_bytes(8192, 128, 128) == {"naive": 545_259_520, "tiled": 272_662_528}
        assert module.attention_hbm_bytes(8192, 128, 16) == {"naive": 545_259_520, "tiled": 2_151_710_720}
        assert module.attention_hbm_bytes(200, 64, 256, 4) == {"naive": 844_800, "tiled": 205_600}
        for args, name in (((0, 8, 8), "n"), ((8, 8, 0), "block_q"), ((8, 8, 8, 0), "dtype_bytes")):
            with pytest.raises(ValueError, match=name):
                module.attention_hbm_bytes(*args)


@QUICK
@given(n=st.integers(1, 2**17), d=st.integers(1, 256), block_q=st.integers(1, 4096), dtype_bytes=st.integers(1, 8))
def test_hbm_tiled_pass_reads_kv_once_per_query_block(n, d, block_q, dtype_bytes):
    got = ref.attention_hbm_bytes(n, d, block_q, dtype_bytes)
    assert sol.attention_hbm_bytes(n, d, block_q, dtype_bytes) == got
    blocks = len(range(0, n, block_q))  # the query blocks a tiled loop visits
    assert got["tiled"] - 4 * n == (2 + 2 * blocks) * n * d * dtype_bytes
    assert got["naive"] == 2 * (n * d + n * n) * dtype_bytes + 2 * (n * n + n * d) * dtype_bytes


def test_slip_notes_name_what_is_left_out():
    from grader.checks.flash_attention.test_public import state_slip, traffic_slip

    args = (8192, 8192, 64, 64, 64, 2)  # right state: (64 * 64 + 128) * 4 = 16,896
    assert state_slip(16_896, *args) == ""
    assert "max and sum" in state_slip(64 * 64 * 4, *args)
    assert "accumulator" in state_slip(128 * 4, *args)
    assert "float32" in state_slip((64 * 64 + 128) * 2, *args)
    right = ref.attention_hbm_bytes(8192, 128, 128)["tiled"]
    assert "lse" in traffic_slip(right - 4 * 8192, right, 8192, 128, 2)
    assert "all of K and V" in traffic_slip(4 * 8192 * 128 * 2 + 4 * 8192, right, 8192, 128, 2)
    assert traffic_slip(right, right, 8192, 128, 2) == ""


def test_hbm_public_cases_teach_where_tiling_wins():
    from grader.checks.flash_attention.test_public import HBM_CASES

    verdicts = {key: ref.attention_hbm_bytes(*args)["tiled"] < ref.attention_hbm_bytes(*args)["naive"]
                for key, args in HBM_CASES.items()}
    assert verdicts == {"hbm_8k_d128_bq128": True, "hbm_8k_d64_bq128": True, "hbm_8k_d128_bq16": False,
                        "hbm_200_one_block": True}


def test_notebook_states_the_hbm_figures_the_reference_gives():
    # issue 26, point 10: every figure the notebook's HBM experiment states, recomputed (n = 8192, d = 128, bf16)
    from grader.learner.notebooks.topics import flash_attention as notebook

    text = " ".join(" ".join(prose.split()) for prose, _code in notebook.EXPERIMENTS)
    moved = {b: ref.attention_hbm_bytes(8192, 128, b) for b in (16, 32, 64, 128)}
    naive = moved[16]["naive"]
    assert f"pass moves {naive / 1e6:.0f} MB" in text
    assert f"{moved[16]['tiled'] / 1e6:,.0f} MB at block_q = 16, {moved[16]['tiled'] / naive:.1f} times" in text
    for b in (32, 64, 128):
        assert f"{moved[b]['tiled'] / 1e6:,.0f} MB at {b}" in text
    assert moved[64]["tiled"] < naive < moved[32]["tiled"]                 # "541 MB at 64, just below it"
    assert moved[128]["tiled"] / naive == pytest.approx(0.5, abs=0.005)   # "273 MB at 128, half of it"
    assert f"4·T²·d = {4 * 8192**2 * 128 / 1e9:.1f} GFLOP" in text
    assert f"K and V take {2 * 8192 * 128 * 2 // 2**20} MiB" in text     # one head's K and V in bf16


# --- the tiled algorithms -----------------------------------------------------------------------------------

TILED = [pytest.param(ref.tiled_attention, id="reference"), pytest.param(sol.tiled_attention, id="solution")]


@pytest.mark.parametrize("tiled", TILED)
@QUICK
@given(shape=st.booleans().flatmap(lambda c: st.tuples(st.just(c), shapes(c))), seed=st.integers(0, 2**16),
       block_q=st.integers(1, 40), block_k=st.integers(1, 40))
def test_tiled_matches_oracle_in_float32(tiled, shape, seed, block_q, block_k):
    causal, shape = shape
    q, k, v = qkv(shape, seed, torch.float32)
    o, lse = tiled(q, k, v, causal, block_q, block_k)
    want_o, want_lse = ref.attention(q, k, v, causal)
    assert o.dtype == torch.float32 and lse.shape == q.shape[:3]
    assert mismatch(o, want_o, 2e-6, 2e-6) is None
    assert mismatch(lse, want_lse, 2e-6, 2e-6) is None


@pytest.mark.parametrize("tiled", TILED)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_tiled_low_precision_stays_within_a_few_rounding_steps(tiled, dtype):
    q, k, v = qkv((2, 2, 37, 53, 80), seed=5, dtype=dtype)
    o, lse = tiled(q, k, v, True, 16, 16)
    want_o, want_lse = ref.attention(q, k, v, True)
    eps = torch.finfo(dtype).eps
    assert o.dtype == dtype
    assert mismatch(o, want_o, 4 * eps, 4 * eps) is None  # |o| <= max|v| ~ 4: a couple of output ulps
    assert mismatch(lse, want_lse, 1e-5, 1e-5) is None  # float32 accumulation


@pytest.mark.parametrize("tiled", TILED)
def test_tiled_survives_scores_that_overflow_exp(tiled):
    q, k, v = qkv((1, 2, 6, 40, 64), seed=9, dtype=torch.float32, scale=120.0)  # scores in the hundreds
    o, lse = tiled(q, k, v, False, 8, 16)
    want_o, want_lse = ref.attention(q, k, v)
    top = float(ref.scaled_scores(q, k).abs().max())
    assert want_lse.min() > 100  # exp overflows float32 above 88.7
    # rounding a float32 score s costs eps * |s| in its exponent
    eps = torch.finfo(torch.float32).eps
    assert mismatch(o, want_o, 4 * eps * top * float(v.abs().max()), 0) is None
    assert mismatch(lse, want_lse, 4 * eps * top, 0) is None


def test_tiled_rejects_bad_arguments():
    q, k, v = qkv((1, 1, 4, 4, 16), seed=0, dtype=torch.float32)
    for module in (ref, sol):
        with pytest.raises(ValueError, match="block_q"):
            module.tiled_attention(q, k, v, block_q=0)
        with pytest.raises(ValueError, match=r"\bq\b"):
            module.tiled_attention(q[0], k, v)
        with pytest.raises(ValueError, match=r"\bv\b"):
            module.tiled_attention(q, k, v[:, :, :3])
        with pytest.raises(ValueError, match="causal"):  # 4 queries, 3 keys: query 0 would see no key
            module.tiled_attention(q, k[:, :, :3], v[:, :, :3], causal=True)
        module.tiled_attention(q, k[:, :, :3], v[:, :, :3])  # without the mask, Tq > Tk is fine


def test_stub_says_when_a_causal_call_raises():
    assert "causal with Tq > Tk" in " ".join(stub.tiled_attention.__doc__.split())


# --- Triton kernels (interpreter on CPU) --------------------------------------------------------------------

KERNEL_CASES = [  # (B, H, Tq, Tk, D), causal, dtype
    ((1, 2, 37, 37, 32), False, torch.float32),
    ((2, 1, 37, 37, 32), True, torch.float32),
    ((1, 2, 5, 100, 16), True, torch.float32),
    ((1, 1, 1, 70, 16), True, torch.float32),
    ((1, 1, 70, 130, 80), True, torch.float32),
    ((1, 1, 70, 130, 128), False, torch.float16),
    ((1, 2, 40, 90, 64), True, torch.float16),
]


@pytest.mark.parametrize("shape, causal, dtype", KERNEL_CASES)
def test_triton_flash_attention_forward_and_backward(shape, causal, dtype):
    pytest.importorskip("triton")
    from reference.kernels.flash_attention import flash_attention

    q, k, v = (t.to(DEVICE).requires_grad_() for t in qkv(shape, seed=11, dtype=dtype))
    do = torch.randn(q.shape, generator=torch.Generator().manual_seed(12)).to(dtype).to(DEVICE)
    o, lse = flash_attention(q, k, v, causal)
    o.backward(do)
    exact = [t.detach().cpu().double().requires_grad_() for t in (q, k, v)]
    want_o, want_lse = ref.attention(*exact, causal)
    want_o.backward(do.cpu().double())
    # float32: a few ulps; float16: the FlashAttention-2 roundings of p and dS to float16 (2**-11 relative)
    tol = 2e-5 if dtype == torch.float32 else 4e-3
    assert o.dtype == dtype and lse.dtype == torch.float32
    for got, want in ((o, want_o), (lse, want_lse), (q.grad, exact[0].grad), (k.grad, exact[1].grad),
                      (v.grad, exact[2].grad)):
        assert mismatch(got.detach().cpu(), want.detach(), tol, tol) is None


def test_triton_solution_kernel_matches_oracle():
    pytest.importorskip("triton")
    for shape, causal, dtype in KERNEL_CASES:
        q, k, v = qkv(shape, seed=13, dtype=dtype)
        o, lse = sol.flash_attention_triton(q.to(DEVICE), k.to(DEVICE), v.to(DEVICE), causal)
        want_o, want_lse = ref.attention(q, k, v, causal)
        tol = 2e-5 if dtype == torch.float32 else 4e-3
        assert mismatch(o.cpu(), want_o, tol, tol) is None and mismatch(lse.cpu(), want_lse, tol, tol) is None


# --- check inputs ---------------------------------------------------------------------------------------------

def test_lattice_is_the_documented_hash_and_exact_in_every_dtype():
    def value(i: int, salt: int) -> float:  # the hash in plain Python integers
        h = ((i + salt * 1_000_003) * 2654435761) % 2**32
        h = ((h ^ (h >> 15)) * 2246822519) % 2**32
        return ((h >> 16) % 128 - 64) / 32

    x = lattice((3, 5), salt=7)
    assert x.flatten().tolist() == [value(i, 7) for i in range(15)]
    for dtype in (torch.float16, torch.bfloat16):
        assert torch.equal(x.to(dtype).float(), x)


def test_row_scores_are_exact_in_float32():
    q, k, v = lattice_qkv(1, 1, 4, 9, 64, salt=3)
    q, k = with_row_scores(q, k, torch.tensor([900, -900, 0, 150]))
    assert torch.equal((q @ k.transpose(-1, -2) / 8).double(), ref.scaled_scores(q, k))
    assert ref.scaled_scores(q, k).amax(-1)[0, 0, 0] > 890


# --- stub, hints, mutants ---------------------------------------------------------------------------------------

def test_modules_import_without_triton(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)  # `import triton` now raises ImportError
    for path in (ROOT / "exercises" / "flash_attention.py", ROOT / "solutions" / "flash_attention.py"):
        spec = importlib.util.spec_from_file_location(f"no_triton_{path.parent.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert callable(module.flash_attention_triton)


@pytest.mark.parametrize("call", [
    lambda: stub.tiled_attention(*qkv((1, 1, 2, 2, 16), 0, torch.float32)),
    lambda: stub.attention_memory_bytes(8, 8, 8, 4, 4),
    lambda: stub.attention_hbm_bytes(8, 8, 4),
    lambda: stub.flash_attention_triton(*qkv((1, 1, 2, 2, 16), 0, torch.float32)),
])
def test_stub_raises_not_implemented(call):
    with pytest.raises(NotImplementedError, match="TODO"):
        call()



def test_mutants_show_their_misconception():
    for name in MISCONCEPTIONS:
        assert (MUTANTS / f"{name}.py").read_text().startswith('"""Bug: ')
    q, k, v = qkv((1, 2, 6, 40, 32), seed=21, dtype=torch.float32)
    want_o, want_lse = ref.attention(q, k, v, causal=True)

    o, _ = mutant("flash_attention", "no_rescale").tiled_attention(q, k, v, True, 4, 8)
    assert mismatch(o, no_rescale(ref, q, k, v, True, 8)[0], 1e-5, 1e-5) is None
    assert mismatch(o, want_o, 1e-2, 1e-2) is not None

    o, _ = mutant("flash_attention", "causal_alignment").tiled_attention(q, k, v, True, 4, 8)
    assert mismatch(o, top_left_causal(ref, q, k, v)[0], 1e-5, 1e-5) is None

    big_q = q * 40  # scores in the hundreds
    o, lse = mutant("flash_attention", "lse_without_max").tiled_attention(big_q, k, v, False, 4, 8)
    assert torch.isfinite(o).all() and not torch.isfinite(lse).all()
    o, _ = mutant("flash_attention", "unstable_softmax").tiled_attention(big_q, k, v, False, 4, 8)
    assert not torch.isfinite(o).all()

    # The naive mutant is right but allocates Tq x Tk scores; the check sees that through the memory cap.
    o, lse = mutant("flash_attention", "materializes_full_scores").tiled_attention(q, k, v, True, 4, 8)
    assert mismatch(o, want_o, 1e-5, 1e-5) is None and mismatch(lse, want_lse, 1e-5, 1e-5) is None


def test_checks_diagnose_from_the_reference_case():
    q, k, v = lattice_qkv(1, 1, 3, 20, 16, salt=5)
    case = expected(ref, q, k, v, True, 4, 8)
    assert [mid for mid, _ in case["wrong"]] == ["no_rescale"] * 3 + ["causal_alignment", "lse_without_max"]
    atol, rtol = case["tol_o"]
    assert 0 < atol < 1e-4 and 0 < rtol < 1e-5


def test_notebook_closes_on_what_the_topic_does_not_do():
    from grader.learner.notebooks.build import build

    last = build("flash_attention").cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## What this does not do")
    # the chapter's completion standard: complexity, IO and end-to-end experience apart; no understanding of
    # arbitrarily long input
    phrases = ("Everything else in a model's forward pass is untouched", "tool calls", "The complexity does not change",
               "Its IO changes", "FlashAttention does not make a model understand arbitrarily long input")
    assert all(phrase in " ".join(last.source.split()) for phrase in phrases)
