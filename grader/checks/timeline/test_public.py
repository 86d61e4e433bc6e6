"""Public timeline checks: a Llama-3-8B-like model on H100 and H200 (figures and sources in scenarios.py), where
batching stops paying, the issue's three sessions and the three optimisations; answers from the goldens."""
from grader.checks.timeline.expect import (call_text, expect_critical_batch, expect_seconds, expect_throughput,
                                           expect_timeline, misconception_values, timeline_difference)
from grader.checks.timeline.scenarios import (BASELINE, COMPACT_LAYOUT, COMPACTED, CRITICAL_CASES, GPUS, H100, LAYOUT,
                                              LLAMA3_8B, LONG_AGENT, ON_THE_LINE, OPTIMISATIONS, SESSIONS,
                                              THROUGHPUT_BATCHES, THROUGHPUT_CONTEXTS, compact, generate, network,
                                              tool, tool_result, user)
from grader.engine import check, diagnose, expect_raises, fail, golden, reference, tr

MODEL = "Llama-3-8B-like"
SCENARIOS_FILE = "grader/checks/timeline/scenarios.py"


def stored(key: str, fn: str, model: dict, hw: dict, *args) -> dict:
    """The golden answer to `fn(model, hw, *args)` and what each misconception would return instead."""
    def compute() -> dict:
        ref = reference("timeline")
        wrong = misconception_values(ref, fn, model, hw, *args)
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
       title="prefill_seconds of new tokens on top of cached ones: attention FLOPs grow and the cache is read")
def test_prefill_attends_to_cached_tokens(sub):
    for gpu, hw in GPUS.items():
        for new_tokens, cached_tokens in ((500, 6000), (4000, 4000), (8, 100_000)):
            expect_prefill(sub, gpu, hw, new_tokens, cached_tokens)


@check("prefill_reads_the_cache", points=2, hint="prefill_seconds",
       title="one new token over a 100k-token cache costs a decode step over it; no new tokens cost nothing")
def test_prefill_reads_the_cache(sub):
    # prefill(1, 100k) reads the weights and 100k tokens of K/V, as decode_step_seconds([100k]) does; on H100
    # (16,060,522,496 + 100,000 · 131,072) B / 3.35e12 B/s = 8.71 ms, far above its 69 µs of compute
    # ((2 · 8.03e9 + 2 · 32 · 4096 · 200,001) FLOP / 989e12 FLOP/s); the weights alone would be 4.79 ms
    for gpu, hw in GPUS.items():
        expect_prefill(sub, gpu, hw, 1, 100_000)
    for cached_tokens in (0, 5000):
        expect_prefill(sub, "H100", H100, 0, cached_tokens)


@check("decode_memory_bound", points=2, hint="decode_step_seconds",
       title="a decode step at small batch reads all weights and every sequence's KV cache (H100, H200)")
def test_decode_memory_bound(sub):
    for gpu, hw in GPUS.items():
        for context_lens in ([8000], [1], [1000, 2000, 4000, 8000], [6000] * 16):
            expect_decode(sub, gpu, hw, context_lens)


@check("large_batch_needs_short_contexts", points=1, hint="decode_step_seconds",
       title="512 sequences of 64 tokens are compute-bound on H100; 512 of 4,000 tokens stay memory-bound")
def test_large_batch_needs_short_contexts(sub):
    for context_len in (64, 4000):
        expect_decode(sub, "H100", H100, [context_len] * 512)


def expect_critical(sub, key: str, shown: tuple, model: dict, hw: dict, context_len: int) -> None:
    """The submission's critical_batch_size must equal the golden (inf where no batch is compute-bound)."""
    case = stored(f"critical.{key}.{context_len}", "critical_batch_size", model, hw, context_len)
    expect_critical_batch(sub.critical_batch_size(model, hw, context_len), case["expected"],
                          call_text("critical_batch_size", *shown, context_len), case["wrong"])


@check("critical_batch_either_side_of_the_line", points=2, hint="critical_batch_size",
       title="critical_batch_size: finite below about 415 cached tokens on H100 (595 on H200), inf above")
