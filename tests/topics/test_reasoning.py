"""Project tests for the reasoning topic: the reference against hand-worked usage totals, costs and exact McNemar
p-values, the solution against the reference, the check helpers' draws and diagnoses, the stub, the hints and
the mutants."""
import json
import random
import types
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from exercises import reasoning as stub
from grader import hints
from grader.checks.reasoning.draws import (random_bad_comparison, random_bad_record, random_calls, random_family,
                                           random_pair, random_prices, random_target)
from grader.checks.reasoning.expect import (comparison_difference, cost_misconceptions, gemini_thoughts, kept_wordier,
                                            most_tokens, totals_difference, totals_misconceptions)
from grader.checks.reasoning.tasks import (CLEAR_RESULTS, COMPARISONS, DISCORDANT, FAMILIES, PADDED_RESULTS,
                                           TARGET, discordant_results)
from grader.checks.reasoning.test_public import BAD_COMPARISONS, BAD_RECORDS
from grader.checks.reasoning.usage import (AGENT_CALLS, GPT5_PRICES, LEDGERS, RETRY_FIRST, RETRY_ID, RETRY_SECOND,
                                           SHORT_ANSWER_CALL, SHORT_ANSWER_TOKENS, SONNET4_PRICES)
from mutated import mutant
from reference import reasoning as ref
from solutions import reasoning as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "reasoning"
FUNCTIONS = ("UsageLedger", "compare_variants", "pick_effort")
MISCONCEPTIONS = {"reasoning_from_answer_length", "cached_at_full_price", "double_counts_reasoning",
                  "keeps_wordier_prompt", "more_effort_always", "gemini_thoughts_inside_candidates"}
QUICK = settings(max_examples=60, deadline=None)
seeds = st.integers(0, 2**31 - 1)


def ledger_of(module, calls):
    """`module`'s ledger after recording `calls`."""
    ledger = module.UsageLedger()
    for call in calls:
        ledger.record(*call)
    return ledger


# --- the ledger: hand-worked totals and costs --------------------------------------------------------------

def test_each_provider_shape_worked_by_hand():
    # Chat: prompt 1486 + 19 + 2048 of which 1408 cached; completion 651 + 10 + 300 of which 512 reasoning
    assert ledger_of(ref, LEDGERS["OpenAI Chat Completions"]).totals() == {
        "input": 1486 - 1408 + 19 + 2048, "cached_input": 1408, "cache_write": 0, "output": 961, "reasoning": 512,
        "calls": 3, "seconds": pytest.approx(6.8 + 0.4 + 2.1)}
    # Responses: input 5200 + 36 + 900 of which 4864 cached; output 2311 + 87 + 40 of which 2304 reasoning
    assert ledger_of(ref, LEDGERS["OpenAI Responses"]).totals() == {
        "input": 5200 - 4864 + 36 + 900, "cached_input": 4864, "cache_write": 0, "output": 2438,
        "reasoning": 2304, "calls": 3, "seconds": pytest.approx(33.6)}
    # Anthropic: input_tokens excludes the cache counts; thinking is inside output, reported apart by msg-2 and
    # msg-5 (whose thinking count alone tells the shape: read as Responses, its 400 would become 0); msg-4's writes
    # are its breakdown's sum, 1200 + 800
    assert ledger_of(ref, LEDGERS["Anthropic Messages"]).totals() == {
        "input": 25 + 60 + 400 + 30 + 52, "cached_input": 3900, "cache_write": 3900 + 2000,
        "output": 1450 + 820 + 95 + 210 + 480, "reasoning": 700 + 400, "calls": 5, "seconds": pytest.approx(37.6)}
    # Gemini: cached content inside the prompt count, thoughts beside the candidates, the tool-use prompt as input;
    # gem-4 in camelCase counts as its snake_case names
    assert ledger_of(ref, LEDGERS["Google Gemini"]).totals() == {
        "input": 2400 + 33_000 - 32_768 + 150 + 80 + 4100 - 2048, "cached_input": 32_768 + 2048, "cache_write": 0,
        "output": 120 + 1900 + 410 + 620 + 35 + 260 + 1500, "reasoning": 1900 + 620 + 1500, "calls": 4,
        "seconds": pytest.approx(26.2)}
    # OpenAI cache writes are assumed inside the input total and billed as writes; cw-3's cached and written
    # tokens (5888 + 640) exceed its total (6000): nothing is left at the full price
    assert ledger_of(ref, LEDGERS["OpenAI cache writes"]).totals() == {
        "input": 9000 - 8960 + 9100 - 8960 - 128 + 0, "cached_input": 8960 + 5888, "cache_write": 8960 + 128 + 640,
        "output": 300 + 280 + 150, "reasoning": 192, "calls": 3, "seconds": pytest.approx(6.9)}
    together = ledger_of(ref, LEDGERS["every provider in one ledger"]).totals()
    assert together["calls"] == 18
    assert together["input"] == 2145 + 1272 + 567 + 4914 + 52
    assert together["output"] == 961 + 2438 + 3055 + 4845 + 730


