"""Tolerance comparisons that NaN and infinity cannot pass: every comparison a check makes on a submission's
numbers goes through `within` or `outside` (a bare `(a - e).abs() > tol` is False for NaN, and so passes it)."""
from __future__ import annotations

import math

import torch


def outside(actual, expected, atol: float = 0.0, rtol: float = 0.0) -> torch.Tensor:
    """Where `actual` is not within atol + rtol * |expected| of `expected` (numbers or tensors, broadcast).

    A finite expected value accepts only finite values close to it; an infinite one only the same infinity; a NaN
    only NaN. The mask has the broadcast shape of the two.
    """
    a, e = as_float64(actual), as_float64(expected)
    finite = torch.isfinite(e)
    close = torch.isfinite(a) & ((a - e).abs() <= atol + rtol * e.abs())
    same = (a == e) | (a.isnan() & e.isnan())  # the same infinity, or NaN where NaN is expected
    return ~torch.where(finite, close, same)


def within(actual, expected, atol: float = 0.0, rtol: float = 0.0) -> bool:
    """Whether every element of `actual` is within tolerance of `expected` (see `outside`); never for a value that
    is not a number (a bool, a string, None), nor where `actual` would be broadcast up or is empty and `expected`
    not (only `expected` is broadcast: a scalar reply never matches a whole tensor)."""
    if not all(is_numeric(x) for x in (actual, expected)):
        return False
    if not isinstance(actual, torch.Tensor) and not isinstance(expected, torch.Tensor):
        return _number_within(_as_float(actual), _as_float(expected), atol, rtol)  # 30x faster than tensors
    a, e = as_float64(actual), as_float64(expected)
    if not broadcasts_to(e.shape, a.shape) or (a.numel() == 0) != (e.numel() == 0):  # [0, *S] against [*S]
        return False                                                                     # compares nothing
    return not bool(outside(a, e, atol, rtol).any())


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether a tensor of `shape` broadcasts to exactly `target` (torch.broadcast_shapes(shape, target) == target),
    in plain Python: torch's own imports sympy on its first call, 0.4 s of a student's `check`."""
    trailing = zip(reversed(shape), reversed(target))
    return len(shape) <= len(target) and all(s in (1, t) for s, t in trailing)


def _number_within(a: float, e: float, atol: float, rtol: float) -> bool:
    """`within` for two Python numbers, by the same rule as `outside`."""
    if math.isfinite(e):
        return math.isfinite(a) and abs(a - e) <= atol + rtol * abs(e)
    return a == e or (math.isnan(a) and math.isnan(e))


def _as_float(x: int | float) -> float:
    """A Python number as a float; an int too large for one is an infinity (never close to a finite value)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def is_numeric(x) -> bool:
    """An int, a float or a tensor of numbers (not a bool or a bool tensor)."""
    if isinstance(x, torch.Tensor):
        return x.dtype != torch.bool and not x.is_complex()
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def as_float64(x) -> torch.Tensor:
    """A number (an int too large for a float is an infinity: it is never close to a finite value) or a tensor, as
    float64."""
    if isinstance(x, torch.Tensor):
        return x.to(torch.float64)
    return torch.tensor(_as_float(x), dtype=torch.float64)