def test_critical_batch_either_side_of_the_line(sub):
    # the line is derived in scenarios.py: 415.05 tokens on H100, 594.70 on H200
    for gpu, context_lens in CRITICAL_CASES:
        for context_len in context_lens:
            expect_critical(sub, gpu, (MODEL, gpu), LLAMA3_8B, GPUS[gpu], context_len)


@check("critical_batch_on_the_line", points=1, hint="critical_batch_size",
       title="critical_batch_size exactly on the line (K/V read = compute per sequence) is inf")
def test_critical_batch_on_the_line(sub):
    model, hw, context_len = ON_THE_LINE
    expect_critical(sub, "on_the_line", (repr(model), repr(hw)), model, hw, context_len)


@check("throughput_grows_while_each_user_slows", points=2, hint="decode_throughput",
       title="decode_throughput on H100 from batch 1 to 1,024 at 64 and 4,000 cached tokens per sequence")
def test_throughput_grows_while_each_user_slows(sub):
    # tokens/s grows with the batch toward a ceiling, while each user's tokens/s falls. At 64 tokens the ceiling is
    # compute: 989e12 / (2 · 8,030,261,248) = 61,580 tokens/s, reached from batch 349 (critical_batch_size) on.
    # At 4,000 tokens it is each sequence's K/V read: 3.35e12 / (4,000 · 131,072) = 6,390 tokens/s, never reached.
    for context_len in THROUGHPUT_CONTEXTS:
        for batch in THROUGHPUT_BATCHES:
            case = stored(f"throughput.H100.{batch}.{context_len}", "decode_throughput", LLAMA3_8B, H100, batch,
                          context_len)
            expect_throughput(sub.decode_throughput(LLAMA3_8B, H100, batch, context_len), case["expected"],
                              call_text("decode_throughput", MODEL, "H100", batch, context_len), case["wrong"])


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
    if len(events) <= 6:
        return repr(events)
    return tr("<{name}: {count} events, see {file}>", name=name, count=len(events), file=SCENARIOS_FILE)


def scenario_check(name: str, title: str, scenario: str):
    """A two-point check, named `name`, of one of the issue's sessions with a prefix cache on both GPUs."""
    @check(name, points=2, hint="session_timeline", title=title)
    def check_scenario(sub):
        for gpu in GPUS:
            expect_session(sub, scenario, events_text(scenario, SESSIONS[scenario]), gpu, SESSIONS[scenario], True)
    return check_scenario


test_long_input_short_output = scenario_check(
    "long_input_short_output", "timeline of a 7,000-token document with a 150-token answer on H100 and H200",
    "long input / short output")
test_short_input_long_output = scenario_check(
    "short_input_long_output", "timeline of a 200-token request with a 3,000-token answer on H100 and H200",
    "short input / long output")
test_frequent_tool_calls = scenario_check(
    "frequent_tool_calls", "timeline of an agent that calls a tool six times before answering, on H100 and H200",
    "frequent tool calls")


@check("segment_layout", points=1, hint="session_timeline",
       title="segments back to back in event order; one-token generate: no decode run; nothing pending: 0 s prefill")
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
    totals = {kind: timeline.get(kind) for kind in ("prefill", "decode", "tool", "network", "compact")}
    return {kind: value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            for kind, value in totals.items()}


def expect_shortened(sub, baseline: dict, key: str, label: str, events: list, prefix_cache: bool,
                     shortens: str) -> None:
    """The submission's timeline of the changed session must equal the golden; a failure says what the change
    should shorten (`shortens`) and shows the seconds saved per kind of segment over `baseline`, expected and got."""
    case = stored(f"session.{key}.H100.{prefix_cache}", "session_timeline", LLAMA3_8B, H100, events, prefix_cache)
    got = sub.session_timeline(LLAMA3_8B, H100, events, prefix_cache)
    what = call_text("session_timeline", MODEL, "H100", events_text(label, events), prefix_cache=prefix_cache)
    problem = timeline_difference(got, case["expected"])
    if problem is not None:
        expected_saving = {kind: round(baseline[kind] - seconds, 6)
                           for kind, seconds in segment_totals(case["expected"]).items()}
        got_totals = segment_totals(got) if isinstance(got, dict) else {}
        got_saving = {kind: round(baseline[kind] - seconds, 6) if seconds is not None else None
                      for kind, seconds in got_totals.items()}
        fail(tr("{what}: {shortens}; seconds saved per kind of segment over the baseline: expected {expected}, got "
                "{got}; first difference: {problem}", what=what, shortens=shortens, expected=expected_saving,
                got=got_saving, problem=problem),
             diagnose(got, case["wrong"], lambda a, p: timeline_difference(a, p) is None))


