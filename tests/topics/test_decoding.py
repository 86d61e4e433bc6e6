"""Project tests for the decoding topic: the reference against hand-worked cases, the sizing of the statistical
checks, the solution against the reference, Hugging Face's repetition penalty, the stub, the hints and the
mutants."""
import math
import random
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from exercises import decoding as stub
from grader import hints
from grader.checks.decoding import cases, distribution, draws, models
from grader.checks.decoding.corpus import CASES, PROGRAMS
from grader.checks.decoding.expect import same_beams, sign_blind, status_misconception
from grader.checks.speculative.binomial import intervals, pass_bound
from grader.engine.plugin import check_seed
from mutated import mutant
from reference import decoding as ref
from reference import sampling as ref_sampling
from solutions import decoding as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "decoding"
FUNCTIONS = ("greedy_decode", "sample_decode", "beam_search", "apply_repetition_penalty", "completion_status")
MISCONCEPTIONS = {"truncated_code_as_complete", "repetition_penalty_sign", "beam_no_length_norm",
                  "stop_tokens_in_output", "length_finish_as_complete", "ignores_min_new_tokens",
                  "provider_limit_as_complete"}
QUICK = settings(max_examples=40, deadline=None)
seeds = st.integers(0, 2**31 - 1)


# --- the reference against hand-worked cases ----------------------------------------------------------------

STOP_ANSWERS = [([3, 4, 7], "eos"), ([7], "eos"), ([3, 7, 4, 5], "length"), ([1, 2, 3, 4], "length"),
                ([3], "stop"), ([4, 1], "stop"), ([4, 1, 2, 4, 6, 3], "length"), ([3], "stop"),
                ([5, 1, 2], "length"), ([1], "stop"), ([3, 7], "eos"), ([], "stop")]


@pytest.mark.parametrize("i", range(len(cases.STOP_CASES)))
def test_stop_cases_worked_by_hand(i):
    _, prompt, script, n, eos_id, stop = cases.STOP_CASES[i]
    assert ref.greedy_decode(cases.script_model(prompt, script), prompt, n, eos_id, stop) == STOP_ANSWERS[i]


MIN_ANSWERS = [([0], "eos"), ([2, 3, 4, 0], "eos"), ([3, 0], "eos"), ([3, 2, 0], "eos"), ([2, 3, 4], "length"),
               ([2], "stop"), ([0, 0, 0, 0], "length")]


@pytest.mark.parametrize("i", range(len(cases.MIN_CASES)))
def test_min_new_tokens_cases_worked_by_hand(i):
    _, prompt, script, n, eos_id, stop, least = cases.MIN_CASES[i]
    for module in (ref, sol):
        assert module.greedy_decode(cases.eager_eos_model(prompt, script), prompt, n, eos_id, stop, least) == \
            MIN_ANSWERS[i]
    # the misconception is visible: without min_new_tokens eos comes at once wherever there is an eos_id
    early = ref.greedy_decode(cases.eager_eos_model(prompt, script), prompt, n, eos_id, stop)
    assert early == (([0], "eos") if eos_id is not None else MIN_ANSWERS[i])


def hugging_face_greedy(model, prompt: list, n: int, eos_id: int, least: int) -> tuple[list[int], str]:
    """Greedy decoding with Hugging Face's MinNewTokensLengthLogitsProcessor in front of the argmax."""
    logits_process = pytest.importorskip("transformers.generation.logits_process")
    processor = logits_process.MinNewTokensLengthLogitsProcessor(len(prompt), least, eos_id)
    tokens = list(prompt)
    for _ in range(n):
        scores = processor(torch.tensor([tokens]), model(tokens).unsqueeze(0))   # scores: [1, V]
        tokens.append(int(torch.argmax(scores[0])))
        if tokens[-1] == eos_id:
            return tokens[len(prompt):], "eos"
    return tokens[len(prompt):], "length"


