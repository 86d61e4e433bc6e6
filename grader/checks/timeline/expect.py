"""How timeline checks compare seconds, batches, throughputs and timelines, and what each misconception would
return instead.

Numbers compare with the contract's relative tolerance of 1e-9; the absolute picosecond on top only absorbs the
rounding of segment boundaries, which are running sums of the durations (ulp(100 s) is 1.4e-14 s). An infinite
critical batch must come back as inf.
"""
import math

from grader.engine import diagnose, expect_type, fail, tr, within
from grader.engine.checks import type_name

RTOL = 1e-9
ATOL = 1e-12
TOTALS = ("ttft", "total", "prefill", "decode", "tool", "network", "compact")
THROUGHPUT_KEYS = ("step_seconds", "tokens_per_second", "tokens_per_second_per_sequence")


def same_number(actual, expected) -> bool:
    """Whether `actual` is a number within the tolerance of `expected` (inf only for inf)."""
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return False
    return within(actual, expected, atol=ATOL, rtol=RTOL)  # inf only for inf


def expect_number(actual, expected: float, what: str, unit: str, wrong: dict) -> None:
    """Fail unless `actual` is `expected`, naming the misconception whose value it equals, if any."""
    expect_type(actual, (float, int), what)
    if not same_number(actual, expected):
        fail(tr("{what} returned {actual!r}{unit}, expected {expected!r}{unit} (relative tolerance {rtol:g})",
                what=what, actual=actual, expected=expected, unit=unit, rtol=RTOL),
             diagnose(actual, wrong, same_number))


def expect_seconds(actual, expected: float, what: str, wrong: dict) -> None:
    """Fail unless `actual` is `expected` seconds."""
    expect_number(actual, expected, what, " s", wrong)


def expect_critical_batch(actual, expected: float, what: str, wrong: dict) -> None:
    """Fail unless `actual` is the critical batch `expected`; any finite batch where none exists is
    batch_always_compute_bound."""
    if math.isinf(expected) and isinstance(actual, (int, float)) and not isinstance(actual, bool) \
            and math.isfinite(actual):
        fail(tr("{what} returned {actual!r}, expected inf: from this context length on, each sequence's K/V read "
                "takes at least as long as its compute, so in the whole-step roofline no batch is ever compute-bound",
                what=what, actual=actual), "batch_always_compute_bound")
    expect_number(actual, expected, what, "", wrong)


def not_a_dict(actual) -> str:
    """A result's difference from a dict, in words."""
    return tr("returned {type}, expected a dict", type=type_name(actual))


def missing_keys(missing: list) -> str:
    """A result's difference from one with every key of `missing`, in words."""
    return tr("the result has no {keys}", keys=", ".join(map(repr, missing)))


def key_difference(key: str, actual, expected) -> str:
    """The difference of a result's value at `key`, in words."""
    return tr("{key!r} = {actual!r}, expected {expected!r}", key=key, actual=actual, expected=expected)


def throughput_difference(actual, expected: dict) -> str | None:
    """None when `actual` has `expected`'s three figures; otherwise the first difference, in words."""
    if not isinstance(actual, dict):
        return not_a_dict(actual)
    missing = [key for key in THROUGHPUT_KEYS if key not in actual]
    if missing:
        return missing_keys(missing)
    for key in THROUGHPUT_KEYS:
        if not same_number(actual[key], expected[key]):
            return key_difference(key, actual[key], expected[key])
    return None


def expect_throughput(actual, expected: dict, what: str, wrong: dict) -> None:
    """Fail unless `actual` has the step time and both throughputs of `expected`."""
    problem = throughput_difference(actual, expected)
    if problem is not None:
        fail(tr("{what}: {problem} (relative tolerance {rtol:g})", what=what, problem=problem, rtol=RTOL),
             diagnose(actual, wrong, lambda got, predicted: throughput_difference(got, predicted) is None))


def timeline_difference(actual, expected: dict) -> str | None:
    """None when `actual` has `expected`'s segments and totals; otherwise the first difference, in words."""
    if not isinstance(actual, dict):
        return not_a_dict(actual)
    missing = [key for key in ("segments",) + TOTALS if key not in actual]
    if missing:
        return missing_keys(missing)
    segments = actual["segments"]
    if not isinstance(segments, (list, tuple)) or not all(
            isinstance(s, dict) and {"kind", "start", "end"} <= s.keys() for s in segments):
        return tr("'segments' must be a list of {keys} dicts", keys="{'kind', 'start', 'end'}")
    kinds = [s["kind"] for s in segments]
    expected_kinds = [s["kind"] for s in expected["segments"]]
    if kinds != expected_kinds:
        at = next((i for i, (a, e) in enumerate(zip(kinds, expected_kinds)) if a != e),
                  min(len(kinds), len(expected_kinds)))
        return tr("{count} segments, expected {expected_count}; first difference at segments[{at}]: {kind}, expected "
                  "{expected_kind} (expected kinds: {expected_kinds})", count=len(kinds),
                  expected_count=len(expected_kinds), at=at, kind=_kind_at(kinds, at),
                  expected_kind=_kind_at(expected_kinds, at), expected_kinds=expected_kinds)
    for i, (got, want) in enumerate(zip(segments, expected["segments"])):
        for key in ("start", "end"):
            if not same_number(got[key], want[key]):
                return tr("segments[{index}] ({kind}) {key} = {actual!r}, expected {expected!r}", index=i,
                          kind=want["kind"], key=key, actual=got[key], expected=want[key])
    for key in TOTALS:
        if not same_number(actual[key], expected[key]):
            return key_difference(key, actual[key], expected[key])
    return None


