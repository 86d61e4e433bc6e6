"""The check-author API: the `@check` decorator, failures with misconception ids, and comparison helpers."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import pytest
import torch

from grader.language import tr
from grader.sandbox.codec import Opaque
from grader.wording import count


@dataclass(frozen=True)
class CheckMeta:
    """What the grader needs to know about a check besides its code."""
    name: str
    points: int
    hint: str | None
    title: str
    misconception: str | None


def check(name: str, points: int, hint: str | None = None, title: str = "", misconception: str | None = None):
    """Mark a pytest test as a scored check (see grader/CHECKS.md)."""
    assert isinstance(points, int) and points > 0, "points must be a positive int"

    def mark(fn):
        fn.__infergrade__ = CheckMeta(name, points, hint, title or name.replace("_", " "), misconception)
        return fn

    return mark


def require(module: str, extra: str) -> None:
    """Skip the check, saying what to install, when `module` cannot be imported here (a skip scores 0)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        pytest.skip(tr("needs {module}, which is not installed here: pip install 'infergrade[{extra}]'",
                       module=module, extra=extra))


class CheckFailure(AssertionError):
    """A check failed; `misconception` names the known mistake the output shows, if any."""

    def __init__(self, message: str, misconception: str | None = None):
        super().__init__(message)
        self.misconception = misconception


def fail(message: str, misconception: str | None = None):
    raise CheckFailure(message, misconception)


def more_failing(extra: int) -> str:
    """What follows the one failing case a check shows when `extra` others failed too: ' (and 1 more failing
    case)', ' (and 3 more failing cases)'; '' when it was the only one."""
    return tr(" (and {cases})", cases=count(extra, "more failing case")) if extra > 0 else ""


def type_name(x) -> str:
    if isinstance(x, Opaque):
        return x.type_name
    return "Tensor" if isinstance(x, torch.Tensor) else type(x).__name__


def expect_type(value, types, what: str):
    """Fail unless `value` is one of `types` (bool is not accepted as int)."""
    types = types if isinstance(types, tuple) else (types,)
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        wanted = tr(" or ").join("Tensor" if t is torch.Tensor else t.__name__ for t in types)
        fail(tr("{what} returned {type} {value}, expected {wanted}", what=what, type=type_name(value),
                value=_short(value), wanted=wanted))
    return value