@pytest.mark.parametrize("seed", range(40))
def test_min_new_tokens_matches_hugging_face(seed):
    r = random.Random(seed)
    vocab, order, model_seed = draws.ngram_spec(r)
    prompt, n = draws.prompt_for(r, vocab), r.randint(1, 12)
    eos_id = ref.greedy_decode(models.NGramModel(vocab, order, model_seed), prompt, n)[0][0]  # eos comes at once
    least = r.randint(0, n)
    expected = hugging_face_greedy(models.NGramModel(vocab, order, model_seed), prompt, n, eos_id, least)
    for module in (ref, sol):
        assert module.greedy_decode(models.NGramModel(vocab, order, model_seed), prompt, n, eos_id, (), least) == \
            expected


@pytest.mark.parametrize("seed", range(30))
def test_eager_eos_model_samples_like_greedy(seed):
    # models.EagerEosModel's promise: under every filter the checks draw, sampling gives the greedy answer
    r = random.Random(seed)
    case, filters = draws.eager_case(r), draws.filters(r)
    args = (case["prompt"], case["max_new_tokens"])
    for least in (0, case["min_new_tokens"]):
        greedy = ref.greedy_decode(draws.eager_model(case), *args, case["eos"], case["stop"], least)
        for module in (ref, sol):
            assert module.sample_decode(draws.eager_model(case), *args, torch.Generator().manual_seed(seed), **filters,
                                        eos_id=case["eos"], stop=case["stop"], min_new_tokens=least) == greedy


def test_eager_eos_sizing():
    """The figures written next to sample_min_new_tokens and min_new_tokens_random."""
    assert max(draws.filters(random.Random(s))["temperature"] for s in range(2000)) <= 3.0
    assert math.exp(models.EAGER_SECOND / 3.0) < 1e-28 and 12 * 14 * math.exp(models.EAGER_SECOND / 3.0) < 2e-26
    assert 7 * 8 * math.exp(models.EAGER_SECOND / 0.7) < 56e-124


def test_beam_hand_worked_slot_rule_and_length_penalty():
    # step 1 keeps a (0.5), b (0.4); step 2: a-eos 0.30 finishes, b-a 0.22 lives (a-b 0.15 loses);
    # step 3 has one slot: b-a-eos 0.132.
    two, three = math.log(0.3), math.log(0.4 * 0.55 * 0.6)
    for lp, order in ((1.0, "short"), (0.0, "short"), (2.0, "long")):
        found = ref.beam_search(cases.beam_model(), [], 2, 3, 0, lp)
        expected = [([1, 0], two / 2 ** lp), ([2, 1, 0], three / 3 ** lp)]
        assert same_beams(found, expected if order == "short" else expected[::-1])
    # three beams: eos at depths 1, 2 and 3
    assert [t for t, _ in ref.beam_search(cases.beam_model(), [], 3, 4, 0)] == [[1, 0], [2, 1, 0], [0]]


def test_hand_worked_beam_rankings_survive_rounding():
    # the table's deep sequences do tie (same transitions in another order), but no ranking a search makes does:
    # nudging every logit by up to 1e-6 changes no answer
    rng = torch.Generator().manual_seed(0)
    for num_beams, n, eos_id, lp in cases.BEAM_CASES:
        expected = [t for t, _ in ref.beam_search(cases.beam_model(), [], num_beams, n, eos_id, lp)]
        for _ in range(20):
            model = cases.beam_model()
            model.table = model.table + (torch.rand(model.table.shape, generator=rng, dtype=torch.float64) - 0.5) * 2e-6
            assert [t for t, _ in ref.beam_search(model, [], num_beams, n, eos_id, lp)] == expected


def enumerate_all(model, prompt, n, eos_id, lp) -> list:
    """Every sequence (ended by eos or the limit) with its score, best first: exhaustive search, written apart."""
    out = []

    def grow(tokens, total):
        logp = torch.log_softmax(model.logits_after(prompt + tokens), -1).tolist()
        for v, x in enumerate(logp):
            seq = tokens + [v]
            if v == eos_id or len(seq) == n:
                out.append((seq, (total + x) / len(seq) ** lp))
            else:
                grow(seq, total + x)
    grow([], 0.0)
    return sorted(out, key=lambda b: -b[1])


