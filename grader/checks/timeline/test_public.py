"""Public timeline checks: a Llama-3-8B-like model on H100 and H200, the issue's three sessions and the three
optimisations; answers from the goldens."""
from grader.checks.timeline.expect import (call_text, expect_seconds, expect_timeline, misconception_values,
                                           timeline_difference)
from grader.checks.timeline.scenarios import (BASELINE, GPUS, H100, LAYOUT, LLAMA3_8B, OPTIMISATIONS, SESSIONS,
                                              generate, network, tool, tool_result, user)
from grader.engine import check, diagnose, expect_raises, fail, golden, reference

MODEL = "Llama-3-8B-like"
SCENARIOS_FILE = "grader/checks/timeline/scenarios.py"


def stored(key: str, fn: str, model: dict, hw: dict, *args) -> dict:
    """The golden answer to `fn(model, hw, *args)` and what each misconception would return instead."""
    def compute() -> dict:
        ref = reference("timeline")
        wrong = misconception_values(ref, fn, model, hw, *args) if fn != "prefill_seconds" else {}
        return {"expected": getattr(ref, fn)(model, hw, *args), "wrong": wrong}
    return golden(key, compute)


def expect_prefill(sub, gpu: str, hw: dict, new_tokens: int, cached_tokens: int) -> None:
    """The submission's prefill_seconds on the Llama-3-8B-like model and `hw` (called `gpu`) must match."""
    case = stored(f"prefill.{gpu}.{new_tokens}.{cached_tokens}", "prefill_seconds", LLAMA3_8B, hw, new_tokens,
                  cached_tokens)
    expect_seconds(sub.prefill_seconds(LLAMA3_8B, hw, new_tokens, cached_tokens), case["expected"],
                   call_text("prefill_seconds", MODEL, gpu, new_tokens, cached_tokens), case["wrong"])


def expect_decode(sub, gpu: str, hw: dict, context_lens: list) -> None:
    """The submission's decode_step_seconds on the Llama-3-8B-like model must equal the golden."""
    lens = lens_text(context_lens)
    case = stored(f"decode.{gpu}.{lens}", "decode_step_seconds", LLAMA3_8B, hw, context_lens)
    expect_seconds(sub.decode_step_seconds(LLAMA3_8B, hw, context_lens), case["expected"],
                   call_text("decode_step_seconds", MODEL, gpu, lens), case["wrong"])


def lens_text(context_lens: list) -> str:
    """A short spelling of a batch's context lengths: `[64] * 512` for a long uniform batch."""
    if len(context_lens) > 4 and len(set(context_lens)) == 1:
        return f"[{context_lens[0]}] * {len(context_lens)}"
    return repr(context_lens)


def expect_session(sub, key: str, label: str, gpu: str, events: list, prefix_cache: bool) -> dict:
    """The submission's session_timeline of `events` must equal the golden; returns the golden timeline."""
    case = stored(f"session.{key}.{gpu}.{prefix_cache}", "session_timeline", LLAMA3_8B, GPUS[gpu], events,
                  prefix_cache)
    expect_timeline(sub.session_timeline(LLAMA3_8B, GPUS[gpu], events, prefix_cache), case["expected"],
                    call_text("session_timeline", MODEL, gpu, label, prefix_cache=prefix_cache), case["wrong"])
    return case["expected"]


@check("prefill_roofline", points=2, hint="prefill_seconds",
       title="prefill_seconds on H100 and H200: compute-bound long prompts, weight-read-bound short ones")
def test_prefill_roofline(sub):
    for gpu, hw in GPUS.items():
        for new_tokens in (1, 64, 2048, 7000):
            expect_prefill(sub, gpu, hw, new_tokens, 0)


@check("prefill_attends_to_cached_tokens", points=2, hint="prefill_seconds",
       title="prefill_seconds of new tokens on top of cached ones: attention FLOPs grow with cached_tokens")
def test_prefill_attends_to_cached_tokens(sub):
    for gpu, hw in GPUS.items():
        for new_tokens, cached_tokens in ((500, 6000), (4000, 4000), (8, 100_000)):
            expect_prefill(sub, gpu, hw, new_tokens, cached_tokens)


@check("decode_memory_bound", points=2, hint="decode_step_seconds",
       title="a decode step at small batch reads all weights and every sequence's KV cache (H100, H200)")
def test_decode_memory_bound(sub):
    for gpu, hw in GPUS.items():
        for context_lens in ([8000], [1], [1000, 2000, 4000, 8000], [6000] * 16):
            expect_decode(sub, gpu, hw, context_lens)


@check("decode_compute_bound_at_large_batch", points=1, hint="decode_step_seconds",
       title="a decode step of 512 short sequences on H100 is bound by compute, not memory")
def test_decode_compute_bound_at_large_batch(sub):
    expect_decode(sub, "H100", H100, [64] * 512)


@check("efficiency_factors", points=1, hint="prefill_seconds",
       title="flops_efficiency and bandwidth_efficiency scale the peaks (and default to 1.0)")
def test_efficiency_factors(sub):
    derated = {**H100, "flops_efficiency": 0.55, "bandwidth_efficiency": 0.8}
    gpu = "H100 with flops_efficiency=0.55, bandwidth_efficiency=0.8"
    expect_prefill(sub, gpu, derated, 4000, 0)
    expect_prefill(sub, gpu, derated, 16, 0)
    expect_decode(sub, gpu, derated, [4000, 4000])
    expect_decode(sub, gpu, derated, [64] * 512)


