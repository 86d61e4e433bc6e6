"""How timeline checks compare seconds and timelines, and what each misconception would return instead.

Seconds compare with the contract's relative tolerance of 1e-9; the absolute picosecond on top only absorbs
the rounding of segment boundaries, which are running sums of the durations (ulp(100 s) is 1.4e-14 s).
"""
from grader.engine import diagnose, expect_type, fail
from grader.engine.checks import type_name

RTOL = 1e-9
ATOL = 1e-12
TOTALS = ("ttft", "total", "prefill", "decode", "tool", "network")


def same_seconds(actual, expected) -> bool:
    """Whether `actual` is a number within the tolerance of `expected`."""
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return False
    return abs(actual - expected) <= ATOL + RTOL * abs(expected)


def expect_seconds(actual, expected: float, what: str, wrong: dict) -> None:
    """Fail unless `actual` is `expected` seconds, naming the misconception whose value it equals, if any."""
    expect_type(actual, (float, int), what)
    if not same_seconds(actual, expected):
        fail(f"{what} returned {actual!r} s, expected {expected!r} s (relative tolerance {RTOL:g})",
             diagnose(actual, wrong, same_seconds))


def timeline_difference(actual, expected: dict) -> str | None:
    """None when `actual` has `expected`'s segments and totals; otherwise the first difference, in words."""
    if not isinstance(actual, dict):
        return f"returned {type_name(actual)}, expected a dict"
    missing = [key for key in ("segments",) + TOTALS if key not in actual]
    if missing:
        return f"the result has no {', '.join(map(repr, missing))}"
    segments = actual["segments"]
    if not isinstance(segments, (list, tuple)) or not all(
            isinstance(s, dict) and {"kind", "start", "end"} <= s.keys() for s in segments):
        return "'segments' must be a list of {'kind', 'start', 'end'} dicts"
    kinds = [s["kind"] for s in segments]
    expected_kinds = [s["kind"] for s in expected["segments"]]
    if kinds != expected_kinds:
        at = next((i for i, (a, e) in enumerate(zip(kinds, expected_kinds)) if a != e),
                  min(len(kinds), len(expected_kinds)))
        return (f"{len(kinds)} segments, expected {len(expected_kinds)}; first difference at segments[{at}]: "
                f"{_kind_at(kinds, at)}, expected {_kind_at(expected_kinds, at)} (expected kinds: {expected_kinds})")
    for i, (got, want) in enumerate(zip(segments, expected["segments"])):
        for key in ("start", "end"):
            if not same_seconds(got[key], want[key]):
                return f"segments[{i}] ({want['kind']}) {key} = {got[key]!r}, expected {want[key]!r}"
    for key in TOTALS:
        if not same_seconds(actual[key], expected[key]):
            return f"{key!r} = {actual[key]!r}, expected {expected[key]!r}"
    return None


def _kind_at(kinds: list, index: int) -> str:
    """The kind at `index`, or a note that the list ends before it."""
    return repr(kinds[index]) if index < len(kinds) else "no segment"


def expect_timeline(actual, expected: dict, what: str, wrong: dict) -> None:
    """Fail unless `actual` equals the timeline `expected` (kinds exactly, times within the tolerance)."""
    problem = timeline_difference(actual, expected)
    if problem is not None:
        fail(f"{what}: {problem} (relative tolerance {RTOL:g})",
             diagnose(actual, wrong, lambda got, predicted: timeline_difference(got, predicted) is None))


def misconception_values(ref, fn: str, model: dict, hw: dict, *args) -> dict:
    """{misconception id: what `ref.<fn>(model, hw, *args)` becomes under it}, for ids that change the answer.

    Each misconception is a change of the reference's inputs: an infinite bandwidth leaves only the compute
    time (decode_compute_bound), zero KV bytes per token drop the cache read (ignores_kv_read), and a session
    without a prefix cache recomputes the whole context (prefill_whole_context_with_cache).
    """
    call = getattr(ref, fn)
    right = call(model, hw, *args)
    wrong = {"ignores_kv_read": call({**model, "kv_bytes_per_token": 0}, hw, *args)}
    if fn == "decode_step_seconds":
        wrong["decode_compute_bound"] = call(model, {**hw, "mem_bandwidth": float("inf")}, *args)
        return {mid: value for mid, value in wrong.items() if not same_seconds(value, right)}
    assert fn == "session_timeline", fn
    events, prefix_cache = args
    if prefix_cache:
        wrong["prefill_whole_context_with_cache"] = call(model, hw, events, False)
    return {mid: value for mid, value in wrong.items() if timeline_difference(value, right) is not None}


def call_text(fn: str, *args, **kwargs) -> str:
    """How a call reads in a failure message; args are given already worded (e.g. 'Llama-3-8B-like')."""
    return f"{fn}({', '.join([*map(str, args), *(f'{k}={v!r}' for k, v in kwargs.items())])})"