@QUICK
@given(seed=seeds)
def test_beam_search_with_enough_beams_is_exhaustive(seed):
    case = draws.exhaustive_case(random.Random(seed))
    model = models.PrefixModel(*case["spec"])
    args = (case["prompt"], case["max_new_tokens"], case["eos_id"], case["length_penalty"])
    found = ref.beam_search(model, case["prompt"], case["num_beams"], *args[1:])
    assert same_beams(found, enumerate_all(model, *args))


def test_completion_corpus_statuses():
    expected = ["complete"] * 10 + ["truncated"] * 20 + ["invalid"] * 7 + ["complete"] * 2 + ["truncated"] * 6 \
        + ["complete"] * 4
    assert [ref.completion_status(text, reason) for _, text, reason in CASES] == expected
    assert [sol.completion_status(text, reason) for _, text, reason in CASES] == expected
    assert len(CASES) >= 30


def test_a_limit_word_ignored_is_named_whatever_the_code_looks_like():
    # the submission answered as if generation had ended naturally: the structural verdict, complete or invalid
    for structural in ("complete", "invalid"):
        assert status_misconception(structural, "truncated", structural, "max_tokens") == "provider_limit_as_complete"
        assert status_misconception(structural, "truncated", structural, "length") == "length_finish_as_complete"
    assert status_misconception("complete", "truncated", "truncated", "stop") == "truncated_code_as_complete"
    assert status_misconception("invalid", "truncated", "truncated", "stop") is None


@pytest.mark.parametrize("reason", ["length", "max_tokens", "model_context_window_exceeded", "MAX_TOKENS",
                                    "max_output_tokens"])
def test_every_provider_limit_word_truncates_code_that_parses(reason):
    for module in (ref, sol):
        assert module.completion_status(PROGRAMS["median"], reason) == "truncated"
        assert module.completion_status(PROGRAMS["median"], reason.upper() if reason == "length" else "stop") == \
            "complete"


def test_the_status_checks_draw_every_limit_word_and_the_solution_passes_them():
    """Over 200 run seeds, the two random completion_status checks draw Anthropic's model_context_window_exceeded
    in every run, and the solution answers every drawn case as the reference does (issue 26 point 17)."""
    checks = (("decoding.completion_status_random_cuts", draws.cut_answer, 60),
              ("decoding.completion_status_random_answers", draws.varied_answer, 30))
    runs_with_the_word, wrong = 0, []
    for run in range(200):
        answers = [draw(r) for check_id, draw, n in checks for r in [random.Random(check_seed(run, check_id))]
                   for _ in range(n)]
        runs_with_the_word += any(reason == "model_context_window_exceeded" for _, reason in answers)
        wrong += [(run, reason) for text, reason in answers
                  if sol.completion_status(text, reason) != ref.completion_status(text, reason)]
    assert runs_with_the_word == 200 and wrong == []


def test_fences_follow_commonmark_indentation():
    code = "x = 1\n"
    for indent, fence in (("", True), (" ", True), ("   ", True), ("    ", False), ("\t", False)):
        text = f"{indent}```python\n{code}{indent}```\n"
        assert ref.completion_status(text, "stop") == sol.completion_status(text, "stop") == \
            ("complete" if fence else "invalid"), indent
    # the REPL's verdict: a try without except and a decorator without def compile to nothing yet
    for text in ("try:\n    x = 1\n", "@cache\n"):
        assert ref.completion_status(text, "stop") == sol.completion_status(text, "stop") == "truncated"


def test_loop_lesson():
    prompt, loop = [1, 2, 3], [1, 2, 3] * 4
    assert ref.greedy_decode(models.loop_model(), prompt, 12, 0) == (loop, "length")
    assert ref.beam_search(models.loop_model(), prompt, 4, 12, 0)[0][0] == loop
    assert ref.beam_search(models.loop_model(), prompt, 4, 12, 0, 0.0)[0][0] == [4, 5, 6, 7, 8, 0]
    # the penalty leaves the loop; dividing every seen logit by it (all negative here) keeps the loop
    for penalise, leaves in ((ref.apply_repetition_penalty, True), (lambda x, s, p: sign_blind(x, [s], p), False)):
        model, new = models.loop_model(), []
        for _ in range(12):
            new.append(int(torch.argmax(penalise(model(prompt + new), prompt + new, 2.0))))
            if new[-1] == 0:
                break
        assert (new == [4, 5, 6, 7, 8, 0]) == leaves
    assert (0.5 * 0.95 * 0.95) ** 4 < 0.0416 and 0.0416 ** distribution.LOOP_RUNS < 6e-9


