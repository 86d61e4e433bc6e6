"""Project tests for the serving topic: the reference against the hand-worked traces, closed forms and numpy, the
lesson's claims, the solution against the reference, the comparators' tolerance, the points rule, the stub, the
hints and the mutants."""
import ast
import random
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exercises import serving as stub
from grader import hints
from grader.checks.serving import test_hidden, test_public
from grader.checks.serving.expect import metrics_difference, records_difference
from grader.checks.serving.invariants import expect_engine_invariants, expect_limit_invariants
from grader.checks.serving.lesson import BUDGETS, CHUNK_SEATS, KV_LIMITS, KV_SEATS, SEATS, SLO, SPAN, lesson_requests
from grader.checks.serving.lesson import COST as LESSON_COST
from grader.checks.serving.logs import random_log, random_slo
from grader.checks.serving.misconceptions import engine_run, metrics_predictions, simulate_predictions
from grader.checks.serving.records import (CONCURRENT, CONCURRENT_DURATION, EMPTY, EVEN, FAILED, SKEWED, SLO_DURATION,
                                           SLO_LOG, SLOS, TOKENS)
from grader.checks.serving.test_public import code_records
from grader.checks.serving.traces import COST, LIMITS, PREEMPTIONS, TRACES
from grader.checks.serving.workloads import TICK, limited_case, random_case
from grader.engine import CheckFailure
from mutated import mutant
from reference import serving as ref
from solutions import serving as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "serving"
FUNCTIONS = ("simulate", "serving_metrics")
MISCONCEPTIONS = {"tpot_includes_first_token", "failed_in_latency", "mean_of_rates", "nearest_rank_percentile",
                  "ignores_max_num_seqs", "first_token_without_prefill", "preempts_oldest", "preemption_keeps_cache",
                  "prefill_not_chunked", "admits_over_max_model_len"}
ENGINE_MISCONCEPTIONS = ["ignores_max_num_seqs", "first_token_without_prefill", "preempts_oldest",
                         "preemption_keeps_cache", "prefill_not_chunked", "admits_over_max_model_len"]
QUICK = settings(max_examples=60, deadline=None)
seeds = st.integers(0, 2**31 - 1)


def outcome(records: list) -> dict:
    """{id: (status, token_times, finish)}, the form of the hand-worked traces."""
    return {r["id"]: (r["status"], r["token_times"], r["finish"]) for r in records}


# --- the reference against the hand-worked traces -----------------------------------------------------------

@pytest.mark.parametrize("name", sorted(TRACES))
def test_reference_reproduces_the_hand_worked_trace(name):
    requests, policy, max_num_seqs, hand = TRACES[name]
    records = ref.simulate(requests, policy, max_num_seqs, COST, **LIMITS.get(name, {}))
    assert outcome(records) == hand  # exact: every time is a multiple of 1/4
    assert [r["id"] for r in records] == [r["id"] for r in requests]
    assert {r["id"]: r["preemptions"] for r in records} == PREEMPTIONS.get(name, dict.fromkeys(hand, 0))
    for r in records:
        assert r["output_tokens"] == len(r["token_times"])
        assert r["first_token"] == (r["token_times"][0] if r["token_times"] else None)


def test_static_batching_delays_the_late_arrival_and_continuous_stretches_the_running_one():
    requests, _, max_num_seqs, _ = TRACES["static"]
    static, continuous = (outcome(ref.simulate(requests, p, max_num_seqs, COST)) for p in ("static", "continuous"))
    assert static["c"][1][0] - 1.0 == 8.5 and continuous["c"][1][0] - 1.0 == 4.5   # c's TTFT
    assert static["a"][2] < continuous["a"][2]   # a shares its steps with c's prefill and decode


def test_without_a_seat_limit_everyone_is_prefilled_in_one_step():
    requests, policy, _, _ = TRACES["admission"]
    wide = ref.simulate(requests, policy, 3, COST)
    assert [r["first_token"] for r in wide] == [1.0 + 0.25 * 16] * 3


# --- exactness: times are whole ticks, and no decision hinges on a float tie ----------------------------------

@QUICK
@given(seed=seeds, policy=st.sampled_from(["continuous", "static"]))
def test_engine_times_are_whole_ticks(seed, policy):
    requests, max_num_seqs, cost = random_case(random.Random(seed), deadlines=True)
    for r in ref.simulate(requests, policy, max_num_seqs, cost):
        for t in [r["finish"], *r["token_times"]]:
            assert (t / TICK).is_integer()