def optimisation_words(change: str, segment: str) -> tuple[str, str]:
    """How a call names the session that `change` (one of scenarios.OPTIMISATIONS) makes of BASELINE, and the
    sentence saying it should shorten `segment`, in this run's language."""
    return {("a prefix cache", "prefill"): (tr("BASELINE with a prefix cache"),
                                            tr("a prefix cache should shorten prefill")),
            ("a shorter output", "decode"): (tr("BASELINE with a shorter output"),
                                             tr("a shorter output should shorten decode")),
            ("parallel tool calls", "tool"): (tr("BASELINE with parallel tool calls"),
                                              tr("parallel tool calls should shorten tool"))}[change, segment]


@check("what_each_optimisation_shortens", points=2, hint="session_timeline",
       title="a prefix cache shortens prefill, a shorter output decode, parallel tool calls the tool waits")
def test_what_each_optimisation_shortens(sub):
    baseline = expect_session(sub, "baseline", events_text("BASELINE", BASELINE), "H100", BASELINE, False)
    for change, events, prefix_cache, segment in OPTIMISATIONS:
        label, shortens = optimisation_words(change, segment)
        expect_shortened(sub, baseline, change.replace(" ", "_"), label, events, prefix_cache, shortens)


@check("what_compaction_shortens", points=2, hint="session_timeline.compact",
       title="compaction costs its own call and a cold cache, then every later decode step and prefill reads less")
def test_what_compaction_shortens(sub):
    # the layout first: a compact's prefill and decode run are segments of kind "compact", the next prefill
    # recomputes the whole summary; then the long agent session of scenarios.py, without and with compaction
    expect_session(sub, "compact_layout", events_text("COMPACT_LAYOUT", COMPACT_LAYOUT), "H100", COMPACT_LAYOUT,
                   True)
    baseline = expect_session(sub, "long_agent", events_text("LONG_AGENT", LONG_AGENT), "H100", LONG_AGENT, True)
    expect_shortened(sub, baseline, "compacted", "COMPACTED", COMPACTED, True,
                     tr("compaction should shorten later decode steps and prefills"))


def expect_bad_calls(sub, calls: list) -> None:
    """Each call must raise ValueError with a message that names the bad argument."""
    for argument, fn, args in calls:
        what = call_text(fn, MODEL, "H100", *map(repr, args[2:]))
        message = expect_raises(ValueError, getattr(sub, fn), *args)
        if argument not in message:
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}", call=what,
                    message=message, name=argument))


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
    ("tokens", "session_timeline", (LLAMA3_8B, H100, [user(10), generate(4), compact(20, 0)])),
    ("summary_tokens", "session_timeline", (LLAMA3_8B, H100, [user(10), generate(4), compact(-1, 8)])),
]


@check("bad_arguments", points=2, hint="session_timeline",
       title="negative tokens or seconds, generate or compact with m < 1, a negative summary and unknown event kinds "
             "raise ValueError naming them")
def test_bad_arguments(sub):
    expect_bad_calls(sub, BAD_CALLS)


BAD_BATCH_CALLS = [
    ("context_len", "critical_batch_size", (LLAMA3_8B, H100, -1)),
    ("batch", "decode_throughput", (LLAMA3_8B, H100, 0, 100)),
    ("context_len", "decode_throughput", (LLAMA3_8B, H100, 8, -5)),
]


@check("bad_batch_arguments", points=1, hint="decode_throughput",
       title="a negative context_len or a batch below 1 raises ValueError naming it")
def test_bad_batch_arguments(sub):
    expect_bad_calls(sub, BAD_BATCH_CALLS)