def test_empty_ledger_is_all_zero():
    assert ref.UsageLedger().totals() == dict.fromkeys(
        ("input", "cached_input", "cache_write", "output", "reasoning", "calls"), 0) | {"seconds": 0.0}
    assert ref.UsageLedger().cost(GPT5_PRICES) == 0.0


def test_short_answer_costs_its_reasoning():
    ledger = ledger_of(ref, [SHORT_ANSWER_CALL])
    totals = ledger.totals()
    assert (totals["output"], totals["reasoning"]) == (2311, 2304)
    assert totals["output"] - totals["reasoning"] == SHORT_ANSWER_TOKENS
    assert ledger.cost(GPT5_PRICES) == pytest.approx(182 * 1.25e-6 + 2311 * 1e-5, rel=1e-12)


def test_agent_loop_costs_worked_by_hand():
    prices, calls = AGENT_CALLS["GPT-5 on OpenAI Chat Completions"]
    cached = sum(39_936 + 640 * (i - 1) for i in range(1, 6))
    prompt = sum(40_000 + 700 * i for i in range(6))
    expected = (prompt - cached) * 1.25e-6 + cached * 1.25e-7 + 6 * 900 * 1e-5
    assert ledger_of(ref, calls).cost(prices) == pytest.approx(expected, rel=1e-12)
    # billing the cached input at the full price would cost about three times as much input
    assert prompt * 1.25e-6 > 3 * ((prompt - cached) * 1.25e-6 + cached * 1.25e-7)
    prices, calls = AGENT_CALLS["Claude Sonnet 4 on Anthropic Messages"]
    reads = sum(40_000 + 700 * (i - 1) for i in range(1, 6))
    expected = 6 * 700 * 3e-6 + reads * 3e-7 + (40_000 + 5 * 700) * 3.75e-6 + 6 * 900 * 1.5e-5
    assert ledger_of(ref, calls).cost(prices) == pytest.approx(expected, rel=1e-12)
    assert prices is SONNET4_PRICES


def test_retry_is_a_second_call():
    ledger = ledger_of(ref, [RETRY_FIRST])
    with pytest.raises(ValueError, match="call_id"):
        ledger.record(RETRY_FIRST[0], RETRY_SECOND, 21.0)
    assert ledger.totals()["calls"] == 1
    ledger.record(RETRY_ID, RETRY_SECOND, 21.0)
    assert ledger.totals()["output"] == 3100 + 2700 and ledger.totals()["calls"] == 2


@QUICK
@given(seed=seeds)
def test_ledger_invariants(seed):
    r = random.Random(seed)
    calls, prices = random_calls(r, r.randint(1, 10)), random_prices(r)
    totals = ledger_of(ref, calls).totals()
    assert totals["output"] >= totals["reasoning"] >= 0 and totals["calls"] == len(calls)
    shuffled = list(calls)
    r.shuffle(shuffled)
    assert ledger_of(ref, shuffled).totals() == pytest.approx(totals)
    # cost is linear in the prices, and the sum of the calls' own costs
    doubled = {key: 2 * value for key, value in prices.items()}
    cost = ledger_of(ref, calls).cost(prices)
    assert ledger_of(ref, calls).cost(doubled) == pytest.approx(2 * cost, rel=1e-12)
    assert sum(ledger_of(ref, [call]).cost(prices) for call in calls) == pytest.approx(cost, rel=1e-12)


# --- McNemar: hand-worked and independent exact p-values ----------------------------------------------------

HAND_WORKED = {  # (only a, only b): 2 * sum_{i <= min} C(n, i) / 2^n, capped at 1
    (0, 0): 1.0,
    (5, 0): 2 * 1 / 32,                       # 0.0625: five wins out of five are not significant
    (9, 1): 2 * (1 + 10) / 1024,              # 0.021484375
    (3, 5): 2 * (1 + 8 + 28 + 56) / 256,      # 0.7265625
    (0, 6): 2 * 1 / 64,                       # 0.03125
    (2, 12): 2 * (1 + 14 + 91) / 16384,       # 0.012939453125
    (2, 4): 2 * (1 + 6 + 15) / 64,            # 0.6875: the padded prompt
    (1, 11): 2 * (1 + 12) / 4096,             # 0.00634765625: the worked example
    (4, 4): 1.0,                              # 2 * 163/256 > 1 is capped
}