def plain_comparisons_and_reordered_costs(monkeypatch) -> None:
    """Make the reference compare times with a bare <= and add a step's costs in the opposite order."""
    monkeypatch.setattr(ref, "TOLERANCE", 0.0)
    original = ref.validated_cost

    def reordered(cost):
        coefficients = original(cost)
        return dict(reversed(list(coefficients.items())))
    monkeypatch.setattr(ref, "validated_cost", reordered)


@settings(max_examples=200, deadline=None)
@given(seed=seeds, policy=st.sampled_from(["continuous", "static"]))
def test_no_decision_hinges_on_the_tolerance_or_the_order_of_additions(seed, policy):
    requests, max_num_seqs, cost = random_case(random.Random(seed), deadlines=True)
    expected = ref.simulate(requests, policy, max_num_seqs, cost)
    with pytest.MonkeyPatch.context() as monkeypatch:
        plain_comparisons_and_reordered_costs(monkeypatch)
        assert ref.simulate(requests, policy, max_num_seqs, cost) == expected


# --- the reference's invariants ------------------------------------------------------------------------------

@QUICK
@given(seed=seeds, policy=st.sampled_from(["continuous", "static"]))
def test_reference_satisfies_the_engine_invariants(seed, policy):
    requests, max_num_seqs, cost = random_case(random.Random(seed), deadlines=True)
    expect_engine_invariants(ref.simulate(requests, policy, max_num_seqs, cost), requests, max_num_seqs, cost,
                             "reference")


@pytest.mark.parametrize("misconception", ["ignores_max_num_seqs", "first_token_without_prefill"])
def test_invariants_catch_the_engine_misconceptions(misconception):
    requests, policy, max_num_seqs, _ = TRACES["admission"]
    wrong = simulate_predictions(ref, requests, policy, max_num_seqs, COST)[misconception]
    with pytest.raises(CheckFailure) as caught:
        expect_engine_invariants(wrong, requests, max_num_seqs, COST, "wrong")
    assert caught.value.misconception == misconception


def limited(seed: int) -> tuple:
    """(requests, policy, max_num_seqs, cost, limits) of a random run under some resource limits."""
    r = random.Random(seed)
    requests, max_num_seqs, cost, limits = limited_case(r, r.random() < 0.5, kv=r.random() < 0.8,
                                                        chunked=r.random() < 0.5, max_len=r.random() < 0.5)
    return requests, r.choice(["continuous", "static"]), max_num_seqs, cost, limits


@settings(max_examples=150, deadline=None)
@given(seed=seeds)
def test_reference_satisfies_the_limit_invariants(seed):
    requests, policy, max_num_seqs, cost, limits = limited(seed)
    records = ref.simulate(requests, policy, max_num_seqs, cost, **limits)
    expect_limit_invariants(records, requests, max_num_seqs, cost, limits, "reference")
    assert sol.simulate(requests, policy, max_num_seqs, cost, **limits) == records


def test_limited_workloads_preempt_reject_and_chunk_often():
    runs = [limited(seed) for seed in range(60)]
    records = [ref.simulate(q, p, m, c, **lim) for q, p, m, c, lim in runs]
    assert sum(any(r["preemptions"] for r in recs) for recs in records) >= 15
    assert sum(any(r["status"] == "rejected" for r in recs) for recs in records) >= 15
    chunked = [(requests, limits["max_num_batched_tokens"]) for requests, *_, limits in runs
               if "max_num_batched_tokens" in limits]
    assert sum(any(q["prompt_tokens"] > budget for q in requests) for requests, budget in chunked) >= 5


class RunningOrder(ref.Engine):
    """vLLM V1's planning: walk the running requests in admission order, each taking what it still needs (a decode
    token, or what is left of its prompt) from what is left of the budget, with no decodes-first pass."""

    def plan(self, batch):
        work, left = {}, self.budget
        for i in batch:
            if left >= 1:
                work[i] = min(self.pending[i] or 1, left)
                left -= work[i]
        return work


@settings(max_examples=300, deadline=None)
@given(seed=seeds)
def test_decodes_first_plans_the_same_steps_as_v1s_walk_in_admission_order(seed):
    # the stub and the notebook say so: with admission only when a first chunk fits, at most the request admitted
    # last is still prefilling, so decodes-first (vLLM V0, V1's docs) and V1's walk of `running` coincide
    r = random.Random(seed)
    requests, max_num_seqs, cost, limits = limited_case(r, r.random() < 0.5, kv=r.random() < 0.7, chunked=True,
                                                        max_len=r.random() < 0.3)
    policy = r.choice(["continuous", "static"])
    walked = engine_run(ref, RunningOrder, requests, policy, max_num_seqs, cost, limits)
    assert walked == ref.simulate(requests, policy, max_num_seqs, cost, **limits)


