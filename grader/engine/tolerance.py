"""Tolerances that follow the dtype, calibrated from the reference's own error against float64."""
from __future__ import annotations

import torch

SAFETY = 4.0


def eps(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).eps


def tolerance(exact: torch.Tensor, approx: torch.Tensor, floor: float) -> tuple[float, float]:
    """(atol, rtol): `SAFETY` times the reference's worst error in a low precision (`approx`) against float64
    (`exact`), never below `floor`; rtol is the dtype's epsilon times `SAFETY`.

    A correct submission computes in the same precision, so its error has the same order as the reference's.
    """
    exact = exact.to(torch.float64)
    finite = torch.isfinite(exact)
    err = ((approx.to(torch.float64) - exact).abs() * finite).nan_to_num(0.0)
    worst = float(err.max()) if err.numel() else 0.0
    return max(SAFETY * worst, floor), SAFETY * eps(approx.dtype)