@pytest.mark.parametrize("discordant, p_value", HAND_WORKED.items(), ids=map(str, HAND_WORKED))
def test_mcnemar_hand_worked(discordant, p_value):
    a, b = discordant_results(*discordant)
    assert ref.compare_variants(a, b)["p_value"] == p_value
    assert sol.compare_variants(a, b)["p_value"] == p_value


def pascal_two_sided(only_a: int, only_b: int) -> Fraction:
    """The exact two-sided p-value from a row of Pascal's triangle built by additions (no comb, no factorials)."""
    n = only_a + only_b
    row = [1]
    for _ in range(n):
        row = [x + y for x, y in zip([0] + row, row + [0])]
    return min(Fraction(1), Fraction(2 * sum(row[:min(only_a, only_b) + 1]), 2 ** n))


@QUICK
@given(only_a=st.integers(0, 70), only_b=st.integers(0, 70))
def test_mcnemar_matches_an_independent_exact_computation(only_a, only_b):
    a, b = discordant_results(only_a, only_b, both=1, neither=1)
    assert ref.compare_variants(a, b)["p_value"] == float(pascal_two_sided(only_a, only_b))


@pytest.mark.parametrize("discordant", [(0, 1), (5, 0), (9, 1), (3, 5), (2, 12), (17, 40), (60, 58)])
def test_mcnemar_matches_scipy_binomtest(discordant):
    stats = pytest.importorskip("scipy.stats")
    only_a, only_b = discordant
    a, b = discordant_results(only_a, only_b)
    expected = stats.binomtest(only_a, only_a + only_b, 0.5, alternative="two-sided").pvalue
    assert ref.compare_variants(a, b)["p_value"] == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_public_comparisons_teach_their_lessons():
    padded = ref.compare_variants(CLEAR_RESULTS, PADDED_RESULTS)
    assert padded["accuracy_b"] > padded["accuracy_a"] and padded["p_value"] >= 0.05 and padded["keep"] == "a"
    assert sum(r["seconds"] for r in PADDED_RESULTS) > sum(r["seconds"] for r in CLEAR_RESULTS)
    assert ref.compare_variants(PADDED_RESULTS, CLEAR_RESULTS)["keep"] == "b"
    a, b = COMPARISONS["baseline prompt vs prompt with a worked example"]
    improved = ref.compare_variants(a, b)
    assert improved["p_value"] < 0.05 and improved["keep"] == "b" and improved["tokens_b"] > improved["tokens_a"]
    assert [ref.compare_variants(*discordant_results(*d))["p_value"] < 0.05 for d in DISCORDANT] == \
        [False, False, True, False, True, True]


@QUICK
@given(seed=seeds)
def test_compare_variants_swaps_with_its_arguments(seed):
    a, b = random_pair(random.Random(seed))
    ab, ba = ref.compare_variants(a, b), ref.compare_variants(b, a)
    assert ab["p_value"] == ba["p_value"] and (ab["accuracy_a"], ab["tokens_a"]) == (ba["accuracy_b"], ba["tokens_b"])
    tie = ab["p_value"] >= 0.05 and ab["tokens_a"] == ab["tokens_b"]
    assert (ab["keep"], ba["keep"]) == (("a", "a") if tie else (ab["keep"], {"a": "b", "b": "a"}[ab["keep"]]))


# --- pick_effort --------------------------------------------------------------------------------------------

def test_effort_by_need():
    assert [ref.pick_effort(results, TARGET) for results in FAMILIES.values()] == ["low", "high", None]
    cross = FAMILIES["cross-module reasoning"]
    assert ref.pick_effort(cross, 0.7) == "medium"            # 14/20 reaches 0.7 exactly
    assert ref.pick_effort(dict(reversed(list(cross.items()))), 0.0) == "low"
    assert ref.pick_effort(FAMILIES["closed-form formula"], 1.0) == "high"


def test_effort_boundary_within_1e_9():
    runs = [{"correct": i < 7, "tokens": 10, "seconds": 1.0} for i in range(10)]
    assert ref.pick_effort({"low": runs}, 0.7 * (1 + 1e-10)) == "low"
    assert ref.pick_effort({"low": runs}, 0.7 * (1 + 1e-6)) is None


@QUICK
@given(seed=seeds)
def test_pick_effort_is_the_cheapest_level_that_reaches_the_target(seed):
    r = random.Random(seed)
    family = random_family(r)
    target = random_target(r, family)
    feasible = {level: sum(t["tokens"] for t in runs) for level, runs in family.items()
                if Fraction(sum(t["correct"] for t in runs), len(runs)) >= Fraction(str(target))}
    assert ref.pick_effort(family, target) == (min(feasible, key=feasible.get) if feasible else None)