@pytest.mark.parametrize("max_num_seqs, limits", [(CHUNK_SEATS, {"max_num_batched_tokens": 2048}),
                                                  (KV_SEATS[1], KV_LIMITS)])
def test_the_lessons_steps_are_the_same_in_v1s_order(max_num_seqs, limits):
    requests = lesson_requests()
    assert engine_run(ref, RunningOrder, requests, "continuous", max_num_seqs, LESSON_COST, limits) == \
        ref.simulate(requests, "continuous", max_num_seqs, LESSON_COST, **limits)


@pytest.mark.parametrize("name, misconception", [("too_long", "admits_over_max_model_len"),
                                                 ("preemption", "preemption_keeps_cache"),
                                                 ("chunked", "prefill_not_chunked")])
def test_limit_invariants_catch_the_limit_misconceptions(name, misconception):
    requests, policy, max_num_seqs, _ = TRACES[name]
    limits = LIMITS[name]
    wrong = simulate_predictions(ref, requests, policy, max_num_seqs, COST, **limits)[misconception]
    with pytest.raises(CheckFailure) as caught:
        expect_limit_invariants(wrong, requests, max_num_seqs, COST, limits, "wrong")
    assert caught.value.misconception == misconception


# --- serving_metrics against closed forms and numpy ----------------------------------------------------------

@QUICK
@given(values=st.lists(st.floats(0, 1e4, allow_nan=False), min_size=1, max_size=60),
       q=st.floats(0, 100))
def test_percentile_is_numpys_linear_interpolation(values, q):
    got = ref.percentile(sorted(values), q)
    assert got == pytest.approx(float(np.percentile(values, q)), rel=1e-12, abs=1e-9)


def test_percentiles_of_the_skewed_log():
    m = ref.serving_metrics(SKEWED, 10.0, percentiles=(25, 50, 90, 99, 99.9))
    assert m["ttft"]["p90"] == pytest.approx(2 + 0.6 * 8) and m["ttft"]["p50"] == 1.5
    assert m["ttft"]["p99.9"] == pytest.approx(2 + 0.996 * 8) and m["ttft"]["mean"] == 3.0
    assert ref.serving_metrics(EVEN, 5.0)["ttft"]["p50"] == 2.5


def test_tpot_and_itl_of_the_tokens_log():
    m = ref.serving_metrics(TOKENS, 5.0)
    assert m["tpot"]["mean"] == pytest.approx((1.0 + 2.5 / 3) / 2)
    assert m["itl"]["mean"] == pytest.approx(4.5 / 5) and m["itl"]["p50"] == 1.0
    assert m["ttft"]["mean"] == pytest.approx((1.0 + 1.5 + 1.0) / 3)


def test_failed_requests_are_counted_not_timed():
    m = ref.serving_metrics(FAILED, 10.0)
    assert m["counts"] == {"ok": 2, "cancelled": 1, "timeout": 1, "rejected": 0}
    assert m["ttft"]["mean"] == 1.0 and m["e2e"]["mean"] == 2.0 and m["itl"]["p99"] == pytest.approx(1 - 0.02 * 0.5)
    assert m["request_throughput"] == 0.2 and m["output_throughput"] == 0.5


def test_goodput_is_inclusive_and_one_token_requests_meet_tpot_and_itl():
    met = [ref.serving_metrics(SLO_LOG, SLO_DURATION, slo)["goodput"] * SLO_DURATION for slo in SLOS]
    assert met == [3, 2, 3, 3, 4, 4]


def test_throughput_is_the_servers_not_a_mean_of_rates():
    m = ref.serving_metrics(CONCURRENT, CONCURRENT_DURATION)
    assert m["output_throughput"] == pytest.approx(4 * 81 / 11) and m["request_throughput"] == pytest.approx(4 / 11)
    assert metrics_predictions(ref, CONCURRENT)["mean_of_rates"]["output_throughput"] == pytest.approx(81 / 11)


def test_statistics_over_nothing_are_none():
    for name, records in EMPTY.items():
        m = ref.serving_metrics(records, 2.0, percentiles=(50, 99.9))
        assert m["tpot"] == m["itl"] == {"mean": None, "p50": None, "p99.9": None}, name
        assert set(m["counts"]) == {"ok", "cancelled", "timeout", "rejected"}
    assert ref.serving_metrics(EMPTY["only failed"], 2.0)["output_throughput"] == 0.0


