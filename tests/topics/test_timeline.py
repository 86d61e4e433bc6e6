"""Project tests for the timeline topic: the reference against closed forms and layout invariants, the solution
against the reference, the check comparator's tolerance, the stub, the hints and the mutants."""
import math
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from exercises import timeline as stub
from grader import hints
from grader.checks.timeline.expect import (expect_critical_batch, expect_seconds, expect_throughput,
                                           expect_timeline, misconception_values, same_number, timeline_difference,
                                           timeline_keeping_cache)
from grader.checks.timeline.scenarios import (BASELINE, COMPACT_LAYOUT, COMPACTED, CRITICAL_CASES, GPUS, H100, H200,
                                              LAYOUT, LLAMA3_8B, LONG_AGENT, ON_THE_LINE, OPTIMISATIONS, SESSIONS,
                                              THROUGHPUT_BATCHES, THROUGHPUT_CONTEXTS)
from grader.checks.timeline.test_hidden import (AMBIGUOUS, context_near_the_line, random_compacted_events,
                                                random_events, random_hw, random_model, the_line)
from grader.engine import CheckFailure
from mutated import mutant
from reference import timeline as ref
from solutions import timeline as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "timeline"
FUNCTIONS = ("prefill_seconds", "decode_step_seconds", "critical_batch_size", "decode_throughput",
             "session_timeline")
MISCONCEPTIONS = {"decode_compute_bound", "ignores_kv_read", "prefill_whole_context_with_cache",
                  "batch_always_compute_bound", "compaction_keeps_cache"}
HINTS = FUNCTIONS + ("session_timeline.compact",)
KINDS = ("prefill", "decode", "tool", "network", "compact")
QUICK = settings(max_examples=40, deadline=None)
seeds = st.integers(0, 2**31 - 1)


def approx(expected: float):
    """Equal up to rounding: the reference and a closed form differ only in the order of float operations."""
    return pytest.approx(expected, rel=1e-12, abs=0)


# --- the reference against closed forms and invariants ----------------------------------------------------

def test_prefill_is_weight_bound_for_one_token_and_compute_bound_for_thousands():
    for hw in GPUS.values():
        assert ref.prefill_seconds(LLAMA3_8B, hw, 1) == approx(LLAMA3_8B["weight_bytes"] / hw["mem_bandwidth"])
        n, c = 7000, 3000
        # expanded: 2 P n + 4 L d n c + 2 L d n^2 FLOPs
        flops = 2 * LLAMA3_8B["params"] * n + 4 * 32 * 4096 * n * c + 2 * 32 * 4096 * n * n
        assert ref.prefill_seconds(LLAMA3_8B, hw, n, c) == approx(flops / hw["peak_flops"])


@QUICK
@given(seed=seeds)
def test_one_new_token_reads_what_a_decode_step_reads(seed):
    # with unbounded compute only the memory side is left: weights plus the cached tokens' K/V in both
    r = random.Random(seed)
    model, hw = random_model(r), {**random_hw(r), "peak_flops": float("inf")}
    cached = r.randint(0, 200_000)
    assert ref.prefill_seconds(model, hw, 1, cached) == approx(ref.decode_step_seconds(model, hw, [cached]))


def test_issue_example_prefill_over_a_long_cache():
    # issue 11: prefill(1 token, 100k cached) came out at 4.79 ms (the weights alone) against 8.71 ms of decode
    weights_only = LLAMA3_8B["weight_bytes"] / H100["mem_bandwidth"]
    assert weights_only == pytest.approx(4.794e-3, rel=1e-3)
    assert ref.prefill_seconds(LLAMA3_8B, H100, 1, 100_000) == approx(
        ref.decode_step_seconds(LLAMA3_8B, H100, [100_000]))
    assert ref.prefill_seconds(LLAMA3_8B, H100, 1, 100_000) == pytest.approx(8.707e-3, rel=1e-3)


@pytest.mark.parametrize("cached", [0, 1, 100_000])
def test_no_new_tokens_cost_nothing(cached):
    assert ref.prefill_seconds(LLAMA3_8B, H100, 0, cached) == 0.0