# --- the solution against the reference ---------------------------------------------------------------------

@QUICK
@given(seed=seeds)
def test_solution_matches_reference(seed):
    r = random.Random(seed)
    calls, prices = random_calls(r, r.randint(0, 10)), random_prices(r)
    expected, got = ledger_of(ref, calls), ledger_of(sol, calls)
    assert totals_difference(got.totals(), expected.totals()) is None
    assert got.cost(prices) == pytest.approx(expected.cost(prices), rel=1e-12, abs=1e-18)
    a, b = random_pair(r)
    assert comparison_difference(sol.compare_variants(a, b), ref.compare_variants(a, b)) is None
    family = random_family(r)
    target = random_target(r, family)
    assert sol.pick_effort(family, target) == ref.pick_effort(family, target)


# --- errors -------------------------------------------------------------------------------------------------

def named(argument) -> str:
    """A pattern that finds the argument, or any of a tuple of them, in a message."""
    return argument if isinstance(argument, str) else "|".join(argument)


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, usage, seconds", BAD_RECORDS, ids=[named(b[0]) for b in BAD_RECORDS])
def test_bad_records_name_the_argument_and_change_nothing(module, argument, usage, seconds):
    ledger = ledger_of(module, [RETRY_FIRST])
    before = ledger.totals()
    with pytest.raises(ValueError, match=named(argument)):
        ledger.record("bad", usage, seconds)
    assert ledger.totals() == before


@QUICK
@given(seed=seeds)
def test_random_bad_records_are_rejected(seed):
    r = random.Random(seed)
    argument, usage, seconds = random_bad_record(r)
    for module in (ref, sol, shape_by_non_null_prompt_count()):
        with pytest.raises(ValueError, match=named(argument)):
            module.UsageLedger().record("bad", usage, seconds)
    argument, a, b, valid = random_bad_comparison(r)
    for module in (ref, sol):
        with pytest.raises(ValueError, match=argument):
            module.compare_variants(a, b)
        assert module.compare_variants(*valid)["keep"] in ("a", "b")  # the pair before the fault is answered


def solution_with(name: str, source: str) -> types.ModuleType:
    """The solution with `source` appended (as a mutant is), loaded as a module."""
    module = types.ModuleType(f"reasoning_{name}")
    exec(compile((ROOT / "solutions" / "reasoning.py").read_text() + "\n" + source, name, "exec"),  # noqa: S102
         module.__dict__)
    return module


def shape_by_non_null_prompt_count() -> types.ModuleType:
    """A reading of the stub under which Gemini is told only by a non-null prompt count (either spelling): a Gemini
    usage without it has no known shape, and the error names `usage` (issue 26, point 23)."""
    return solution_with("prompt_count_tells", """
_stub_shape = _shape


def _shape(usage):
    gemini_key = "prompt_token_count" in usage or any(key in usage for key in GEMINI_CAMEL)
    if gemini_key and usage.get("prompt_token_count") is None and usage.get("promptTokenCount") is None:
        raise ValueError("usage: no prompt count tells the shape")
    return _stub_shape(usage)
""")


OLD_RULES = {  # the ledger's rules before issue 26, each appended to the solution
    "thinking read as Responses": """
_new_shape = _shape


def _shape(usage):
    if not any(key in usage for key in ANTHROPIC_CACHE_KEYS) and "output_tokens_details" in usage:
        return "responses"
    return _new_shape(usage)
""",
    "camelCase unknown": """
GEMINI_CAMEL = {}
""",
    "writes beyond the total rejected": """
_new_openai_counts = _openai_counts


def _openai_counts(usage, shape):
    counts = _new_openai_counts(usage, shape)
    input_key = OPENAI_SHAPES[shape][0]
    if counts[1] + counts[2] > usage[input_key]:
        raise ValueError("cached_tokens + cache_write_tokens exceed the input total")
    return counts
""",
}


@pytest.mark.parametrize("rule", OLD_RULES)
def test_the_public_ledgers_fail_each_old_rule(rule):
    module = solution_with(rule.replace(" ", "_"), OLD_RULES[rule])
    failed = []
    for name, calls in LEDGERS.items():
        expected = ledger_of(ref, calls).totals()
        try:
            failed.append(totals_difference(ledger_of(module, calls).totals(), expected) is not None)
        except ValueError:
            failed.append(True)
    assert any(failed) and failed[-1]  # "every provider in one ledger" is the last


