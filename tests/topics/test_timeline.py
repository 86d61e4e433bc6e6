"""Project tests for the timeline topic: the reference against closed forms and layout invariants, the solution
against the reference, the check comparator's tolerance, the stub, the hints and the mutants."""
import random
import types
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from exercises import timeline as stub
from grader.checks.timeline.expect import misconception_values, timeline_difference
from grader.checks.timeline.scenarios import (BASELINE, GPUS, H100, H200, LAYOUT, LLAMA3_8B, OPTIMISATIONS,
                                              SESSIONS)
from grader.checks.timeline.test_hidden import random_events, random_hw, random_model
from reference import timeline as ref
from solutions import timeline as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "timeline"
FUNCTIONS = ("prefill_seconds", "decode_step_seconds", "session_timeline")
MISCONCEPTIONS = {"decode_compute_bound", "ignores_kv_read", "prefill_whole_context_with_cache"}
KINDS = ("prefill", "decode", "tool", "network")
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


def test_decode_is_compute_bound_only_at_large_batch():
    memory = (LLAMA3_8B["weight_bytes"] + 64 * 512 * LLAMA3_8B["kv_bytes_per_token"]) / H100["mem_bandwidth"]
    compute = 2 * LLAMA3_8B["params"] * 512 / H100["peak_flops"]
    assert compute > memory
    assert ref.decode_step_seconds(LLAMA3_8B, H100, [64] * 512) == approx(compute)
    assert ref.decode_step_seconds(LLAMA3_8B, H100, [64]) == approx(
        (LLAMA3_8B["weight_bytes"] + 64 * LLAMA3_8B["kv_bytes_per_token"]) / H100["mem_bandwidth"])


def test_efficiency_factors_scale_the_peaks():
    derated = {**H100, "flops_efficiency": 0.5, "bandwidth_efficiency": 0.25}
    slow = {"peak_flops": H100["peak_flops"] * 0.5, "mem_bandwidth": H100["mem_bandwidth"] * 0.25}
    for n in (1, 8000):
        assert ref.prefill_seconds(LLAMA3_8B, derated, n) == approx(ref.prefill_seconds(LLAMA3_8B, slow, n))
    assert ref.decode_step_seconds(LLAMA3_8B, derated, [9000]) == approx(
        ref.decode_step_seconds(LLAMA3_8B, slow, [9000]))


@QUICK
@given(seed=seeds, prefix_cache=st.booleans())
def test_segments_are_back_to_back_and_totals_add_up(seed, prefix_cache):
    r = random.Random(seed)
    model, hw, events = random_model(r), random_hw(r), random_events(r)
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
def test_prefix_cache_only_shortens_prefill(seed):
    r = random.Random(seed)
    model, hw, events = random_model(r), random_hw(r), random_events(r)
    cached, uncached = (ref.session_timeline(model, hw, events, flag) for flag in (True, False))
    assert cached["prefill"] <= uncached["prefill"] * (1 + 1e-12)
    for kind in ("decode", "tool", "network"):
        assert cached[kind] == uncached[kind]
    first = [s for s in cached["segments"] if s["kind"] == "prefill"][0]
    assert first == [s for s in uncached["segments"] if s["kind"] == "prefill"][0]


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
                                                         "network"]
    assert timeline["ttft"] == approx(0.05 + ref.prefill_seconds(LLAMA3_8B, H100, 40))
    # the second prefill computes the 12 new tokens on top of 40 + 1 computed ones
    assert timeline["segments"][3]["end"] - timeline["segments"][3]["start"] == pytest.approx(
        ref.prefill_seconds(LLAMA3_8B, H100, 12, 41), rel=1e-9)


# --- the solution and the comparator ----------------------------------------------------------------------

@QUICK
@given(seed=seeds)
def test_solution_matches_reference(seed):
    r = random.Random(seed)
    model, hw, events = random_model(r), random_hw(r), random_events(r)
    n, c = r.randint(0, 20_000), r.randint(0, 50_000)
    assert sol.prefill_seconds(model, hw, n, c) == pytest.approx(ref.prefill_seconds(model, hw, n, c), rel=1e-12)
    lens = [r.randint(0, 50_000) for _ in range(r.randint(1, 300))]
    assert sol.decode_step_seconds(model, hw, lens) == pytest.approx(ref.decode_step_seconds(model, hw, lens),
                                                                     rel=1e-12)
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
    r = random.Random(seed)
    model, hw, events = random_model(r), random_hw(r), random_events(r)
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
]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, fn, args", BAD_CALLS)
def test_bad_arguments_name_the_argument(module, argument, fn, args):
    with pytest.raises(ValueError, match=argument):
        getattr(module, fn)(*args)


# --- stub, hints, mutants ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [("prefill_seconds", (LLAMA3_8B, H100, 10)),
                                      ("decode_step_seconds", (LLAMA3_8B, H100, [10])),
                                      ("session_timeline", (LLAMA3_8B, H100, LAYOUT))])
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)



def mutant(misconception: str) -> types.ModuleType:
    """The solution with the mutant appended, as the selftest builds it."""
    module = types.ModuleType(f"timeline_{misconception}")
    source = (ROOT / "solutions" / "timeline.py").read_text() + "\n" + (MUTANTS / f"{misconception}.py").read_text()
    exec(compile(source, str(MUTANTS / f"{misconception}.py"), "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("misconception", sorted(MISCONCEPTIONS))
def test_mutant_output_is_what_its_misconception_predicts(misconception):
    module = mutant(misconception)
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')
    differs = 0
    calls = [("decode_step_seconds", (lens,)) for lens in ([8000], [1000, 2000, 4000, 8000], [64] * 512)]
    calls += [("session_timeline", (events, True)) for events in SESSIONS.values()]
    for fn, args in calls:
        for hw in GPUS.values():
            got = getattr(module, fn)(LLAMA3_8B, hw, *args)
            right = getattr(ref, fn)(LLAMA3_8B, hw, *args)
            same = (got == pytest.approx(right, rel=1e-12) if fn == "decode_step_seconds"
                    else timeline_difference(got, right) is None)
            if same:
                continue
            differs += 1
            predicted = misconception_values(ref, fn, LLAMA3_8B, hw, *args)
            if fn == "decode_step_seconds":
                assert got == pytest.approx(predicted[misconception], rel=1e-12), (fn, args)
            elif misconception != "decode_compute_bound":  # not predicted for whole sessions
                assert timeline_difference(got, predicted[misconception]) is None, (fn, args)
    assert differs > 0
