"""How latency checks compare schedules, critical paths and what-ifs, and word what differs.

Seconds compare with the contract's relative tolerance of 1e-9 (plus 1e-12 s for times near 0): a correct
submission may add the same durations in another order. Paths compare exactly: the tie rule fixes them.
"""
from grader.engine import SubmissionRaised, expect_type, fail, tr, within
from grader.engine.checks import type_name

RTOL = 1e-9
ATOL = 1e-12


def is_seconds(value) -> bool:
    """Whether `value` is an int or a float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same_seconds(actual, expected) -> bool:
    """Whether `actual` is a number within the tolerance of `expected`."""
    return is_seconds(actual) and within(actual, expected, atol=ATOL, rtol=RTOL)


def schedule_difference(actual, expected: dict) -> str | None:
    """None when `actual` is `expected`'s {step: (start, end)}; otherwise the first difference, in words."""
    if not isinstance(actual, dict):
        return tr("returned {type}, expected a dict {{step: (start, end)}}", type=type_name(actual))
    if set(actual) != set(expected):
        missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected), key=repr)
        return tr("steps missing: {missing}, steps not in the task: {extra}", missing=missing, extra=extra)
    for step, (start, end) in expected.items():
        got = actual[step]
        if not isinstance(got, (list, tuple)) or len(got) != 2:
            return tr("[{step!r}] = {got!r}, expected a pair (start, end)", step=step, got=got)
        if not (same_seconds(got[0], start) and same_seconds(got[1], end)):
            return tr("[{step!r}] = {got!r}, expected {expected!r}", step=step, got=tuple(got), expected=(start, end))
    return None


def path_difference(actual, expected: list) -> str | None:
    """None when `actual` is the list of step names `expected`; otherwise what differs."""
    if not isinstance(actual, (list, tuple)) or not all(isinstance(s, str) for s in actual):
        return tr("path {path} is not a list of step names", path=short(actual))
    if list(actual) != expected:
        return tr("path {path!r}, expected {expected!r}", path=list(actual), expected=expected)
    return None


def critical_difference(actual, expected: tuple) -> str | None:
    """None when `actual` is the (total, path) `expected`; otherwise what differs."""
    if not isinstance(actual, (list, tuple)) or len(actual) != 2:
        return tr("returned {value}, expected a pair (total, path)", value=short(actual))
    total, path = expected
    if not same_seconds(actual[0], total):
        return tr("total {total!r}, expected {expected!r}", total=actual[0], expected=total)
    return path_difference(actual[1], list(path))


def what_if_difference(actual, expected: dict) -> str | None:
    """None when `actual` has `expected`'s total, saving and path; otherwise what differs."""
    if not isinstance(actual, dict) or not {"total", "saving", "path"} <= actual.keys():
        return tr("returned {value}, expected a dict with 'total', 'saving' and 'path'", value=short(actual))
    for key in ("total", "saving"):
        if not same_seconds(actual[key], expected[key]):
            return tr("{key} {got!r}, expected {expected!r}", key=key, got=actual[key], expected=expected[key])
    return path_difference(actual["path"], list(expected["path"]))


def expect_result(actual, expected, what: str, difference, misconception=None) -> None:
    """Fail unless `difference(actual, expected)` is None; `misconception(actual)` names the mistake it shows."""
    problem = difference(actual, expected)
    if problem is not None:
        fail(tr("{what}: {problem}", what=what, problem=problem), misconception(actual) if misconception else None)


def expect_seconds(actual, expected: float, what: str, misconception: str | None = None) -> None:
    """Fail unless `actual` is `expected` seconds; `misconception` is the id the wrong value shows, if any."""
    expect_type(actual, (float, int), what)
    if not same_seconds(actual, expected):
        fail(tr("{what} returned {got!r}, expected {expected!r} (relative tolerance {rtol:g})", what=what, got=actual,
                expected=expected, rtol=RTOL), misconception)


def expect_value_error(fn, args: tuple, what: str, names: list, returned: str | None = None) -> str:
    """Require `fn(*args)` to raise ValueError whose message names one of `names`; returns the message.

    `returned` is the misconception that a normal return shows (None: no known one).
    """
    try:
        result = fn(*args)
    except SubmissionRaised as raised:
        if "ValueError" not in raised.type_names:
            fail(tr("{call} raised {type}: {message}; expected {expected}", call=what, type=raised.type_name,
                    message=raised.message, expected="ValueError"))
        message = raised.message
    else:
        fail(tr("{what} returned {result}; expected ValueError", what=what, result=short(result)), returned)
    if names and not any(name in message for name in names):
        fail(tr("{what} raised ValueError({message!r}); the message should name {names}", what=what, message=message,
                names=tr(" or ").join(map(repr, names))))
    return message


def short(value) -> str:
    """`repr(value)`, cut to 120 characters."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def text_of(durations: dict, deps: dict, order: dict | None) -> str:
    """A task's arguments as they would be written in a call."""
    return f"{durations!r}, {deps!r}" + ("" if order is None else f", order={order!r}")