@pytest.mark.parametrize("rule", OLD_RULES)
def test_the_hidden_draws_fail_each_old_rule_often(rule):
    # random_ledger_totals draws 8 ledgers of up to 10 calls a seed: the old rule must meet its form in most seeds
    module, seeds_failed = solution_with(rule.replace(" ", "_"), OLD_RULES[rule]), 0
    for seed in range(100):
        r = random.Random(seed)
        calls = [call for _ in range(8) for call in random_calls(r, r.randint(1, 10))]
        try:
            seeds_failed += totals_difference(ledger_of(module, calls).totals(), ledger_of(ref, calls).totals()) \
                is not None
        except ValueError:
            seeds_failed += 1
    assert seeds_failed >= 50


def test_anthropic_thinking_alone_is_not_a_responses_usage():
    usage = {"input_tokens": 52, "output_tokens": 480, "output_tokens_details": {"thinking_tokens": 400}}
    for module in (ref, sol):
        assert ledger_of(module, [("a", usage, 1.0)]).totals()["reasoning"] == 400
    # a Responses usage that has a detail key keeps its own reading
    responses = {"input_tokens": 52, "output_tokens": 480, "output_tokens_details": {"reasoning_tokens": 400}}
    assert ledger_of(ref, [("r", responses, 1.0)]).totals()["reasoning"] == 400


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
def test_bad_arguments_of_cost_comparison_and_effort(module):
    for key in ("input", "cached_input", "cache_write", "output"):
        with pytest.raises(ValueError, match=key):
            module.UsageLedger().cost({k: v for k, v in GPT5_PRICES.items() if k != key})
    for argument, a, b in BAD_COMPARISONS:
        with pytest.raises(ValueError, match=argument):
            module.compare_variants(a, b)
    runs = [{"correct": True, "tokens": 5, "seconds": 1.0}]
    for results, min_accuracy, argument in (({"low": runs}, 1.01, "min_accuracy"), ({"low": runs}, -0.5,
                                             "min_accuracy"), ({"low": []}, 0.5, "results"), ({}, 0.5, "results")):
        with pytest.raises(ValueError, match=argument):
            module.pick_effort(results, min_accuracy)


# --- the check helpers: draws and diagnoses -----------------------------------------------------------------

@QUICK
@given(seed=seeds)
def test_draws_are_what_the_checks_assume(seed):
    r = random.Random(seed)
    family = random_family(r)
    totals = [sum(t["tokens"] for t in runs) for runs in family.values()]
    assert len(set(totals)) == len(totals) and len({len(runs) for runs in family.values()}) == 1
    low = random_family(r, 0.5)
    assert all(sum(t["correct"] for t in runs) / len(runs) <= 0.5 for runs in low.values())
    assert ref.pick_effort(low, 0.55) is None


def test_diagnoses_are_specific():
    calls = LEDGERS["every provider in one ledger"]
    totals = ledger_of(ref, calls).totals()
    predicted = dict(totals_misconceptions(totals))
    assert {mid for mid, _ in totals_misconceptions(totals)} == {"reasoning_from_answer_length",
                                                                 "double_counts_reasoning", "cached_at_full_price"}
    # with the Gemini thoughts named, their own misconception predicts less output lost than all reasoning
    thoughts = gemini_thoughts(calls)
    assert thoughts == 1900 + 620 + 1500 and 0 < thoughts < totals["reasoning"]  # gem-4's camelCase counted too
    with_gemini = dict(totals_misconceptions(totals, thoughts))
    assert with_gemini["gemini_thoughts_inside_candidates"]["output"] == totals["output"] - thoughts
    assert totals_difference(with_gemini["gemini_thoughts_inside_candidates"],
                             with_gemini["reasoning_from_answer_length"]) is not None
    assert totals_difference(predicted["double_counts_reasoning"], totals) is not None
    assert totals_misconceptions({**totals, "reasoning": 0, "cached_input": 0}) == []
    assert cost_misconceptions({**totals, "reasoning": 0, "cached_input": 0}, GPT5_PRICES) == []
    padded = ref.compare_variants(CLEAR_RESULTS, PADDED_RESULTS)
    assert kept_wordier({**padded, "keep": "b"}, padded)
    assert not kept_wordier(padded, padded)
    assert most_tokens(FAMILIES["a private file the model was never given"]) == "high"


# --- stub, hints, mutants -----------------------------------------------------------------------------------

