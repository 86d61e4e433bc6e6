"""How flash_attention checks compare a returned (o, lse) with the reference, and with which tolerances."""
import torch

from grader.checks.flash_attention.misconceptions import predictions
from grader.engine import CheckFailure, expect_close, expect_type, fail, mismatch, tolerance, tr
from grader.engine.checks import type_name
from grader.engine.tolerance import SAFETY

EXP_LIMIT = 88.0  # exp(x) overflows float32 above ~88.7; exp(-x) underflows to 0 below ~-103


def expected(ref, q, k, v, causal: bool, block_q: int = 64, block_k: int = 64, diagnose_tiles: bool = True) -> dict:
    """The reference's answer to one case: exact o and lse, calibrated tolerances, misconception outputs.

    Tolerances are 4x the reference's own error when it runs the same tiles in q's dtype (`tolerance`), never
    below 4x what rounding the float32 scores alone costs: an error of eps * |s| in every exponent moves o by up
    to about eps * max|s| * max|v| and lse by eps * max|s| (exact-score inputs make the reference's own error
    smaller than that, while a correct kernel that scales by log2(e) for exp2 pays it). lse may come back in
    float32 or in q's dtype, so its tolerance is calibrated on the reference's lse rounded to q's dtype.
    """
    o, lse = ref.attention(q, k, v, causal)
    approx_o, approx_lse = ref.tiled_attention(q, k, v, causal, block_q, block_k)
    approx_lse = approx_lse.to(q.dtype) if q.dtype != torch.float64 else approx_lse
    scores = ref.scaled_scores(q, k, causal)  # [B, H, Tq, Tk], -inf where masked
    row_max = scores.amax(dim=-1)  # [B, H, Tq], finite: every query sees key 0
    score_scale = max(1.0, float(scores.abs().nan_to_num(posinf=0.0).max()))
    ulp = torch.finfo(torch.promote_types(q.dtype, torch.float32)).eps  # scores are accumulated in float32
    return {
        "o": o, "lse": lse, "row_max": row_max,
        "tol_o": tolerance(o, approx_o, SAFETY * ulp * score_scale * float(v.abs().max())),
        "tol_lse": tolerance(lse, approx_lse, SAFETY * ulp * score_scale),
        "wrong": predictions(ref, q, k, v, causal, block_k if diagnose_tiles else None, lse),
    }


def split(result, what: str, dtype: torch.dtype):
    """(o, lse) from a result that must be a pair of tensors: o in the input dtype, lse in it or wider."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        fail(tr("{what} returned {type}, expected a tuple (o, lse)", what=what, type=type_name(result)))
    o, lse = result
    expect_type(o, torch.Tensor, tr("{what} ({part})", what=what, part="o"))
    expect_type(lse, torch.Tensor, tr("{what} ({part})", what=what, part="lse"))
    if o.dtype != dtype:
        fail(tr("{what} returned o of dtype {got}; o must have the input dtype {dtype}", what=what, got=o.dtype,
                dtype=dtype))
    if lse.dtype not in (dtype, torch.float32, torch.float64):
        fail(tr("{what} returned lse of dtype {got}; expected {dtype}, float32 or float64", what=what, got=lse.dtype,
                dtype=dtype))
    return o, lse


def expect_attention(result, case: dict, what: str, dtype: torch.dtype) -> None:
    """Compare o, then lse, with the case; a mismatch names the misconception whose output it matches."""
    o, lse = split(result, what, dtype)
    for name, got in (("o", o), ("lse", lse)):
        atol, rtol = case[f"tol_{name}"]
        try:
            expect_close(got, case[name], tr("{what}: {name}", what=what, name=name), atol, rtol)
        except CheckFailure as failure:
            shown = next((mid for mid, outputs in case["wrong"]
                          if name in outputs and mismatch(got, outputs[name], atol, rtol) is None), None)
            raise CheckFailure(str(failure), shown) from None


def expect_finite(result, case: dict, what: str, dtype: torch.dtype) -> None:
    """o and lse must be finite wherever the reference is; blow-ups confined to rows whose scores exceed what
    exp can represent show an unstable softmax (in o) or an lse taken without the max (in lse)."""
    o, lse = split(result, what, dtype)
    extreme = case["row_max"].abs() > EXP_LIMIT  # [B, H, Tq]
    shows = {"o": "unstable_softmax", "lse": "lse_without_max"}
    for name, got, want in (("o", o, case["o"]), ("lse", lse, case["lse"])):
        if got.shape != want.shape:
            fail(tr("{what} returned {name} of shape {shape}, expected {expected}", what=what, name=name,
                    shape=list(got.shape), expected=list(want.shape)))
        bad = ~torch.isfinite(got) & torch.isfinite(want)
        bad_rows = bad.any(dim=-1) if name == "o" else bad  # [B, H, Tq]
        if bad_rows.any():
            row = tuple(torch.nonzero(bad_rows)[0].tolist())
            fail(tr("{what}: {name} is not finite in {bad} of {rows} query rows, e.g. row {row} whose largest score "
                    "is {score:.0f} (expected {name} there: {expected}, got {got})", what=what, name=name,
                    bad=int(bad_rows.sum()), rows=bad_rows.numel(), row=list(row),
                    score=float(case["row_max"][row]), expected=_first(want[row]), got=_first(got[row])),
                 shows[name] if bool((bad_rows <= extreme).all()) else None)


def _first(t: torch.Tensor) -> str:
    """A tensor's first value, for a message."""
    return f"{float(t.flatten()[0]):.6g}" + ("..." if t.numel() > 1 else "")