# --- the lessons ----------------------------------------------------------------------------------------------

def lesson_run(max_num_seqs: int, limits: dict) -> tuple:
    """The reference's records of the lesson at one setting and their metrics (SLO on TTFT)."""
    records = ref.simulate(lesson_requests(), "continuous", max_num_seqs, LESSON_COST, **limits)
    return records, ref.serving_metrics(records, SPAN, SLO)


def test_lesson_1_the_small_engine_sheds_half_the_class_and_shows_a_better_p99():
    (_, small), (_, middle), (_, large) = (lesson_run(m, {}) for m in SEATS)
    total = sum(small["counts"].values())
    assert small["counts"]["timeout"] >= 0.4 * total          # about half the class times out at 4 seats
    assert small["ttft"]["p99"] < middle["ttft"]["p99"]        # and the survivors' tail looks better than at 8
    assert small["counts"]["timeout"] > 2 * middle["counts"]["timeout"]
    assert small["goodput"] < middle["goodput"] < large["goodput"]  # goodput tells the truth
    for m in (small, middle, large):
        assert m["ttft"]["mean"] < SLO["ttft"] < m["ttft"]["p99"]  # the mean hides the p99 at every size


def test_lesson_1_counting_the_timed_out_waits_makes_the_small_engines_tail_far_worse():
    records, metrics = lesson_run(SEATS[0], {})
    waits = [(r["first_token"] if r["first_token"] is not None else r["finish"]) - r["arrival"]
             for r in records if r["status"] in ("ok", "timeout")]
    assert float(np.percentile(waits, 99)) > 3 * metrics["ttft"]["p99"]


def test_lesson_2_more_seats_than_the_cache_holds_preempt_recompute_and_lose_throughput():
    (fits, fitting), (crowded, crowding) = (lesson_run(m, KV_LIMITS) for m in KV_SEATS)
    assert sum(r["preemptions"] for r in fits) == 0
    assert fits == lesson_run(KV_SEATS[0], {"max_num_batched_tokens": KV_LIMITS["max_num_batched_tokens"]})[0]
    assert sum(r["preemptions"] for r in crowded) > 20
    assert crowding["output_throughput"] < 0.5 * fitting["output_throughput"]
    unlimited = lesson_run(KV_SEATS[1], {"max_num_batched_tokens": KV_LIMITS["max_num_batched_tokens"]})[1]
    assert unlimited["output_throughput"] > fitting["output_throughput"]  # the seats help when the cache holds them


def test_lesson_3_chunked_prefill_cuts_itl_p99_at_a_ttft_cost_to_long_prompts():
    (whole, whole_metrics), (chunked, chunked_metrics) = (
        lesson_run(CHUNK_SEATS, {} if budget is None else {"max_num_batched_tokens": budget}) for budget in BUDGETS)
    assert chunked_metrics["itl"]["p99"] < 0.7 * whole_metrics["itl"]["p99"]
    code_whole, code_chunked = (ref.serving_metrics(code_records(r), SPAN) for r in (whole, chunked))
    assert code_chunked["ttft"]["mean"] > 1.1 * code_whole["ttft"]["mean"]
    assert code_chunked["ttft"]["p99"] > code_whole["ttft"]["p99"]
    # each step is bounded: no gap longer than a step with a full budget and every seat decoding
    longest = LESSON_COST["base"] + LESSON_COST["per_prefill_token"] * BUDGETS[1] + \
        LESSON_COST["per_decode_seq"] * CHUNK_SEATS
    assert max(b - a for r in chunked for a, b in pairwise(r["token_times"])) <= longest
    assert max(b - a for r in whole for a, b in pairwise(r["token_times"])) > 2 * longest


LESSON_SETTINGS = [(m, {}) for m in SEATS] + [(m, KV_LIMITS) for m in KV_SEATS] + \
    [(CHUNK_SEATS, {"max_num_batched_tokens": b}) for b in BUDGETS if b is not None]


@pytest.mark.parametrize("max_num_seqs, limits", LESSON_SETTINGS)
def test_lesson_is_exact_and_solution_agrees(max_num_seqs, limits):
    requests = lesson_requests()
    assert all((r["arrival"] / TICK).is_integer() for r in requests)
    assert sol.simulate(requests, "continuous", max_num_seqs, LESSON_COST, **limits) == \
        ref.simulate(requests, "continuous", max_num_seqs, LESSON_COST, **limits)