# --- the statistical sizing -----------------------------------------------------------------------------------

def test_sampling_sizing():
    logits = torch.tensor(cases.SAMPLE_LOGITS, dtype=torch.float64)
    law = ref.filtered_law(cases.SAMPLE_LOGITS, **cases.SAMPLE_SETTINGS)
    assert [round(p, 3) for p in law.tolist()] == [0.465, 0.333, 0.202, 0.0, 0.0, 0.0]
    n = distribution.runs(distribution.PUBLIC_TOKENS) * distribution.PUBLIC_TOKENS
    assert n == 150
    bounds = intervals(n, law, distribution.FALSE_FAIL)
    scaled = ref_sampling.top_p_filter(ref_sampling.top_k_filter(logits, 4), 0.85)
    wrong = {
        "no temperature": (ref_sampling.filtered_probs(logits, 1.0, 4, 0.85), 5.2e-14),
        "no top_k": (ref_sampling.filtered_probs(logits, 0.6, None, 0.85), 5.3e-11),
        "no top_p": (ref_sampling.filtered_probs(logits, 0.6, 4, None), 5.3e-11),
        "temperature last": (torch.softmax(scaled / 0.6, -1), 5.3e-11),
        "greedy": (torch.nn.functional.one_hot(torch.tensor(0), 6).double(), 0.0),
    }
    for name, (alt, bound) in wrong.items():
        assert pass_bound(n, alt, bounds) <= bound, name


def independent_wrong_laws(logits: list, temperature: float, top_k: int, top_p: float) -> list:
    """The laws of the five wrong samplers, from the sampling reference's filters (not distribution.wrong_laws)."""
    x = torch.tensor(logits, dtype=torch.float64)
    last = ref_sampling.top_p_filter(ref_sampling.top_k_filter(x, top_k), top_p)
    return [ref_sampling.filtered_probs(x, 1.0, top_k, top_p), ref_sampling.filtered_probs(x, temperature, None, top_p),
            ref_sampling.filtered_probs(x, temperature, top_k, None), torch.softmax(last / temperature, -1),
            torch.nn.functional.one_hot(x.argmax(), len(logits)).double()]


def test_hidden_law_cases_catch_every_wrong_sampler(monkeypatch):
    """sample_distribution_fresh_seed's drawn cases (distribution.py): every wrong sampler passes with probability
    <= 1e-6, recomputed here from the sampling reference; the law test has at least LAW_DRAWS draws; about one
    draw in six that reaches the exact test is kept."""
    tested, kept = [0], 40
    exact = distribution.largest_wrong_pass

    def counted(*args):
        tested[0] += 1
        return exact(*args)

    monkeypatch.setattr(distribution, "largest_wrong_pass", counted)
    for seed in range(kept):
        case = distribution.random_law_case(random.Random(seed))
        logits, settings, m = case["logits"], case["settings"], case["max_new_tokens"]
        law = ref_sampling.filtered_probs(torch.tensor(logits, dtype=torch.float64), **settings)
        n = distribution.runs(m) * m
        assert n >= distribution.LAW_DRAWS and int((law > 0).sum()) >= 2
        assert all(0 <= t < len(logits) for t in case["prompt"])
        bounds = intervals(n, law, distribution.FALSE_FAIL)
        for wrong in independent_wrong_laws(logits, **settings):
            assert pass_bound(n, wrong, bounds) <= distribution.WRONG_PASS, (seed, case)
    assert kept / tested[0] > 0.1


def test_generator_check_sizing():
    """sample_generator_only's figures (distribution.py): two runs of OWN_TOKENS tokens agree with probability
    sum(law**2)**OWN_TOKENS, four runs with sum(law**4)**OWN_TOKENS."""
    law = ref.filtered_law(cases.SAMPLE_LOGITS, **cases.SAMPLE_SETTINGS)
    assert float((law**2).sum()) ** distribution.OWN_TOKENS < 2.1e-9
    assert float((law**4).sum()) ** distribution.OWN_TOKENS < 5e-24


