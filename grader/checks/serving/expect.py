"""How serving checks compare records and metrics, and name the misconception a wrong answer matches.

Tolerance. Engine times in the checks are whole TICKs or quarter seconds: float64 holds them and every sum of
them exactly, so a correct simulate returns exact times whatever the order of its additions; the relative 1e-9
only forgives an implementation that computes a step's cost in another way (a product of two exact numbers
rounded once, about 1e-16 relative, summed over at most 10^5 steps: under 1e-11). Metrics divide (means, TPOT,
interpolated percentiles, rates): each result is a handful of correctly rounded operations away from the exact
value, about 1e-15 relative, so 1e-9 accepts any order of operations and rejects every misconception (they
change values by far more). The absolute 1e-12 s only matters for values that should be 0.
"""
from grader.engine import diagnose, fail, tr, within
from grader.engine.checks import type_name

RTOL = 1e-9
ATOL = 1e-12
RECORD_KEYS = ("id", "arrival", "first_token", "token_times", "finish", "status", "prompt_tokens",
               "output_tokens", "preemptions")
STAT_FIELDS = ("ttft", "tpot", "itl", "e2e")
RATE_FIELDS = ("request_throughput", "output_throughput", "goodput")


def is_number(x) -> bool:
    """An int or float, not a bool."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def same_value(actual, expected) -> bool:
    """Numbers within the tolerance; None only for None."""
    if expected is None or actual is None:
        return actual is None and expected is None
    return is_number(actual) and within(actual, expected, atol=ATOL, rtol=RTOL)


def record_difference(actual, expected: dict, index: int) -> str | None:
    """None when record `actual` equals `expected`; otherwise the first difference, in words."""
    where = tr("record {index} (id {id!r})", index=index, id=expected["id"])
    if not isinstance(actual, dict):
        return tr("{where} is a {type}, expected a dict", where=where, type=type_name(actual))
    missing = [key for key in RECORD_KEYS if key not in actual]
    if missing:
        return tr("{where} has no {keys}", where=where, keys=", ".join(map(repr, missing)))
    for key in ("id", "status", "prompt_tokens", "output_tokens", "preemptions"):
        if actual[key] != expected[key] or type(actual[key]) is not type(expected[key]):
            return field_of_record(where, key, actual[key], expected[key])
    for key in ("arrival", "first_token", "finish"):
        if not same_value(actual[key], expected[key]):
            return field_of_record(where, key, actual[key], expected[key])
    times, want = actual["token_times"], expected["token_times"]
    if not isinstance(times, (list, tuple)) or len(times) != len(want):
        return tr("{where}: token_times = {actual}, expected {expected}", where=where, actual=short(times),
                  expected=short(want))
    for k, (got, value) in enumerate(zip(times, want)):
        if not same_value(got, value):
            return tr("{where}: token_times[{index}] = {actual!r}, expected {expected!r} (token_times {times})",
                      where=where, index=k, actual=got, expected=value, times=short(want))
    return None


def field_of_record(where: str, key: str, actual, expected) -> str:
    """The difference of one field of a record (`where`), in words."""
    return tr("{where}: {key} = {actual!r}, expected {expected!r}", where=where, key=key, actual=actual,
              expected=expected)


def records_difference(actual, expected: list) -> str | None:
    """None when `actual` is the list of records `expected` (in input order); else the first difference."""
    if not isinstance(actual, (list, tuple)):
        return tr("returned {type}, expected a list of records", type=type_name(actual))
    if len(actual) != len(expected):
        return tr("returned {count} records, expected {expected} (one per request, in input order)",
                  count=len(actual), expected=len(expected))
    for index, (got, want) in enumerate(zip(actual, expected)):
        problem = record_difference(got, want, index)
        if problem is not None:
            return problem
    return None


def expect_records(actual, expected: list, what: str, wrong) -> None:
    """Fail unless `actual` equals the records `expected`, naming the misconception whose records it equals.

    `wrong` is {misconception id: records}, or a function returning it, called only on a failure (the hidden
    checks' predictions cost several engine runs each).
    """
    problem = records_difference(actual, expected)
    if problem is not None:
        fail(tr("{what}: {problem} (relative tolerance {rtol:g})", what=what, problem=problem, rtol=RTOL),
             diagnose(actual, wrong() if callable(wrong) else wrong,
                      lambda got, predicted: records_difference(got, predicted) is None))


def short(values) -> str:
    """A list as written, cut after 8 elements."""
    if not isinstance(values, (list, tuple)) or len(values) <= 8:
        return repr(values)
    return tr("{values} ({count} values)", values=f"[{', '.join(map(repr, values[:8]))}, ...]", count=len(values))


def field_difference(name: str, actual, expected) -> str | None:
    """None when one field of a metrics dict matches; else the difference, in words."""
    if name in STAT_FIELDS:
        if not isinstance(actual, dict) or actual.keys() != expected.keys():
            keys = sorted(actual) if isinstance(actual, dict) else type_name(actual)
            return tr("{name!r} = {keys}, expected a dict with keys {expected}", name=name, keys=keys,
                      expected=list(expected))
        for key, value in expected.items():
            if not same_value(actual[key], value):
                return tr("{name}[{key!r}] = {actual!r}, expected {expected!r}", name=name, key=key,
                          actual=actual[key], expected=value)
        return None
    differs = actual != expected if name == "counts" else not same_value(actual, expected)  # counts: exactly
    if differs:
        return tr("{key!r} = {actual!r}, expected {expected!r}", key=name, actual=actual, expected=expected)
    return None


def metrics_difference(actual, expected: dict) -> tuple[str, str] | None:
    """None when `actual` equals the metrics `expected`; otherwise (field, the first difference in words)."""
    if not isinstance(actual, dict):
        return "", tr("returned {type}, expected a dict", type=type_name(actual))
    missing = [key for key in expected if key not in actual]
    if missing:
        return "", tr("the result has no {keys}", keys=", ".join(map(repr, missing)))
    for name, value in expected.items():
        problem = field_difference(name, actual[name], value)
        if problem is not None:
            return name, problem
    return None


def expect_metrics(actual, expected: dict, what: str, wrong: dict) -> None:
    """Fail unless `actual` equals `expected`; the misconception named is one predicting the differing field."""
    found = metrics_difference(actual, expected)
    if found is None:
        return
    name, problem = found
    predicted = {mid: fields[name] for mid, fields in wrong.items() if name in fields}
    fail(tr("{what}: {problem} (relative tolerance {rtol:g})", what=what, problem=problem, rtol=RTOL),
         diagnose(actual.get(name) if isinstance(actual, dict) else None, predicted,
                  lambda got, value: field_difference(name, got, value) is None))