@QUICK
@given(seed=seeds)
def test_attention_flops_grow_linearly_with_cached_tokens(seed):
    r = random.Random(seed)
    model, hw = random_model(r), {"peak_flops": 1e15, "mem_bandwidth": float("inf")}
    n, c = r.randint(1, 5000), r.randint(1, 50_000)
    extra = (ref.prefill_seconds(model, hw, n, c) - ref.prefill_seconds(model, hw, n, 0)) * hw["peak_flops"]
    assert extra == pytest.approx(4 * model["n_layers"] * model["d_model"] * n * c, rel=1e-9)


def test_memory_bound_decode_run_is_an_arithmetic_series():
    context, m = 1500, 3000
    for hw in GPUS.values():
        timeline = ref.session_timeline(LLAMA3_8B, hw, [{"kind": "user", "tokens": context},
                                                        {"kind": "generate", "tokens": m}])
        # step k = 1..m-1 reads the weights and context + k cached tokens
        bytes_read = (m - 1) * LLAMA3_8B["weight_bytes"] + LLAMA3_8B["kv_bytes_per_token"] * (
            (m - 1) * context + m * (m - 1) // 2)
        assert timeline["decode"] == pytest.approx(bytes_read / hw["mem_bandwidth"], rel=1e-12)
    h100, h200 = (ref.session_timeline(LLAMA3_8B, hw, SESSIONS["short input / long output"]) for hw in (H100, H200))
    assert h100["decode"] / h200["decode"] == pytest.approx(4.8 / 3.35, rel=1e-12)


def test_decode_is_compute_bound_only_at_large_batch_and_short_context():
    def memory(context_len, batch):
        return (LLAMA3_8B["weight_bytes"] + context_len * batch * LLAMA3_8B["kv_bytes_per_token"]) / 3.35e12
    compute = 2 * LLAMA3_8B["params"] * 512 / H100["peak_flops"]
    assert memory(64, 512) < compute < memory(4000, 512)
    assert ref.decode_step_seconds(LLAMA3_8B, H100, [64] * 512) == approx(compute)
    assert ref.decode_step_seconds(LLAMA3_8B, H100, [4000] * 512) == approx(memory(4000, 512))
    assert ref.decode_step_seconds(LLAMA3_8B, H100, [64]) == approx(memory(64, 1))


# --- where batching stops paying ----------------------------------------------------------------------------

def test_the_line_is_415_tokens_on_h100_and_595_on_h200():
    # scenarios.py: c* = 2 params bandwidth / (flops kv_bytes_per_token)
    assert 2 * 8_030_261_248 * 3.35e12 / (989e12 * 131_072) == pytest.approx(415.048, abs=1e-3)
    assert the_line(LLAMA3_8B, H100) == pytest.approx(415.048, abs=1e-3)
    assert the_line(LLAMA3_8B, H200) == pytest.approx(594.696, abs=1e-3)
    for hw, last_finite in ((H100, 415), (H200, 594)):
        assert math.isfinite(ref.critical_batch_size(LLAMA3_8B, hw, last_finite))
        assert ref.critical_batch_size(LLAMA3_8B, hw, last_finite + 1) == math.inf
    sides = {gpu: [math.isinf(ref.critical_batch_size(LLAMA3_8B, GPUS[gpu], c)) for c in lens]
             for gpu, lens in CRITICAL_CASES}
    assert sides == {"H100": [False, False, False, True, True], "H200": [False, False, True]}


def test_critical_batch_of_an_empty_context_is_the_flop_per_byte_ratio():
    # 989e12 / 3.35e12 = 295.2: the rule of thumb, right only when sequences read no K/V
    assert ref.critical_batch_size(LLAMA3_8B, H100, 0) == approx(989e12 / 3.35e12)


def test_exactly_on_the_line_is_inf():
    model, hw, context_len = ON_THE_LINE
    assert 2 * model["params"] * hw["mem_bandwidth"] == context_len * model["kv_bytes_per_token"] * hw["peak_flops"]
    for module in (ref, sol):
        assert module.critical_batch_size(model, hw, context_len) == math.inf
        assert math.isfinite(module.critical_batch_size(model, hw, context_len - 1))


def random_model_hw_and_line(seed: int) -> tuple[random.Random, dict, dict, float]:
    """The seed's generator, a random model and hardware drawn from it first (as the hidden check draws them), and the
    context length at which their decode turns compute-bound; the caller draws on from the generator."""
    r = random.Random(seed)
    model, hw = random_model(r), random_hw(r)
    return r, model, hw, the_line(model, hw)


@QUICK
@given(seed=seeds)
def test_critical_batch_is_where_decode_turns_compute_bound(seed):
    r, model, hw, line = random_model_hw_and_line(seed)
    context_len = context_near_the_line(r, line, below=True)
    critical = ref.critical_batch_size(model, hw, context_len)
    assert math.isfinite(critical)
    flops = hw["peak_flops"] * hw.get("flops_efficiency", 1.0)

    def compute_bound(batch, length):
        return ref.decode_step_seconds(model, hw, [length] * batch) == 2 * model["params"] * batch / flops
    below, above = math.floor(critical * (1 - 1e-9)), math.ceil(critical * (1 + 1e-9))
    if above <= 5000:  # the step's list of lengths stays small
        assert compute_bound(above, context_len)
        assert below < 1 or not compute_bound(below, context_len)
    far = context_near_the_line(r, line, below=False)
    assert ref.critical_batch_size(model, hw, far) == math.inf
    assert not compute_bound(r.randint(1, 3000), far)  # past the line no batch is compute-bound


@QUICK
@given(seed=seeds)
def test_hidden_contexts_land_on_their_side_outside_the_ambiguous_band(seed):
    r, model, hw, line = random_model_hw_and_line(seed)
    for below in (True, False):
        context_len = context_near_the_line(r, line, below)
        assert (context_len < line) == below and abs(context_len - line) > AMBIGUOUS * line
        assert math.isinf(ref.critical_batch_size(model, hw, context_len)) != below


def critical_other_order(model, hw, context_len):
    """A correct critical_batch_size that multiplies out the fractions instead of dividing seconds."""
    flops = hw["peak_flops"] * hw.get("flops_efficiency", 1.0)
    bandwidth = hw["mem_bandwidth"] * hw.get("bandwidth_efficiency", 1.0)
    denominator = 2 * model["params"] * bandwidth - context_len * model["kv_bytes_per_token"] * flops
    return math.inf if denominator <= 0 else model["weight_bytes"] * flops / denominator


@settings(max_examples=300, deadline=None)
@given(seed=seeds)
def test_comparator_accepts_another_correct_order_near_the_line(seed):
    # the hidden check's draws, at most 1e5 times the cancellation, stay well inside the 1e-9 tolerance
    r, model, hw, line = random_model_hw_and_line(seed)
    context_len = context_near_the_line(r, line, below=bool(r.getrandbits(1)))
    expected = ref.critical_batch_size(model, hw, context_len)
    assert same_number(critical_other_order(model, hw, context_len), expected)
    assert same_number(sol.critical_batch_size(model, hw, context_len), expected)


def test_throughput_grows_while_each_user_slows():
    for context_len in THROUGHPUT_CONTEXTS:
        runs = [ref.decode_throughput(LLAMA3_8B, H100, batch, context_len) for batch in THROUGHPUT_BATCHES]
        for batch, run in zip(THROUGHPUT_BATCHES, runs):
            assert run["tokens_per_second"] == approx(batch / run["step_seconds"])
            assert run["tokens_per_second_per_sequence"] == approx(1 / run["step_seconds"])
        totals = [run["tokens_per_second"] for run in runs]
        users = [run["tokens_per_second_per_sequence"] for run in runs]
        assert totals == sorted(totals) and users == sorted(users, reverse=True)
    # the ceilings of test_public.py: compute at 64 tokens, each sequence's K/V read at 4,000
    ceiling_64, ceiling_4000 = 989e12 / (2 * 8_030_261_248), 3.35e12 / (4000 * 131_072)
    assert ceiling_64 == pytest.approx(61_580, abs=1) and ceiling_4000 == pytest.approx(6_390, abs=1)
    assert ref.decode_throughput(LLAMA3_8B, H100, 1024, 64)["tokens_per_second"] == approx(ceiling_64)
    assert ref.decode_throughput(LLAMA3_8B, H100, 1024, 4000)["tokens_per_second"] < ceiling_4000


def test_efficiency_factors_scale_the_peaks():
    derated = {**H100, "flops_efficiency": 0.5, "bandwidth_efficiency": 0.25}
    slow = {"peak_flops": H100["peak_flops"] * 0.5, "mem_bandwidth": H100["mem_bandwidth"] * 0.25}
    for n in (1, 8000):
        assert ref.prefill_seconds(LLAMA3_8B, derated, n) == approx(ref.prefill_seconds(LLAMA3_8B, slow, n))
    assert ref.decode_step_seconds(LLAMA3_8B, derated, [9000]) == approx(
        ref.decode_step_seconds(LLAMA3_8B, slow, [9000]))


def random_session(seed: int, draw_events=random_events) -> tuple[random.Random, dict, dict, list]:
    """The seed's generator, and a random model, hardware and session (`draw_events`) drawn from it first, as the
    hidden checks draw them; the caller draws on from the generator."""
    r = random.Random(seed)
    return r, random_model(r), random_hw(r), draw_events(r)


@QUICK
@given(seed=seeds, prefix_cache=st.booleans())
def test_segments_are_back_to_back_and_totals_add_up(seed, prefix_cache):
    _, model, hw, events = random_session(seed)
    timeline = ref.session_timeline(model, hw, events, prefix_cache)
    segments = timeline["segments"]
    assert segments[0]["start"] == 0.0
    assert all(a["end"] == b["start"] for a, b in zip(segments, segments[1:]))
    assert timeline["total"] == segments[-1]["end"]
    assert timeline["ttft"] == next(s["end"] for s in segments if s["kind"] == "prefill")
    for kind in KINDS:
        spent = sum(s["end"] - s["start"] for s in segments if s["kind"] == kind)
        assert timeline[kind] == pytest.approx(spent, rel=1e-9, abs=1e-12)
    generates = [e["tokens"] for e in events if e["kind"] == "generate"]
    waits = [e["kind"] for e in events if e["kind"] in ("tool", "network")]
    assert [s["kind"] for s in segments if s["kind"] == "prefill"] == ["prefill"] * len(generates)
    assert sum(s["kind"] == "decode" for s in segments) == sum(m > 1 for m in generates)
    assert [s["kind"] for s in segments if s["kind"] in ("tool", "network")] == waits


@QUICK
@given(seed=seeds)
def test_prefix_cache_changes_only_prefill(seed):
    _, model, hw, events = random_session(seed)
    cached, uncached = (ref.session_timeline(model, hw, events, flag) for flag in (True, False))
    for kind in ("decode", "tool", "network"):
        assert cached[kind] == uncached[kind]
    prefills = [[s["end"] - s["start"] for s in timeline["segments"] if s["kind"] == "prefill"]
                for timeline in (cached, uncached)]
    assert prefills[0][0] == prefills[1][0]
    # later prefills compute fewer tokens with the cache but read its K/V; a short context recomputed from
    # scratch, bound by the weight read alone, can be cheaper than that read: never by more than the read itself
    bandwidth = hw["mem_bandwidth"] * hw.get("bandwidth_efficiency", 1.0)
    context, computed, cached_per_prefill = 0, 0, []
    for event in events:
        if event["kind"] == "generate":
            cached_per_prefill.append(computed)
            context = computed = context + event["tokens"]
        elif event["kind"] in ("user", "tool_result"):
            context += event["tokens"]
    for with_cache, without, cached_tokens in zip(*prefills, cached_per_prefill):
        assert with_cache <= (without + cached_tokens * model["kv_bytes_per_token"] / bandwidth) * (1 + 1e-12)


def test_prefix_cache_shortens_long_prefills():
    # past the weight-bound regime recomputation costs more than reading the cache
    for events in SESSIONS.values():
        cached, uncached = (ref.session_timeline(LLAMA3_8B, H100, events, flag) for flag in (True, False))
        assert cached["prefill"] <= uncached["prefill"]


def test_each_optimisation_shortens_its_segment_most():
    baseline = ref.session_timeline(LLAMA3_8B, H100, BASELINE, prefix_cache=False)
    for change, events, prefix_cache, segment in OPTIMISATIONS:
        changed = ref.session_timeline(LLAMA3_8B, H100, events, prefix_cache)
        saving = {kind: baseline[kind] - changed[kind] for kind in KINDS}
        assert max(saving, key=saving.get) == segment, (change, saving)
        assert saving[segment] > 0 and all(s >= -1e-12 for s in saving.values()), (change, saving)
    assert baseline["tool"] - ref.session_timeline(LLAMA3_8B, H100, OPTIMISATIONS[2][1], False)["tool"] == \
        pytest.approx(2 * 0.8)


def test_layout_session_has_the_documented_shape():
    timeline = ref.session_timeline(LLAMA3_8B, H100, LAYOUT)
    assert [s["kind"] for s in timeline["segments"]] == ["network", "prefill", "tool", "prefill", "decode",
                                                         "prefill", "decode", "network"]
    assert timeline["ttft"] == approx(0.05 + ref.prefill_seconds(LLAMA3_8B, H100, 40))
    # the second prefill computes the 12 new tokens on top of 40 + 1 computed ones
    assert timeline["segments"][3]["end"] - timeline["segments"][3]["start"] == pytest.approx(
        ref.prefill_seconds(LLAMA3_8B, H100, 12, 41), rel=1e-9)
    # the third has nothing pending: 0 s, still a segment
    assert timeline["segments"][5]["end"] == timeline["segments"][5]["start"]
    uncached = ref.session_timeline(LLAMA3_8B, H100, LAYOUT, prefix_cache=False)
    assert uncached["segments"][5]["end"] - uncached["segments"][5]["start"] == pytest.approx(
        ref.prefill_seconds(LLAMA3_8B, H100, 40 + 1 + 12 + 6), rel=1e-9)


def test_compact_layout_worked_by_hand():
    timeline = ref.session_timeline(LLAMA3_8B, H100, COMPACT_LAYOUT)
    assert [s["kind"] for s in timeline["segments"]] == ["prefill", "decode", "compact", "prefill", "decode", "tool",
                                                         "compact", "compact", "prefill", "decode"]
    took = [s["end"] - s["start"] for s in timeline["segments"]]
    # the one-token summary call over 520 computed tokens has nothing pending: 0 s and no decode run
    assert took[2] == 0.0
    # then the 40 summary tokens and 10 new ones are all prefilled, from scratch, and decode reads 51 and 52 tokens
    assert took[3] == pytest.approx(ref.prefill_seconds(LLAMA3_8B, H100, 50, 0), rel=1e-9)
    assert took[4] == pytest.approx(ref.decode_step_seconds(LLAMA3_8B, H100, [51])
                                    + ref.decode_step_seconds(LLAMA3_8B, H100, [52]), rel=1e-9)
    # the second compact prefills the 300-token tool result over 53 computed tokens and decodes 59 tokens over them
    assert took[6] == pytest.approx(ref.prefill_seconds(LLAMA3_8B, H100, 300, 53), rel=1e-9)
    assert took[7] == pytest.approx(sum(ref.decode_step_seconds(LLAMA3_8B, H100, [353 + j]) for j in range(1, 60)),
                                    rel=1e-9)
    assert took[8] == pytest.approx(ref.prefill_seconds(LLAMA3_8B, H100, 60, 0), rel=1e-9)
    assert timeline["compact"] == pytest.approx(took[2] + took[6] + took[7], rel=1e-9)
    assert timeline["ttft"] == timeline["segments"][0]["end"]


def test_compaction_shortens_later_decode_and_prefill_at_the_price_of_its_call():
    before, after = (ref.session_timeline(LLAMA3_8B, H100, events) for events in (LONG_AGENT, COMPACTED))
    assert after["decode"] < 0.7 * before["decode"] and after["prefill"] < before["prefill"]
    assert after["compact"] > 0 and before["compact"] == 0 and after["tool"] == before["tool"]
    assert after["total"] < before["total"]
    # the summary call itself decodes over the long context: its steps are the slowest of the session
    compact = next(s for s in after["segments"][::-1] if s["kind"] == "compact")
    steps = 999
    assert (compact["end"] - compact["start"]) / steps > ref.decode_step_seconds(LLAMA3_8B, H100, [20_000])


@QUICK
@given(seed=seeds, prefix_cache=st.booleans())
def test_after_a_compact_the_whole_summary_is_prefilled(seed, prefix_cache):
    _, model, hw, events = random_session(seed, random_compacted_events)
    timeline = ref.session_timeline(model, hw, events, prefix_cache)
    prefills = iter(s for s in timeline["segments"] if s["kind"] == "prefill")
    summary, added, ttft = None, 0, None
    for event in events:
        if event["kind"] == "generate":
            prefill = next(prefills)
            ttft = prefill["end"] if ttft is None else ttft
            if summary is not None:  # the first generate after a compact: the summary and what came since, cold
                assert prefill["end"] - prefill["start"] == pytest.approx(
                    ref.prefill_seconds(model, hw, summary + added, 0), rel=1e-9, abs=1e-15)
            summary = None
        elif event["kind"] == "compact":
            summary, added = event["summary_tokens"], 0
        elif event["kind"] in ("user", "tool_result"):
            added += event["tokens"]
    assert timeline["ttft"] == ttft
    spent = sum(s["end"] - s["start"] for s in timeline["segments"] if s["kind"] == "compact")
    assert timeline["compact"] == pytest.approx(spent, rel=1e-9, abs=1e-12)


@QUICK
@given(seed=seeds)
def test_keeping_the_cache_is_what_the_mutant_does_and_nothing_without_a_cache(seed):
    _, model, hw, events = random_session(seed, random_compacted_events)
    wrong = mutant("timeline", "compaction_keeps_cache")
    assert timeline_difference(wrong.session_timeline(model, hw, events, True),
                               timeline_keeping_cache(ref, model, hw, events)) is None
    assert timeline_difference(wrong.session_timeline(model, hw, events, False),
                               ref.session_timeline(model, hw, events, False)) is None
    assert "compaction_keeps_cache" not in misconception_values(ref, "session_timeline", model, hw, events, False)


# --- the solution and the comparator ----------------------------------------------------------------------

@QUICK
@given(seed=seeds)
def test_solution_matches_reference(seed):
    r, model, hw, events = random_session(seed)
    n, c = r.randint(0, 20_000), r.randint(0, 50_000)
    assert sol.prefill_seconds(model, hw, n, c) == pytest.approx(ref.prefill_seconds(model, hw, n, c), rel=1e-12)
    lens = [r.randint(0, 50_000) for _ in range(r.randint(1, 300))]
    assert sol.decode_step_seconds(model, hw, lens) == pytest.approx(ref.decode_step_seconds(model, hw, lens),
                                                                     rel=1e-12)
    batch, context_len = r.randint(1, 2000), r.randint(0, 100_000)
    got, want = (m.decode_throughput(model, hw, batch, context_len) for m in (sol, ref))
    assert got == pytest.approx(want, rel=1e-12)
    for prefix_cache in (True, False):
        expected = ref.session_timeline(model, hw, events, prefix_cache)
        assert timeline_difference(sol.session_timeline(model, hw, events, prefix_cache), expected) is None


def summed_differently(timeline: dict) -> dict:
    """The same timeline with boundaries re-summed from the durations in reverse and totals from end - start."""
    durations = [s["end"] - s["start"] for s in timeline["segments"]]
    segments, clock = [], 0.0
    for segment, duration in zip(timeline["segments"], durations):
        segments.append({**segment, "start": clock, "end": clock + duration})
        clock = sum(reversed(durations[:len(segments)]))
    totals = {kind: sum(s["end"] - s["start"] for s in segments if s["kind"] == kind) for kind in KINDS}
    ttft = next(s["end"] for s in segments if s["kind"] == "prefill")
    return {"segments": segments, "ttft": ttft, "total": segments[-1]["end"], **totals}


@settings(max_examples=200, deadline=None)
@given(seed=seeds)
def test_comparator_accepts_other_summation_orders(seed):
    # the hidden checks' random sessions with a correct submission that adds its seconds in another order
    _, model, hw, events = random_session(seed)
    expected = ref.session_timeline(model, hw, events)
    assert timeline_difference(summed_differently(expected), expected) is None


BAD_CALLS = [
    ("new_tokens", "prefill_seconds", (LLAMA3_8B, H100, -1)),
    ("cached_tokens", "prefill_seconds", (LLAMA3_8B, H100, 3, -1)),
    ("context_lens", "decode_step_seconds", (LLAMA3_8B, H100, [5, -2])),
    ("tokens", "session_timeline", (LLAMA3_8B, H100, [{"kind": "tool_result", "tokens": -1}])),
    ("tokens", "session_timeline", (LLAMA3_8B, H100, [{"kind": "user", "tokens": 3},
                                                      {"kind": "generate", "tokens": 0}])),
    ("seconds", "session_timeline", (LLAMA3_8B, H100, [{"kind": "network", "seconds": -1.0}])),
    ("kind", "session_timeline", (LLAMA3_8B, H100, [{"kind": "sleep", "seconds": 1.0}])),
    ("context_len", "critical_batch_size", (LLAMA3_8B, H100, -1)),
    ("batch", "decode_throughput", (LLAMA3_8B, H100, 0, 10)),
    ("context_len", "decode_throughput", (LLAMA3_8B, H100, 1, -1)),
]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, fn, args", BAD_CALLS)
def test_bad_arguments_name_the_argument(module, argument, fn, args):
    with pytest.raises(ValueError, match=argument):
        getattr(module, fn)(*args)


# --- stub, hints, mutants ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [("prefill_seconds", (LLAMA3_8B, H100, 10)),
                                      ("decode_step_seconds", (LLAMA3_8B, H100, [10])),
                                      ("critical_batch_size", (LLAMA3_8B, H100, 10)),
                                      ("decode_throughput", (LLAMA3_8B, H100, 4, 10)),
                                      ("session_timeline", (LLAMA3_8B, H100, LAYOUT))])
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)