# --- the solution against the reference -------------------------------------------------------------------------

@QUICK
@given(seed=seeds)
def test_greedy_solution_matches_reference(seed):
    r = random.Random(seed)
    vocab, order, model_seed = draws.ngram_spec(r)
    prompt, n = draws.prompt_for(r, vocab), r.randint(1, 15)
    free, _ = ref.greedy_decode(models.NGramModel(vocab, order, model_seed), prompt, n)
    eos_id, stop = draws.eos_for(r, free, vocab), draws.stops_from(r, free, vocab)
    assert sol.greedy_decode(models.NGramModel(vocab, order, model_seed), prompt, n, eos_id, stop) == \
        ref.greedy_decode(models.NGramModel(vocab, order, model_seed), prompt, n, eos_id, stop)


@QUICK
@given(seed=seeds)
def test_sampled_one_hot_solution_matches_reference(seed):
    r = random.Random(seed)
    case, filters = draws.script_case(r), draws.filters(r)
    args = (case["prompt"], case["max_new_tokens"])
    got = sol.sample_decode(draws.script_model(case), *args, torch.Generator().manual_seed(seed), **filters,
                            eos_id=case["eos_id"], stop=case["stop"])
    assert got == ref.greedy_decode(draws.script_model(case), *args, case["eos_id"], case["stop"])


@QUICK
@given(seed=seeds)
def test_beam_solution_matches_reference(seed):
    r = random.Random(seed)
    for case in (draws.narrow_case(r), draws.exhaustive_case(r)):
        args = (case["prompt"], case["num_beams"], case["max_new_tokens"], case["eos_id"], case["length_penalty"])
        assert same_beams(sol.beam_search(models.PrefixModel(*case["spec"]), *args),
                          ref.beam_search(models.PrefixModel(*case["spec"]), *args))


@QUICK
@given(seed=seeds)
def test_penalty_solution_matches_reference(seed):
    logits, seen, penalty = draws.penalty_case(random.Random(seed), torch.Generator().manual_seed(seed))
    got, want = sol.apply_repetition_penalty(logits, seen, penalty), ref.apply_repetition_penalty(logits, seen, penalty)
    assert got.dtype == logits.dtype
    torch.testing.assert_close(got.double(), want.to(logits.dtype).double(), rtol=1e-6, atol=0)


def test_completion_solution_matches_reference_at_every_cut():
    for program in PROGRAMS.values():
        for i in range(len(program) + 1):
            for text in (program[:i], "Here:\n```python\n" + program[:i], "```\n" + program[:i] + "\n```\n"):
                assert sol.completion_status(text, "stop") == ref.completion_status(text, "stop"), text


@QUICK
@given(seed=seeds)
def test_completion_solution_matches_reference_on_random_answers(seed):
    r = random.Random(seed)
    for text, reason in [draws.cut_answer(r) for _ in range(10)] + [draws.varied_answer(r) for _ in range(10)]:
        assert sol.completion_status(text, reason) == ref.completion_status(text, reason)


def test_repetition_penalty_matches_hugging_face():
    transformers = pytest.importorskip("transformers")
    processor = transformers.RepetitionPenaltyLogitsProcessor(penalty=1.7)
    rng = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 11, generator=rng)
    scores[0, 2] = 0.0
    input_ids = torch.randint(11, (3, 6), generator=rng)
    expected = processor(input_ids, scores.clone())
    for module in (ref, sol):
        torch.testing.assert_close(module.apply_repetition_penalty(scores, input_ids, 1.7).float(), expected)