# --- the solution and the comparators ------------------------------------------------------------------------

@QUICK
@given(seed=seeds, policy=st.sampled_from(["continuous", "static"]))
def test_solution_simulate_matches_reference(seed, policy):
    requests, max_num_seqs, cost = random_case(random.Random(seed), deadlines=seed % 2 == 0)
    expected = ref.simulate(requests, policy, max_num_seqs, cost)
    assert sol.simulate(requests, policy, max_num_seqs, cost) == expected
    assert records_difference(expected, expected) is None


@QUICK
@given(seed=seeds)
def test_solution_metrics_match_reference(seed):
    r = random.Random(seed)
    records = random_log(ref, r)
    slo, percentiles = random_slo(ref, r, records), (0, 37.5, 50, 99.9, 100)
    expected = ref.serving_metrics(records, 30.0, slo, percentiles)
    assert metrics_difference(sol.serving_metrics(records, 30.0, slo, percentiles), expected) is None


def numpy_metrics(records: list, duration: float, percentiles) -> dict:
    """Latency statistics computed another way: numpy's mean and percentile, TPOT as a mean of gaps."""
    done = [r for r in records if r["status"] == "ok"]

    def stats(values):
        return {"mean": float(np.mean(values)) if values else None,
                **{ref.percentile_key(q): float(np.percentile(values, q)) if values else None for q in percentiles}}
    return {"ttft": stats([r["first_token"] - r["arrival"] for r in done]),
            "tpot": stats([float(np.mean(np.diff(r["token_times"]))) for r in done if r["output_tokens"] > 1]),
            "itl": stats([g for r in done for g in np.diff(r["token_times"]).tolist()]),
            "e2e": stats([r["finish"] - r["arrival"] for r in done])}


@settings(max_examples=200, deadline=None)
@given(seed=seeds)
def test_comparator_accepts_numpys_order_of_operations(seed):
    r = random.Random(seed)
    records = random_log(ref, r)
    percentiles = (0, 12.5, 50, 90, 99, 99.9, 100)
    expected = ref.serving_metrics(records, 10.0, None, percentiles)
    assert metrics_difference({**expected, **numpy_metrics(records, 10.0, percentiles)}, expected) is None


SIMULATE_BAD = [
    ("policy", ([], "fcfs", 1, COST)),
    ("max_num_seqs", ([], "static", 0, COST)),
    ("per_prefill_token", ([], "static", 1, {"base": 1.0, "per_decode_seq": 1.0})),
    ("per_decode_seq", ([], "static", 1, {**COST, "per_decode_seq": -0.1})),
    ("arrival", ([{"id": 1, "arrival": -1.0, "prompt_tokens": 1, "output_tokens": 1}], "static", 1, COST)),
    ("prompt_tokens", ([{"id": 1, "arrival": 0.0, "prompt_tokens": 0, "output_tokens": 1}], "static", 1, COST)),
    ("output_tokens", ([{"id": 1, "arrival": 0.0, "prompt_tokens": 1, "output_tokens": 0}], "static", 1, COST)),
    ("timeout", ([{"id": 1, "arrival": 0.0, "prompt_tokens": 1, "output_tokens": 1, "timeout": -1}], "static", 1,
                 COST)),
    ("cancel_at", ([{"id": 1, "arrival": 0.0, "prompt_tokens": 1, "output_tokens": 1, "cancel_at": -1}], "static",
                   1, COST)),
    ("kv_blocks", ([], "static", 1, COST, 0)),
    ("block_size", ([], "continuous", 1, COST, 4, -16)),
    ("max_num_batched_tokens", ([], "continuous", 1, COST, None, 16, 0)),
    ("max_model_len", ([], "continuous", 1, COST, None, 16, None, 0)),
]
METRICS_BAD = [
    ("duration", (FAILED, 0)),
    ("slo", (FAILED, 1.0, {"ttft": 1.0, "latency": 2.0})),
    ("slo", (FAILED, 1.0, {"ttft": -1.0})),
    ("percentiles", (FAILED, 1.0, None, (-1, 50))),
]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, fn, args", [(a, "simulate", args) for a, args in SIMULATE_BAD]
                         + [(a, "serving_metrics", args) for a, args in METRICS_BAD])
def test_bad_arguments_name_the_argument(module, argument, fn, args):
    with pytest.raises(ValueError, match=argument):
        getattr(module, fn)(*args)