def _kind_at(kinds: list, index: int) -> str:
    """The kind at `index`, or a note that the list ends before it."""
    return repr(kinds[index]) if index < len(kinds) else tr("no segment")


def expect_timeline(actual, expected: dict, what: str, wrong: dict) -> None:
    """Fail unless `actual` equals the timeline `expected` (kinds exactly, times within the tolerance)."""
    problem = timeline_difference(actual, expected)
    if problem is not None:
        fail(tr("{what}: {problem} (relative tolerance {rtol:g})", what=what, problem=problem, rtol=RTOL),
             diagnose(actual, wrong, lambda got, predicted: timeline_difference(got, predicted) is None))


def same_result(fn: str, actual, expected) -> bool:
    """Whether `actual` passes for `expected` as a result of `fn`."""
    if fn == "session_timeline":
        return timeline_difference(actual, expected) is None
    if fn == "decode_throughput":
        return throughput_difference(actual, expected) is None
    return same_number(actual, expected)


def misconception_values(ref, fn: str, model: dict, hw: dict, *args) -> dict:
    """{misconception id: what `ref.<fn>(model, hw, *args)` becomes under it}, for ids that change the answer.

    Each misconception is a change of the reference's inputs: zero KV bytes per token drop the cache read
    (ignores_kv_read), an infinite bandwidth leaves only the compute time of a decode step
    (decode_compute_bound), and a session without a prefix cache recomputes the whole context
    (prefill_whole_context_with_cache); a compacted session that keeps the summary computed is
    compaction_keeps_cache (timeline_keeping_cache). A critical batch without the K/V read is batch_always_compute_bound, and
    so is any finite critical batch where there is none (expect_critical_batch).
    """
    call = getattr(ref, fn)
    right = call(model, hw, *args)
    without_kv = call({**model, "kv_bytes_per_token": 0}, hw, *args)
    # a critical batch without the K/V read is the FLOP:byte rule of thumb: batching always wins
    wrong = {"batch_always_compute_bound" if fn == "critical_batch_size" else "ignores_kv_read": without_kv}
    if fn in ("decode_step_seconds", "decode_throughput"):
        wrong["decode_compute_bound"] = call(model, {**hw, "mem_bandwidth": math.inf}, *args)
    if fn == "session_timeline" and args[1]:
        wrong["prefill_whole_context_with_cache"] = call(model, hw, args[0], False)
        wrong["compaction_keeps_cache"] = timeline_keeping_cache(ref, model, hw, args[0])
    return {mid: value for mid, value in wrong.items() if not same_result(fn, value, right)}


def timeline_keeping_cache(ref, model: dict, hw: dict, events: list) -> dict:
    """The session with a prefix cache as compaction_keeps_cache lays it out: after a compact the summary counts
    as already computed (as if the cache still matched), so the next prefill takes only what came after it.

    The session walk of the contract with that one change, timed with the reference's prefill and decode step.
    """
    segments, totals, context, computed = [], dict.fromkeys(TOTALS[2:], 0.0), 0, 0

    def add(kind: str, seconds: float) -> None:
        start = segments[-1]["end"] if segments else 0.0
        segments.append({"kind": kind, "start": start, "end": start + seconds})
        totals[kind] += seconds

    for event in events:
        kind = event["kind"]
        if kind in ("user", "tool_result"):
            context += event["tokens"]
        elif kind in ("generate", "compact"):
            m = event["tokens"]
            add("prefill" if kind == "generate" else kind, ref.prefill_seconds(model, hw, context - computed, computed))
            if m > 1:
                add("decode" if kind == "generate" else kind,
                    sum(ref.decode_step_seconds(model, hw, [context + k]) for k in range(1, m)))
            context = computed = context + m if kind == "generate" else event["summary_tokens"]
        else:
            add(kind, float(event["seconds"]))
    ttft = next((segment["end"] for segment in segments if segment["kind"] == "prefill"), None)
    return {"segments": segments, "ttft": ttft, "total": segments[-1]["end"] if segments else 0.0, **totals}


def call_text(fn: str, *args, **kwargs) -> str:
    """How a call reads in a failure message; args are given already worded (e.g. 'Llama-3-8B-like')."""
    return f"{fn}({', '.join([*map(str, args), *(f'{k}={v!r}' for k, v in kwargs.items())])})"