BAD_CALLS = [
    ("max_new_tokens", "greedy_decode", (models.NGramModel(3, 2, 0), [1], 0)),
    ("stop", "greedy_decode", (models.NGramModel(3, 2, 0), [1], 3, None, ((1,), ()))),
    ("temperature", "sample_decode", (models.NGramModel(3, 2, 0), [1], 3, torch.Generator(), 0.0)),
    ("top_k", "sample_decode", (models.NGramModel(3, 2, 0), [1], 3, torch.Generator(), 1.0, 0)),
    ("top_p", "sample_decode", (models.NGramModel(3, 2, 0), [1], 3, torch.Generator(), 1.0, None, 1.5)),
    ("min_new_tokens", "greedy_decode", (models.NGramModel(3, 2, 0), [1], 3, 0, (), 4)),
    ("min_new_tokens", "greedy_decode", (models.NGramModel(3, 2, 0), [1], 3, 0, (), -1)),
    ("min_new_tokens", "sample_decode", (models.NGramModel(3, 2, 0), [1], 3, torch.Generator(), 1.0, None, None, 0,
                                         (), 5)),
    ("num_beams", "beam_search", (models.NGramModel(3, 2, 0), [1], 0, 3)),
    ("max_new_tokens", "beam_search", (models.NGramModel(3, 2, 0), [1], 2, 0)),
    ("penalty", "apply_repetition_penalty", (torch.zeros(4), [1], 0.0)),
    ("seen_tokens", "apply_repetition_penalty", (torch.zeros(4), [4], 1.5)),
    ("finish_reason", "completion_status", ("x = 1", None)),
]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, fn, args", BAD_CALLS)
def test_bad_arguments_name_the_argument(module, argument, fn, args):
    with pytest.raises(ValueError, match=argument):
        getattr(module, fn)(*args)


# --- stub, hints, mutants -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [("greedy_decode", (models.loop_model(), [1], 3)),
                                      ("sample_decode", (models.loop_model(), [1], 3, torch.Generator())),
                                      ("beam_search", (models.loop_model(), [1], 2, 3)),
                                      ("apply_repetition_penalty", (torch.zeros(3), [1], 1.5)),
                                      ("completion_status", ("x = 1", "stop"))])
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)


def test_hints_cover_every_function_and_misconception():
    for fn in FUNCTIONS:
        for level in (1, 2, 3):
            assert hints.hint("decoding", fn, level)
    assert set(hints.misconception_ids("decoding")) == MISCONCEPTIONS == {p.stem for p in MUTANTS.glob("*.py")}


def test_each_mutant_differs_as_its_misconception_predicts():
    m = mutant("decoding", "stop_tokens_in_output")
    assert m.greedy_decode(cases.script_model([1, 2], [3, 4, 5, 6]), [1, 2], 10, 7, ((4, 5),)) == ([3, 4, 5], "stop")
    m = mutant("decoding", "beam_no_length_norm")
    assert same_beams(m.beam_search(cases.beam_model(), [], 2, 3, 0, 2.0),
                      ref.beam_search(cases.beam_model(), [], 2, 3, 0, 0.0))
    m = mutant("decoding", "repetition_penalty_sign")
    logits = torch.tensor([2.0, -1.0, 0.0])
    assert torch.equal(m.apply_repetition_penalty(logits, [0, 1], 2.0), torch.tensor([1.0, -0.5, 0.0]))
    assert mutant("decoding", "truncated_code_as_complete").completion_status("```python\nx = 1\n", "stop") == "complete"
    assert mutant("decoding", "length_finish_as_complete").completion_status("x = 1\n", "length") == "complete"
    m = mutant("decoding", "provider_limit_as_complete")
    assert [m.completion_status("x = 1\n", r) for r in ("length", "max_tokens")] == ["truncated", "complete"]
    # issue 26 point 17: Anthropic's second limit word, on the issue's own example
    answer = "def f(x):\n    return x + 1\n"
    assert m.completion_status(answer, "model_context_window_exceeded") == "complete"
    assert sol.completion_status(answer, "model_context_window_exceeded") == "truncated"
    assert "model_context_window_exceeded" in draws.FINISH_REASONS
    m, case = mutant("decoding", "ignores_min_new_tokens"), cases.MIN_CASES[1]
    _, prompt, script, n, eos_id, stop, least = case
    assert m.greedy_decode(cases.eager_eos_model(prompt, script), prompt, n, eos_id, stop, least) == ([0], "eos")
    for name in MISCONCEPTIONS:
        assert (MUTANTS / f"{name}.py").read_text().startswith('"""Bug: ')