def expect_length(value, what: str, count: int | None = None, at_most: int | None = None) -> int:
    """The number of items of a reply (a list, tuple, dict or str; a tensor's elements), failing unless it is
    `count` or at most `at_most`: checked before a check converts the reply, so that a huge one costs nothing."""
    if not isinstance(value, (list, tuple, dict, str, torch.Tensor)):
        fail(tr("{what} returned {type}, expected a sequence", what=what, type=type_name(value)))
    size = value.numel() if isinstance(value, torch.Tensor) else len(value)
    if (count is not None and size != count) or (at_most is not None and size > at_most):
        said = dict(what=what, type=type_name(value), size=size, count=count, at_most=at_most)
        fail(tr("{what} returned {type} of {size} items, expected exactly {count}", **said) if count is not None
             else tr("{what} returned {type} of {size} items, expected at most {at_most}", **said))
    return size


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def diagnose(actual, candidates: dict, close) -> str | None:
    """The first misconception id whose predicted output `close(actual, predicted)` accepts."""
    for mid, predicted in (candidates or {}).items():
        try:
            if close(actual, predicted):
                return mid
        except Exception:  # noqa: BLE001 - a prediction of another shape simply does not match
            continue
    return None


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and bool(torch.equal(a, b) or _nan_equal(a, b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _nan_equal(a, b) -> bool:
    return a.is_floating_point() and bool(torch.equal(torch.nan_to_num(a, nan=0.5), torch.nan_to_num(b, nan=0.5))
                                          and torch.equal(a.isnan(), b.isnan()))


def expect_equal(actual, expected, what: str, misconception: str | None = None, misconceptions: dict | None = None):
    """Exact equality of plain data or tensors (type, shape, dtype, values)."""
    if _same(actual, expected):
        return
    found = misconception or diagnose(actual, misconceptions, _same)
    fail(tr("{what}: expected {expected}, got {got}", what=what, expected=_show(expected), got=_show(actual)), found)


def _show(x) -> str:
    if isinstance(x, torch.Tensor):
        dtype = str(x.dtype).removeprefix("torch.")
        if x.numel() <= 16:
            return f"tensor({x.tolist()}, {dtype})"
        return f"Tensor{list(x.shape)} {dtype}"
    return _short(x)


def expect_close(actual, expected: torch.Tensor, what: str, atol: float, rtol: float, dtype=None,
                 misconceptions: dict | None = None, misconception: str | None = None):
    """Compare a tensor result with an expected one within |a - e| <= atol + rtol * |e| (see CHECKS.md)."""
    expect_type(actual, torch.Tensor, what)
    if tuple(actual.shape) != tuple(expected.shape):
        fail(tr("{what} returned shape {shape}, expected {expected}", what=what, shape=list(actual.shape),
                expected=list(expected.shape)))
    if dtype is not None and actual.dtype != dtype:
        fail(tr("{what} returned dtype {dtype}, expected {expected}", what=what, dtype=actual.dtype, expected=dtype))
    problem = mismatch(actual, expected, atol, rtol)
    if problem is None:
        return
    predicted = misconception or diagnose(
        actual, misconceptions, lambda a, p: mismatch(a, p.to(expected.dtype), atol, rtol) is None)
    fail(tr("{what}: {problem}", what=what, problem=problem), predicted)


def mismatch(actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> str | None:
    """None when close; otherwise a sentence with the worst error, where it is, and the tolerance."""
    a = actual.detach().to(torch.float64)
    e = expected.detach().to(torch.float64)
    if a.shape != e.shape:
        return tr("shape {shape} != {expected}", shape=list(a.shape), expected=list(e.shape))
    for label, mask_fn in (("nan", torch.isnan), ("+inf", lambda t: t == float("inf")),
                           ("-inf", lambda t: t == float("-inf"))):
        ma, me = mask_fn(a), mask_fn(e)
        if not torch.equal(ma, me):
            idx = tuple(torch.nonzero(ma != me)[0].tolist())
            said = dict(index=list(idx), expected=e[idx].item(), got=a[idx].item(), label=label)
            return (tr("at index {index} expected {expected:.6g}, got {got:.6g} ({label} where it should be)", **said)
                    if bool(me[idx]) else
                    tr("at index {index} expected {expected:.6g}, got {got:.6g} ({label} where it should not be)",
                       **said))
    finite = torch.isfinite(e)
    err = torch.where(finite, (a - e).abs(), torch.zeros_like(a))
    allowed = atol + rtol * e.abs().where(finite, torch.zeros_like(e))
    excess = err - allowed
    if excess.numel() == 0 or excess.max() <= 0:
        return None
    idx = tuple(torch.nonzero(excess == excess.max())[0].tolist())
    return tr("worst error {error:.3g} at index {index}: expected {expected:.8g}, got {got:.8g} (tolerance "
              "atol={atol:.3g} + rtol={rtol:.3g}·|expected|; {outside} of {elements} elements outside it)",
              error=err[idx].item(), index=list(idx), expected=e[idx].item(), got=a[idx].item(), atol=atol, rtol=rtol,
              outside=int((excess > 0).sum()), elements=excess.numel())


def expect_raises(exc_type: type, fn, *args, **kwargs) -> str:
    """Call `fn` and require it to raise `exc_type` (matched by class name and bases); returns the message."""
    from grader.sandbox.failures import SubmissionRaised

    try:
        result = fn(*args, **kwargs)
    except SubmissionRaised as raised:
        if exc_type.__name__ in raised.type_names:
            return raised.message
        fail(tr("{call} raised {type}: {message}; expected {expected}", call=raised.call, type=raised.type_name,
                message=raised.message, expected=exc_type.__name__))
    owner = getattr(fn, "owner", None)
    what = owner.last_call if owner is not None else getattr(fn, "__name__", tr("the call"))
    fail(tr("{what} returned {result}; expected it to raise {expected}", what=what, result=_short(result),
            expected=exc_type.__name__))