def test_stub_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="TODO"):
        stub.UsageLedger()
    with pytest.raises(NotImplementedError, match="TODO"):
        stub.compare_variants(CLEAR_RESULTS, PADDED_RESULTS)
    with pytest.raises(NotImplementedError, match="TODO"):
        stub.pick_effort(FAMILIES["closed-form formula"], TARGET)
    methods = [stub.UsageLedger.record, stub.UsageLedger.totals, stub.UsageLedger.cost]
    for method, args in zip(methods, [("id", {}, 1.0), (), (GPT5_PRICES,)]):
        with pytest.raises(NotImplementedError, match="TODO"):
            method(object.__new__(stub.UsageLedger), *args)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_three_hint_levels_per_function(function):
    texts = [hints.hint("reasoning", function, level) for level in (1, 2, 3)]
    assert all(texts) and len(set(texts)) == 3


def test_every_misconception_is_explained_and_has_a_mutant():
    assert set(hints.misconception_ids("reasoning")) == MISCONCEPTIONS
    assert {path.stem for path in MUTANTS.glob("*.py")} == MISCONCEPTIONS


def mutant_outputs(module) -> list:
    """The module's answers on the public cases: ledger totals and costs, comparisons, effort choices."""
    out = [ledger_of(module, calls).totals() for calls in LEDGERS.values()]
    out += [ledger_of(module, calls).cost(prices) for prices, calls in AGENT_CALLS.values()]
    out += [module.compare_variants(a, b) for a, b in COMPARISONS.values()]
    return out + [module.pick_effort(results, TARGET) for results in FAMILIES.values()]


def differs(got, expected) -> bool:
    """Whether a mutant's answer differs from the reference's, with the checks' comparators."""
    if isinstance(expected, float):
        return got != pytest.approx(expected, rel=1e-9)
    if isinstance(expected, dict):
        compare = comparison_difference if "p_value" in expected else totals_difference
        return compare(got, expected) is not None
    return got != expected


@pytest.mark.parametrize("misconception", sorted(MISCONCEPTIONS))
def test_mutant_differs_as_its_misconception_predicts(misconception):
    module = mutant("reasoning", misconception)
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')
    assert any(differs(g, e) for g, e in zip(mutant_outputs(module), mutant_outputs(ref)))
    for calls in LEDGERS.values():
        totals, expected = ledger_of(module, calls).totals(), ledger_of(ref, calls).totals()
        if differs(totals, expected):
            assert misconception in [m for m, t in totals_misconceptions(expected, gemini_thoughts(calls))
                                     if not differs(totals, t)]
    for prices, calls in AGENT_CALLS.values():
        cost, expected = ledger_of(module, calls).cost(prices), ledger_of(ref, calls)
        if differs(cost, expected.cost(prices)):
            predicted = cost_misconceptions(expected.totals(), prices, gemini_thoughts(calls))
            assert misconception in [m for m, c in predicted if not differs(cost, c)]
    for a, b in COMPARISONS.values():
        got, expected = module.compare_variants(a, b), ref.compare_variants(a, b)
        if differs(got, expected):
            assert misconception == "keeps_wordier_prompt" and kept_wordier(got, expected)
    for results in FAMILIES.values():
        got, expected = module.pick_effort(results, TARGET), ref.pick_effort(results, TARGET)
        if got != expected:
            assert misconception == "more_effort_always" and got == most_tokens(results)


# --- usage objects built with the providers' own SDK types ------------------------------------------------------

def serialised(model) -> dict:
    """{form: dict} of an SDK usage object, every way clients turn one into plain data: pydantic's dumps (null
    fields kept or dropped, field names or their aliases: Gemini's aliases are the REST API's camelCase), JSON
    round trips, and each SDK's own helpers (openai and anthropic: to_dict, to_json; google-genai: to_json_dict)."""
    forms = {"model_dump": model.model_dump(), "exclude_none": model.model_dump(exclude_none=True),
             "by_alias": model.model_dump(by_alias=True),
             "by_alias exclude_none": model.model_dump(by_alias=True, exclude_none=True),
             "json": json.loads(model.model_dump_json()),
             "json by_alias exclude_none": json.loads(model.model_dump_json(by_alias=True, exclude_none=True))}
    if hasattr(model, "to_dict"):
        forms |= {"to_dict": model.to_dict(), "to_dict exclude_none": model.to_dict(exclude_none=True),
                  "to_json": json.loads(model.to_json())}
    if hasattr(model, "to_json_dict"):
        forms["to_json_dict"] = model.to_json_dict()
    return forms


