"""How serving checks compare records and metrics, and name the misconception a wrong answer matches.

Tolerance. Engine times in the checks are whole TICKs or quarter seconds: float64 holds them and every sum of
them exactly, so a correct simulate returns exact times whatever the order of its additions; the relative 1e-9
only forgives an implementation that computes a step's cost in another way (a product of two exact numbers
rounded once, about 1e-16 relative, summed over at most 10^5 steps: under 1e-11). Metrics divide (means, TPOT,
interpolated percentiles, rates): each result is a handful of correctly rounded operations away from the exact
value, about 1e-15 relative, so 1e-9 accepts any order of operations and rejects every misconception (they
change values by far more). The absolute 1e-12 s only matters for values that should be 0.
"""
from grader.engine import diagnose, fail, within
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
    where = f"record {index} (id {expected['id']!r})"
    if not isinstance(actual, dict):
        return f"{where} is a {type_name(actual)}, expected a dict"
    missing = [key for key in RECORD_KEYS if key not in actual]
    if missing:
        return f"{where} has no {', '.join(map(repr, missing))}"
    for key in ("id", "status", "prompt_tokens", "output_tokens", "preemptions"):
        if actual[key] != expected[key] or type(actual[key]) is not type(expected[key]):
            return f"{where}: {key} = {actual[key]!r}, expected {expected[key]!r}"
    for key in ("arrival", "first_token", "finish"):
        if not same_value(actual[key], expected[key]):
            return f"{where}: {key} = {actual[key]!r}, expected {expected[key]!r}"
    times, want = actual["token_times"], expected["token_times"]
    if not isinstance(times, (list, tuple)) or len(times) != len(want):
        return f"{where}: token_times = {short(times)}, expected {short(want)}"
    for k, (got, value) in enumerate(zip(times, want)):
        if not same_value(got, value):
            return f"{where}: token_times[{k}] = {got!r}, expected {value!r} (token_times {short(want)})"
    return None


def records_difference(actual, expected: list) -> str | None:
    """None when `actual` is the list of records `expected` (in input order); else the first difference."""
    if not isinstance(actual, (list, tuple)):
        return f"returned {type_name(actual)}, expected a list of records"
    if len(actual) != len(expected):
        return f"returned {len(actual)} records, expected {len(expected)} (one per request, in input order)"
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
        fail(f"{what}: {problem} (relative tolerance {RTOL:g})",
             diagnose(actual, wrong() if callable(wrong) else wrong,
                      lambda got, predicted: records_difference(got, predicted) is None))


def short(values) -> str:
    """A list as written, cut after 8 elements."""
    if not isinstance(values, (list, tuple)) or len(values) <= 8:
        return repr(values)
    return f"[{', '.join(map(repr, values[:8]))}, ...] ({len(values)} values)"


def field_difference(name: str, actual, expected) -> str | None:
    """None when one field of a metrics dict matches; else the difference, in words."""
    if name in STAT_FIELDS:
        if not isinstance(actual, dict) or actual.keys() != expected.keys():
            keys = sorted(actual) if isinstance(actual, dict) else type_name(actual)
            return f"{name!r} = {keys}, expected a dict with keys {list(expected)}"
        for key, value in expected.items():
            if not same_value(actual[key], value):
                return f"{name}[{key!r}] = {actual[key]!r}, expected {value!r}"
        return None
    if name == "counts":
        if actual != expected:
            return f"'counts' = {actual!r}, expected {expected!r}"
        return None
    if not same_value(actual, expected):
        return f"{name!r} = {actual!r}, expected {expected!r}"
    return None


def metrics_difference(actual, expected: dict) -> tuple[str, str] | None:
    """None when `actual` equals the metrics `expected`; otherwise (field, the first difference in words)."""
    if not isinstance(actual, dict):
        return "", f"returned {type_name(actual)}, expected a dict"
    missing = [key for key in expected if key not in actual]
    if missing:
        return "", f"the result has no {', '.join(map(repr, missing))}"
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
    fail(f"{what}: {problem} (relative tolerance {RTOL:g})",
         diagnose(actual.get(name) if isinstance(actual, dict) else None, predicted,
                  lambda got, value: field_difference(name, got, value) is None))