def test_hints_cover_every_function_and_misconception():
    assert set(hints.load("timeline")["functions"]) == set(HINTS)
    assert set(hints.misconception_ids("timeline")) == MISCONCEPTIONS


def code_tokens(text: str) -> list[str]:
    """Words, numbers and single punctuation marks: what a copied sentence shares with its copy."""
    return re.findall(r"\w+|[^\w\s]", text)


RUN = 8  # tokens: a phrase, not a shared word or two (tests/test_hint_overlap.py checks level 3 against the code)


@pytest.mark.parametrize("fn", HINTS)
def test_hints_do_not_repeat_the_docstring(fn):
    docstring = code_tokens(getattr(stub, fn.split(".")[0]).__doc__ + stub.__doc__)
    shared = {tuple(docstring[i:i + RUN]) for i in range(len(docstring) - RUN + 1)}
    for level in (1, 2, 3):
        hint = code_tokens(hints.hint("timeline", fn, level))
        copied = [" ".join(hint[i:i + RUN]) for i in range(len(hint) - RUN + 1)
                  if tuple(hint[i:i + RUN]) in shared]
        assert not copied, f"level {level} of {fn} repeats the docstring: {copied[:3]}"


EXPECT = {"prefill_seconds": expect_seconds, "decode_step_seconds": expect_seconds,
          "critical_batch_size": expect_critical_batch, "decode_throughput": expect_throughput,
          "session_timeline": expect_timeline}