def sdk_cases():
    """(SDK usage object, the totals it must give, derived by hand from its fields) for each provider's types."""
    openai_types = pytest.importorskip("openai.types", reason="openai is not installed (crosscheck extra)")
    responses = pytest.importorskip("openai.types.responses.response_usage",
                                    reason="openai is not installed (crosscheck extra)")
    anthropic_types = pytest.importorskip("anthropic.types", reason="anthropic is not installed (crosscheck extra)")
    genai_types = pytest.importorskip("google.genai.types", reason="google-genai is not installed (crosscheck extra)")
    from openai.types.completion_usage import CompletionTokensDetails, PromptTokensDetails
    count = dict.fromkeys(("input", "cached_input", "cache_write", "output", "reasoning"), 0)
    thinking = anthropic_types.OutputTokensDetails(thinking_tokens=400)
    return [
        (openai_types.CompletionUsage(
            prompt_tokens=5000, completion_tokens=900, total_tokens=5900,
            prompt_tokens_details=PromptTokensDetails(cached_tokens=3840, cache_write_tokens=1024),
            completion_tokens_details=CompletionTokensDetails(reasoning_tokens=640)),
         {**count, "input": 5000 - 3840 - 1024, "cached_input": 3840, "cache_write": 1024, "output": 900,
          "reasoning": 640}),
        (openai_types.CompletionUsage(prompt_tokens=19, completion_tokens=10, total_tokens=29),
         {**count, "input": 19, "output": 10}),
        # cached and written beyond the total: the ledger's assumption fails, nothing left at the full price
        (openai_types.CompletionUsage(
            prompt_tokens=6000, completion_tokens=150, total_tokens=6150,
            prompt_tokens_details=PromptTokensDetails(cached_tokens=5888, cache_write_tokens=640)),
         {**count, "cached_input": 5888, "cache_write": 640, "output": 150}),
        (responses.ResponseUsage(
            input_tokens=5200, output_tokens=2311, total_tokens=7511,
            input_tokens_details=responses.InputTokensDetails(cached_tokens=4608, cache_write_tokens=256),
            output_tokens_details=responses.OutputTokensDetails(reasoning_tokens=2304)),
         {**count, "input": 5200 - 4608 - 256, "cached_input": 4608, "cache_write": 256, "output": 2311,
          "reasoning": 2304}),
        # SDK 2.x: output_tokens_details (null here) beside the cache keys: still Anthropic
        (anthropic_types.Usage(input_tokens=60, output_tokens=820, cache_read_input_tokens=3900,
                               cache_creation_input_tokens=0, output_tokens_details=None),
         {**count, "input": 60, "cached_input": 3900, "output": 820}),
        (anthropic_types.Usage(input_tokens=25, output_tokens=1450, cache_read_input_tokens=0,
                               cache_creation_input_tokens=3900,
                               cache_creation=anthropic_types.CacheCreation(ephemeral_5m_input_tokens=3900,
                                                                            ephemeral_1h_input_tokens=0),
                               output_tokens_details=anthropic_types.OutputTokensDetails(thinking_tokens=1200)),
         {**count, "input": 25, "cache_write": 3900, "output": 1450, "reasoning": 1200}),
        # issue 26: thinking tokens and null cache counts; exclude_none and to_dict(exclude_none=True) leave no
        # cache key, and only the thinking count tells Anthropic from Responses (read as Responses: 400 become 0)
        (anthropic_types.Usage(input_tokens=52, output_tokens=480, cache_read_input_tokens=None,
                               cache_creation_input_tokens=None, cache_creation=None, output_tokens_details=thinking),
         {**count, "input": 52, "output": 480, "reasoning": 400}),
        # the cache fields never set: to_dict() and to_json() leave them out in every form
        (anthropic_types.Usage(input_tokens=52, output_tokens=480, output_tokens_details=thinking),
         {**count, "input": 52, "output": 480, "reasoning": 400}),
        # as parsed from the API's JSON, where the nulls were sent: to_dict() keeps them, exclude_none drops them
        (anthropic_types.Usage.model_validate({"input_tokens": 52, "output_tokens": 480,
                                               "cache_creation_input_tokens": None, "cache_read_input_tokens": None,
                                               "output_tokens_details": {"thinking_tokens": 400}}),
         {**count, "input": 52, "output": 480, "reasoning": 400}),
        (genai_types.GenerateContentResponseUsageMetadata(
            prompt_token_count=33_000, cached_content_token_count=32_768, candidates_token_count=410,
            thoughts_token_count=620, tool_use_prompt_token_count=150, total_token_count=34_180),
         {**count, "input": 33_000 - 32_768 + 150, "cached_input": 32_768, "output": 410 + 620, "reasoning": 620}),
        # a REST response's camelCase usageMetadata, parsed by the SDK
        (genai_types.GenerateContentResponse.model_validate(
            {"usageMetadata": {"promptTokenCount": 4100, "cachedContentTokenCount": 2048, "candidatesTokenCount": 260,
                               "thoughtsTokenCount": 1500, "totalTokenCount": 5860}}).usage_metadata,
         {**count, "input": 4100 - 2048, "cached_input": 2048, "output": 260 + 1500, "reasoning": 1500}),
    ]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