def events_text(name: str, events: list) -> str:
    """The events as written when short, else where to read them."""
    return repr(events) if len(events) <= 6 else f"<{name}: {len(events)} events, see {SCENARIOS_FILE}>"


def expect_scenario(sub, name: str) -> None:
    """One of the issue's sessions, with a prefix cache, on both GPUs."""
    for gpu in GPUS:
        expect_session(sub, name, events_text(name, SESSIONS[name]), gpu, SESSIONS[name], True)


@check("long_input_short_output", points=2, hint="session_timeline",
       title="timeline of a 7,000-token document with a 150-token answer on H100 and H200")
def test_long_input_short_output(sub):
    expect_scenario(sub, "long input / short output")


@check("short_input_long_output", points=2, hint="session_timeline",
       title="timeline of a 200-token request with a 3,000-token answer on H100 and H200")
def test_short_input_long_output(sub):
    expect_scenario(sub, "short input / long output")


@check("frequent_tool_calls", points=2, hint="session_timeline",
       title="timeline of an agent that calls a tool six times before answering, on H100 and H200")
def test_frequent_tool_calls(sub):
    expect_scenario(sub, "frequent tool calls")


@check("segment_layout", points=1, hint="session_timeline",
       title="segments back to back in event order; a one-token generate has no decode run; ttft after waits")
def test_segment_layout(sub):
    expect_session(sub, "layout", repr(LAYOUT), "H100", LAYOUT, True)


@check("prefix_cache_on_and_off", points=2, hint="session_timeline",
       title="with a prefix cache only pending tokens are prefilled; without one the whole context each time")
def test_prefix_cache_on_and_off(sub):
    name = "frequent tool calls"
    for prefix_cache in (False, True):
        expect_session(sub, name, events_text(name, SESSIONS[name]), "H100", SESSIONS[name], prefix_cache)


def segment_totals(timeline: dict) -> dict:
    """The seconds a timeline spends per kind of segment; None where it holds no number."""
    totals = {kind: timeline.get(kind) for kind in ("prefill", "decode", "tool", "network")}
    return {kind: value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            for kind, value in totals.items()}


@check("what_each_optimisation_shortens", points=2, hint="session_timeline",
       title="a prefix cache shortens prefill, a shorter output decode, parallel tool calls the tool waits")
def test_what_each_optimisation_shortens(sub):
    baseline = expect_session(sub, "baseline", events_text("BASELINE", BASELINE), "H100", BASELINE, False)
    for change, events, prefix_cache, segment in OPTIMISATIONS:
        case = stored(f"session.{change.replace(' ', '_')}.H100.{prefix_cache}", "session_timeline", LLAMA3_8B,
                      H100, events, prefix_cache)
        got = sub.session_timeline(LLAMA3_8B, H100, events, prefix_cache)
        what = call_text("session_timeline", MODEL, "H100", events_text(f"BASELINE with {change}", events),
                         prefix_cache=prefix_cache)
        problem = timeline_difference(got, case["expected"])
        if problem is not None:
            expected_saving = {kind: round(baseline[kind] - seconds, 6)
                               for kind, seconds in segment_totals(case["expected"]).items()}
            got_totals = segment_totals(got) if isinstance(got, dict) else {}
            got_saving = {kind: round(baseline[kind] - seconds, 6) if seconds is not None else None
                          for kind, seconds in got_totals.items()}
            fail(f"{what}: {change} should shorten {segment}; seconds saved per kind of segment over the baseline: "
                 f"expected {expected_saving}, got {got_saving}; first difference: {problem}",
                 diagnose(got, case["wrong"], lambda a, p: timeline_difference(a, p) is None))


BAD_CALLS = [
    ("new_tokens", "prefill_seconds", (LLAMA3_8B, H100, -1)),
    ("cached_tokens", "prefill_seconds", (LLAMA3_8B, H100, 16, -4)),
    ("context_lens", "decode_step_seconds", (LLAMA3_8B, H100, [100, -1])),
    ("tokens", "session_timeline", (LLAMA3_8B, H100, [user(-3), generate(5)])),
    ("tokens", "session_timeline", (LLAMA3_8B, H100, [user(10), generate(4), tool(0.2), tool_result(-1)])),
    ("tokens", "session_timeline", (LLAMA3_8B, H100, [user(10), generate(0)])),
    ("seconds", "session_timeline", (LLAMA3_8B, H100, [user(10), generate(2), tool(-0.5)])),
    ("seconds", "session_timeline", (LLAMA3_8B, H100, [network(-0.01), user(10), generate(2)])),
    ("kind", "session_timeline", (LLAMA3_8B, H100, [user(10), {"kind": "think", "tokens": 5}])),
]


@check("bad_arguments", points=2, hint="session_timeline",
       title="negative tokens or seconds, generate with m < 1 and unknown event kinds raise ValueError naming them")
def test_bad_arguments(sub):
    for argument, fn, args in BAD_CALLS:
        shown = [MODEL, "H100", *map(repr, args[2:])]
        what = call_text(fn, *shown)
        message = expect_raises(ValueError, getattr(sub, fn), *args)
        if argument not in message:
            fail(f"{what} raised ValueError({message!r}); the message should name {argument!r}")