CALLS = ([("prefill_seconds", args) for args in ((1, 100_000), (8, 100_000), (500, 6000), (2048, 0))]
         + [("decode_step_seconds", (lens,)) for lens in ([8000], [1000, 2000, 4000, 8000], [64] * 512,
                                                           [4000] * 512)]
         + [("critical_batch_size", (c,)) for c in (0, 64, 415, 416, 4000)]
         + [("decode_throughput", (b, c)) for b in (1, 1024) for c in THROUGHPUT_CONTEXTS]
         + [("session_timeline", (events, True)) for events in [*SESSIONS.values(), COMPACT_LAYOUT, COMPACTED]])


def reported(module, fn: str, hw: dict, args: tuple) -> str | None:
    """What the checks' comparison says of the module's answer: 'pass', a misconception id, or None."""
    right = getattr(ref, fn)(LLAMA3_8B, hw, *args)
    try:
        EXPECT[fn](getattr(module, fn)(LLAMA3_8B, hw, *args), right, fn,
                   misconception_values(ref, fn, LLAMA3_8B, hw, *args))
    except CheckFailure as failure:
        return failure.misconception
    return "pass"


@pytest.mark.parametrize("misconception", sorted(MISCONCEPTIONS))
def test_mutant_is_diagnosed_by_the_checks_comparison(misconception):
    module = mutant("timeline", misconception)
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')
    ids = {reported(module, fn, hw, args) for fn, args in CALLS for hw in GPUS.values()}
    assert misconception in ids
    assert ids <= MISCONCEPTIONS | {"pass", None}, ids


def test_the_solution_passes_every_comparison():
    assert {reported(sol, fn, hw, args) for fn, args in CALLS for hw in GPUS.values()} == {"pass"}


def test_critical_batch_diagnoses():
    right, what = math.inf, "critical_batch_size(...)"
    for finite in (295.2, -12.0, 0.0):
        with pytest.raises(CheckFailure) as failure:
            expect_critical_batch(finite, right, what, {})
        assert failure.value.misconception == "batch_always_compute_bound"
    expect_critical_batch(math.inf, right, what, {})
    with pytest.raises(CheckFailure) as failure:
        expect_critical_batch(math.inf, 349.0, what, {})
    assert failure.value.misconception is None