def test_public_bad_calls_raise_in_the_reference():
    for _, args in test_public.SIMULATE_BAD_CALLS:
        with pytest.raises(ValueError):
            ref.simulate(*args)
    for _, args in test_public.METRICS_BAD_CALLS:
        with pytest.raises(ValueError):
            ref.serving_metrics(*args)


# --- the points rule: hidden checks carry at least 70% of each function's points -----------------------------

def points_by_function(module) -> dict:
    """{hint function: points} of the checks defined in a check module."""
    totals = {}
    for name in dir(module):
        meta = getattr(getattr(module, name), "__infergrade__", None)
        if meta is not None:
            totals[meta.hint] = totals.get(meta.hint, 0) + meta.points
    return totals


def test_hidden_checks_carry_at_least_70_percent_of_each_function():
    public, hidden = points_by_function(test_public), points_by_function(test_hidden)
    assert set(public) == set(hidden) == set(FUNCTIONS)
    # the lesson checks call both simulate and serving_metrics: the rule holds whichever function they count for
    lessons = [test.__infergrade__ for name, test in vars(test_public).items() if name.startswith("test_lesson_")]
    assert len(lessons) == 3
    for lesson in lessons:
        public[lesson.hint] -= lesson.points
    lesson_points = sum(lesson.points for lesson in lessons)
    for fn in FUNCTIONS:
        assert hidden[fn] >= 0.7 * (public[fn] + lesson_points + hidden[fn]), (fn, public[fn], hidden[fn])


# --- stub, hints, mutants ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [("simulate", (TRACES["idle"][0], "continuous", 2, COST)),
                                      ("serving_metrics", (FAILED, 10.0))])
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)


def test_stub_documents_every_function_and_holds_no_answer():
    tree = ast.parse((ROOT / "exercises" / "serving.py").read_text())
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert [f.name for f in functions] == list(FUNCTIONS)
    for f in functions:
        assert ast.get_docstring(f) and isinstance(f.body[-1], ast.Raise) and len(f.body) == 2


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_three_hint_levels_per_function(fn):
    texts = [hints.hint("serving", fn, level) for level in hints.LEVELS]
    assert all(texts) and len(set(texts)) == 3


def test_every_misconception_is_explained_and_has_a_mutant():
    assert set(hints.misconception_ids("serving")) == MISCONCEPTIONS
    assert {p.stem for p in MUTANTS.glob("*.py")} == MISCONCEPTIONS


@pytest.mark.parametrize("misconception", ENGINE_MISCONCEPTIONS)
def test_engine_mutant_returns_what_its_misconception_predicts(misconception):
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')
    module = mutant("serving", misconception)
    differs = 0
    for name, (requests, policy, max_num_seqs, _) in TRACES.items():
        limits = LIMITS.get(name, {})
        got = module.simulate(requests, policy, max_num_seqs, COST, **limits)
        expected = ref.simulate(requests, policy, max_num_seqs, COST, **limits)
        predicted = simulate_predictions(ref, requests, policy, max_num_seqs, COST, **limits).get(misconception,
                                                                                               expected)
        assert got == predicted, name
        differs += got != expected
    assert differs > 0


@settings(max_examples=40, deadline=None)
@given(seed=seeds, misconception=st.sampled_from(ENGINE_MISCONCEPTIONS))
def test_engine_mutant_matches_its_prediction_under_random_limits(seed, misconception):
    requests, policy, max_num_seqs, cost, limits = limited(seed)
    got = mutant("serving", misconception).simulate(requests, policy, max_num_seqs, cost, **limits)
    predictions = simulate_predictions(ref, requests, policy, max_num_seqs, cost, **limits)
    assert got == predictions.get(misconception, ref.simulate(requests, policy, max_num_seqs, cost, **limits))


@pytest.mark.parametrize("misconception", ["tpot_includes_first_token", "failed_in_latency", "mean_of_rates",
                                           "nearest_rank_percentile"])
def test_metrics_mutant_returns_what_its_misconception_predicts(misconception):
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')
    module = mutant("serving", misconception)
    differs = 0
    for records in (SKEWED, TOKENS, FAILED, SLO_LOG, CONCURRENT):
        got = module.serving_metrics(records, 10.0, None, (25, 50, 90, 99.9))
        expected = ref.serving_metrics(records, 10.0, None, (25, 50, 90, 99.9))
        predicted = {**expected, **metrics_predictions(ref, records, (25, 50, 90, 99.9))[misconception]}
        assert metrics_difference(got, predicted) is None
        differs += metrics_difference(got, expected) is not None
    assert differs > 0