def test_sdk_usage_objects_in_every_serialised_form(module):
    for usage, expected in sdk_cases():
        for form, data in serialised(usage).items():
            ledger = module.UsageLedger()
            ledger.record("call", data, 1.0)
            got = {key: ledger.totals()[key] for key in expected}
            assert got == expected, f"{type(usage).__name__} as {form}: {data}"


def test_sdk_forms_include_the_ones_issue_26_names():
    """The crosscheck above really meets the forms that broke the ledger: an Anthropic usage with no cache key
    left, and Gemini's camelCase keys."""
    forms = [(usage, form, data) for usage, _ in sdk_cases() for form, data in serialised(usage).items()]
    thinking_alone = [form for usage, form, data in forms
                      if "output_tokens_details" in data and not any(k.startswith("cache") for k in data)]
    assert {"exclude_none", "to_dict", "to_dict exclude_none", "to_json"} <= set(thinking_alone)
    camel = [form for usage, form, data in forms if "promptTokenCount" in data]
    assert {"by_alias", "by_alias exclude_none", "json by_alias exclude_none"} <= set(camel)


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
def test_anthropic_usage_without_any_telling_key_is_ambiguous(module):
    anthropic_types = pytest.importorskip("anthropic.types", reason="anthropic is not installed (crosscheck extra)")
    usage = anthropic_types.Usage(input_tokens=5, output_tokens=7, cache_read_input_tokens=None,
                                  cache_creation_input_tokens=None, cache_creation=None)
    module.UsageLedger().record("kept nulls", usage.model_dump(), 1.0)  # the null cache keys tell the shape
    with pytest.raises(ValueError, match="usage"):  # exclude_none drops every key that tells it
        module.UsageLedger().record("nulls dropped", usage.model_dump(exclude_none=True), 1.0)


# --- compare_variants: latency and verifiability ---------------------------------------------------------------

@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
def test_compare_variants_reports_medians_and_verifiable_shares(module):
    a = [{"correct": True, "tokens": 10, "seconds": s, "verifiable": v}
         for s, v in ((4.0, True), (1.0, False), (9.0, True), (2.0, True))]
    b = [{"correct": True, "tokens": 12, "seconds": s} for s in (3.0, 5.0, 1.0, 8.0)]
    result = module.compare_variants(a, b)
    assert (result["median_seconds_a"], result["median_seconds_b"]) == ((2.0 + 4.0) / 2, (3.0 + 5.0) / 2)
    assert (result["verifiable_a"], result["verifiable_b"]) == (3 / 4, None)
    odd = module.compare_variants(a[:3], b[:3])
    assert (odd["median_seconds_a"], odd["median_seconds_b"]) == (4.0, 3.0)
    a, b = COMPARISONS["baseline prompt vs prompt with a worked example"]
    result = module.compare_variants(a, b)
    assert (result["verifiable_a"], result["verifiable_b"]) == (3 / 40, 34 / 40)
    assert result["median_seconds_b"] > result["median_seconds_a"]  # the kept variant is slower, and checkable


# --- the notebook ----------------------------------------------------------------------------------------------

def notebook_text(which: str) -> str:
    """The notebook's closing cell (`which` = "closing") or all its markdown, whitespace folded."""
    from grader.learner.notebooks.build import build

    cells = [cell for cell in build("reasoning").cells if cell.cell_type == "markdown"]
    return " ".join(" ".join(cell.source.split()) for cell in (cells[-1:] if which == "closing" else cells))


def test_notebook_closing_carries_both_completion_standards():
    closing = notebook_text("closing")
    # the interface section: choose a budget by need; thinking longer does not read a file never given
    assert "More effort does not replace missing evidence" in closing
    # the advice section (issue 26, point 16): evidence or permissions missing, more effort only adds cost
    assert "when a failure comes from missing evidence or from a missing permission" in closing
    assert "raising the reasoning effort only adds cost and does not make the task feasible" in closing
    assert "A budget is worth what it buys in quality" in closing


def test_notebook_says_what_openai_returns_of_its_reasoning():
    # issue 26, point 12: summaries readable, raw chain of thought never, encrypted content on request only
    text = notebook_text("all")
    assert "OpenAI never returns the raw chain of thought" in text
    assert "readable summaries of the reasoning" in text
    assert 'only on request (`include=["reasoning.encrypted_content"]`)' in text
    assert "by default the reasoning items stay on OpenAI's servers" in text
