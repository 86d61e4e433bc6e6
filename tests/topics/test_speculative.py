"""Project tests for the speculative topic: the reference against the solution and against exact laws, the toy
models, the exact laws and binomial test behind the statistical checks (including their power against each
misconception), the misconception predictions against the mutants, the stub and the hints."""
import math
import types
from fractions import Fraction
from pathlib import Path

import pytest
import torch

from exercises import speculative as stub
from grader import hints
from grader.checks.speculative import binomial, distribution, test_hidden, test_public
from grader.checks.speculative import models as toys
from grader.checks.speculative.expect import sixteenths
from grader.checks.speculative.misconceptions import first_tokens_law, verify_predictions
from grader.checks.speculative.test_hidden import forbidden_case, random_case
from grader.engine import CheckFailure, goldens
from reference import speculative as ref
from solutions import speculative as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "speculative"
FUNCTIONS = ("verify", "speculative_generate", "acceptance_rate", "expected_tokens_per_iteration", "expected_speedup")
# u <= p/q instead of u < p/q: no contract id, but the u = 0 checks must still fail it
NON_STRICT = """
def _accepted_prefix(x, q, p, u):
    rows = torch.arange(x.shape[0])
    q_x, p_x = q[rows, x].double(), p[rows, x].double()
    accept = (q_x > 0) & (u.double() <= torch.where(q_x > 0, p_x / q_x, torch.zeros_like(p_x)))
    return int(accept.long().cumprod(0).sum())
"""
MISCONCEPTIONS = {"deterministic_acceptance", "resample_from_target", "no_bonus_token", "ratio_inverted",
                  "one_target_call_per_token"}


def mutant(name: str, extra: str | None = None) -> types.ModuleType:
    """The solution module with a mutant's definitions (or `extra`) appended, as the selftest builds it."""
    module = types.ModuleType(f"mutant_{name}")
    source = ((ROOT / "solutions" / "speculative.py").read_text() + "\n"
              + (extra or (MUTANTS / f"{name}.py").read_text()))
    exec(compile(source, f"mutant_{name}", "exec"), module.__dict__)
    return module


@pytest.fixture
def stored():
    """The public goldens, as the engine activates them before a public check."""
    goldens.activate("speculative", record=False)


def generate_runs(generate, pair: str, prompt: list, max_new_tokens: int, gamma: int, runs: int, seed: int) -> list:
    """What generate_many collects with a served target, made in this process: [(what generate returned, the
    target)]."""
    generator = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(runs):
        target, draft = toys.model(pair, "target"), toys.model(pair, "draft")
        out.append((generate(target, draft, list(prompt), max_new_tokens, gamma, generator), target))
    return out


def target_law(pair: str, prompt: list, k: int) -> torch.Tensor:
    """The law of k tokens sampled from the target alone, by brute force over all V**k sequences."""
    rows = toys.table(pair, "target")
    law = torch.zeros(toys.V ** k, dtype=torch.float64)
    for index in range(toys.V ** k):
        seq = [(index // toys.V ** (k - 1 - j)) % toys.V for j in range(k)]
        law[index] = math.prod(float(toys.probs_after(rows, prompt + seq[:j])[t]) for j, t in enumerate(seq))
    return law


# --- verify: reference and solution ----------------------------------------------------------------------

def test_reference_and_solution_agree_on_random_cases():
    rng = torch.Generator().manual_seed(0)
    for _ in range(300):
        case = random_case(ref, rng)
        assert sol.verify(*case) == ref.verify(*case)
        half = (case[0], *(t.float() for t in case[1:]))
        assert sol.verify(*half) == ref.verify(*half)


def test_verify_first_token_follows_p_exactly():
    """Integrating verify's answer over u and the race: the first token is distributed as p (one draft)."""
    rng = torch.Generator().manual_seed(1)
    for _ in range(8):
        p, q = torch.rand(2, 5, generator=rng, dtype=torch.float64).softmax(-1) ** 3
        p, q = p / p.sum(), q / q.sum()
        law = torch.zeros(5, dtype=torch.float64)
        for x in range(5):
            ratio = float(p[x] / q[x])
            accept = min(1.0, ratio)
            # u just below and just above the ratio: the two answers verify can give for this draft
            kept = ref.verify([x], q[None], torch.stack([p, p]), torch.tensor([accept * 0.999999]), torch.ones(5))
            assert kept[0] == x
            if accept < 1:
                residual = (p - q).clamp(min=0)
                for t in range(5):
                    # the race picks t for sure when every other noise entry is huge
                    noise = torch.full((5,), 1e30, dtype=torch.float64)
                    noise[t] = 1.0
                    got = ref.verify([x], q[None], torch.stack([p, p]), torch.tensor([min(1.0, ratio * 1.000001)]),
                                     noise)
                    assert got == [t] if residual[t] > 0 else got != [t]
                law += q[x] * (1 - accept) * residual / residual.sum()
            law[x] += q[x] * accept
        torch.testing.assert_close(law, p, rtol=1e-12, atol=1e-12)


def test_verify_shape_errors_name_the_argument():
    q, p, u, noise = torch.full((2, 4), 0.25), torch.full((3, 4), 0.25), torch.full((2,), 0.5), torch.ones(4)
    for module in (ref, sol):
        for name, args in (("q", (q[:1], p, u, noise)), ("p", (q, p[:2], u, noise)), ("u", (q, p, u[:1], noise)),
                           ("noise", (q, p, u, noise[:3]))):
            with pytest.raises(ValueError, match=rf"\b{name}\b"):
                module.verify([1, 2], *args)


def test_strict_test_rejects_a_forbidden_token_at_u_zero():
    q, p = sixteenths([[2, 8, 4, 2]]), sixteenths([[6, 6, 4, 0], [4, 4, 4, 4]])
    noise = torch.tensor([0.75, 1.5, 0.375, 1.25], dtype=torch.float64)
    for module in (ref, sol):
        assert module.verify([3], q, p, torch.zeros(1, dtype=torch.float64), noise) == [0]   # the residual's only token
    assert mutant("non_strict", NON_STRICT).verify([3], q, p, torch.zeros(1, dtype=torch.float64), noise) == [3, 2]


def test_non_strict_variant_fails_the_u_zero_checks_without_an_id(stored):
    broken = types.SimpleNamespace(verify=mutant("non_strict", NON_STRICT).verify)
    with pytest.raises(CheckFailure, match="strictly") as public:
        test_public.test_verify_forbidden_at_u_zero(broken)
    with pytest.raises(CheckFailure) as hidden:
        test_hidden.test_verify_forbidden_at_u_zero_random(broken, torch.Generator().manual_seed(3))
    assert public.value.misconception is None and hidden.value.misconception is None
    test_public.test_verify_forbidden_at_u_zero(types.SimpleNamespace(verify=sol.verify))
    test_hidden.test_verify_forbidden_at_u_zero_random(types.SimpleNamespace(verify=sol.verify),
                                                       torch.Generator().manual_seed(3))


def test_forbidden_cases_reach_a_forbidden_draft_at_u_zero():
    rng = torch.Generator().manual_seed(4)
    for _ in range(50):
        draft, q, p, u, noise = forbidden_case(ref, rng)
        assert not u.any()
        first = next(i for i, x in enumerate(draft) if q[i, x] == 0 or p[i, x] == 0)
        assert q[first, draft[first]] > 0 and p[first, draft[first]] == 0
        out = ref.verify(draft, q, p, u, noise)
        assert out[:-1] == draft[:first] and out[-1] != draft[first]    # the residual never returns it


def test_random_cases_hold_u_zero_and_no_u_near_p_over_q():
    rng = torch.Generator().manual_seed(6)
    zeros = 0
    for _ in range(200):
        draft, q, p, u, _ = random_case(ref, rng)
        zeros += int((u == 0).sum())
        for i, x in enumerate(draft):
            if q[i, x] > 0 and u[i] > 0:
                assert abs(float(u[i]) - float(p[i, x] / q[i, x])) > 1e-9 * float(p[i, x] / q[i, x])
    assert zeros >= 50


def test_worked_case_accepts_two_of_four_drafts_and_yields_three_tokens(stored):
    # the hand derivation in test_public.test_verify_worked_case, step by step
    draft = [1, 0, 2, 3]
    q = sixteenths([[2, 8, 4, 2], [8, 4, 2, 2], [2, 2, 10, 2], [4, 4, 4, 4]])
    p = sixteenths([[2, 10, 2, 2], [6, 4, 4, 2], [4, 6, 4, 2], [4, 4, 4, 4], [1, 8, 3, 4]])
    u, noise = sixteenths([12, 4, 8, 0]), torch.tensor([1.0, 1.0, 0.5, 1.0], dtype=torch.float64)
    ratios = [float(p[i, x] / q[i, x]) for i, x in enumerate(draft[:3])]
    assert ratios == [1.25, 0.75, 0.4] and [float(v) for v in u[:3]] == [0.75, 0.25, 0.5]
    residual = (p[2] - q[2]).clamp(min=0)
    assert int(torch.argmax(residual / noise)) == 1 and int(torch.argmax(p[2] / noise)) == 2
    assert ref.verify(draft, q, p, u, noise) == sol.verify(draft, q, p, u, noise) == [1, 0, 1]
    assert goldens.golden("verify_worked_case", None)["expected"] == [1, 0, 1]


# --- acceptance rate and the speed-up scenario ---------------------------------------------------------------

def test_acceptance_rate_is_the_probability_verify_keeps_a_draft():
    """sum_x q(x) P(verify keeps x | u uniform) = sum_x min(p(x), q(x)), the draft integrated out exactly."""
    rng = torch.Generator().manual_seed(8)
    for _ in range(20):
        p, q = (torch.rand(2, 6, generator=rng, dtype=torch.float64) ** 3).unbind()
        p[int(torch.randint(6, (), generator=rng))] = 0
        p, q = p / p.sum(), q / q.sum()
        kept = sum(float(q[x]) * min(1.0, float(p[x] / q[x])) for x in range(6) if q[x] > 0)
        assert math.isclose(ref.acceptance_rate(p, q), kept, rel_tol=1e-12)
        assert math.isclose(sol.acceptance_rate(p, q), kept, rel_tol=1e-12)
        assert type(sol.acceptance_rate(p.float(), q.float())) is float


def test_acceptance_rate_of_the_toys_and_public_cases():
    for pair, alpha in (("alpha75", 0.75), ("identical", 1.0)):
        rows = [ref.acceptance_rate(t, d) for t, d in zip(toys.table(pair, "target"), toys.table(pair, "draft"))]
        assert rows == [alpha] * (toys.V + 1)
    derived = {"overconfident": 0.5, "alpha75": 0.75, "identical": 1.0, "disjoint": 0.0}   # beside ACCEPTANCE_CASES
    assert {name: ref.acceptance_rate(sixteenths(p), sixteenths(q))
            for name, (p, q) in test_public.ACCEPTANCE_CASES.items()} == derived


def test_acceptance_rate_errors_name_the_argument():
    for module in (ref, sol):
        with pytest.raises(ValueError, match=r"\bq\b"):
            module.acceptance_rate(torch.full((4,), 0.25), torch.full((3,), 1 / 3))
        with pytest.raises(ValueError, match=r"\bp\b"):
            module.acceptance_rate(torch.full((2, 4), 0.25), torch.full((2, 4), 0.25))


def test_speedup_scenario_is_the_documented_fractions(stored):
    expected = goldens.golden("speedup_scenarios", None)
    fractions = {"close draft": (Fraction(15, 16), [Fraction(31, 20), Fraction(289201, 131072)]),
                 "poor draft": (Fraction(3, 8), [Fraction(11, 10), Fraction(6505, 8192)])}
    for name, (alpha, speedups) in fractions.items():
        assert expected[name]["alpha"] == alpha
        tokens = [sum(alpha ** i for i in range(g + 1)) for g in test_public.SCENARIO_GAMMAS]
        assert [t / (g * Fraction(test_public.SCENARIO_C) + 1)
                for t, g in zip(tokens, test_public.SCENARIO_GAMMAS)] == speedups
        assert all(math.isclose(a, float(b), rel_tol=1e-15) for a, b in zip(expected[name]["speedups"], speedups))
    close, poor = expected["close draft"]["speedups"], expected["poor draft"]["speedups"]
    assert close[1] > 2 > close[0] > 1 and poor[0] > 1 > poor[1]    # long drafts win only at high acceptance


# --- formulas -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.75, 0.9, 1.0])
@pytest.mark.parametrize("gamma", [0, 1, 4, 9])
def test_formulas_agree_and_match_a_simulated_capped_geometric(alpha, gamma):
    expected = ref.expected_tokens_per_iteration(alpha, gamma)
    assert math.isclose(sol.expected_tokens_per_iteration(alpha, gamma), expected, rel_tol=1e-12)
    # the tokens of an iteration: 1 + the number of leading successes among gamma Bernoulli(alpha) trials
    exact = sum(min(a + 1, gamma + 1) * (alpha ** a) * ((1 - alpha) if a < gamma else 1) for a in range(gamma + 1))
    assert math.isclose(expected, exact, rel_tol=1e-12)
    for c in (0.0, 0.05, 1.0):
        assert math.isclose(sol.expected_speedup(alpha, gamma, c), expected / (gamma * c + 1), rel_tol=1e-12)
        assert math.isclose(ref.expected_speedup(alpha, gamma, c), expected / (gamma * c + 1), rel_tol=1e-12)


def test_formula_errors_name_the_argument():
    for module in (ref, sol):
        for name, call in (("alpha", lambda: module.expected_tokens_per_iteration(1.5, 2)),
                           ("gamma", lambda: module.expected_tokens_per_iteration(0.5, -1)),
                           ("c", lambda: module.expected_speedup(0.5, 2, -1.0))):
            with pytest.raises(ValueError, match=rf"\b{name}\b"):
                call()


# --- toy models ----------------------------------------------------------------------------------------------

def test_toy_score_rows_are_next_probs_of_each_prefix():
    model = toys.model("mismatch", "target")
    tokens = [2, 0, 3, 3, 1]
    for n in range(1, len(tokens) + 2):
        rows = model.score(tokens, n)
        assert rows.shape == (n, toys.V)
        for j in range(n):
            assert torch.equal(rows[j], model.next_probs(tokens[:len(tokens) - n + 1 + j]))
    assert (model.score_calls, model.next_probs_calls, model.calls) == (6, 21, 27)
    with pytest.raises(ValueError):
        model.score(tokens, len(tokens) + 2)


def test_alpha75_toys_accept_with_probability_three_quarters_after_every_prefix():
    overlap = torch.minimum(toys.table("alpha75", "target"), toys.table("alpha75", "draft")).sum(-1)
    assert torch.equal(overlap, torch.full((toys.V + 1,), 0.75, dtype=torch.float64))


def test_mismatch_rows_are_shifts_so_every_prompt_token_is_equally_hard():
    for role in ("target", "draft"):
        rows = toys.table("mismatch", role)
        for t in range(1, toys.V):
            assert torch.equal(rows[t], rows[0].roll(t))


def test_generator_check_bounds():
    """generate_uses_generator's figures: the target law of every 'mismatch' row is a shift of row 0, so runs of
    12 tokens agree with probability at most sum(p**m)**12 for m runs."""
    law = toys.table("mismatch", "target")[0]
    assert torch.equal(law.sort(descending=True).values[:3] * 16, torch.tensor([8.0, 4, 4], dtype=torch.float64))
    assert float((law**3).sum()) ** 12 < 2.2e-10 and float((law**4).sum()) ** 12 < 1.5e-14


# --- exact laws, the binomial test and the statistical checks' sizing ----------------------------------------

@pytest.mark.parametrize("prompt", [[], [0], [2, 3]])
def test_chain_with_the_correct_rules_is_the_target_law(prompt):
    for k, gamma in ((1, 1), (3, 2), (2, 4)):
        torch.testing.assert_close(first_tokens_law("mismatch", prompt, k, gamma), target_law("mismatch", prompt, k),
                                   rtol=0, atol=1e-15)


def test_binomial_intervals_hold_their_false_fail_share():
    n, law = 500, first_tokens_law("mismatch", [0], 3, 2)
    bounds = binomial.intervals(n, law, 1e-6)
    share = 1e-6 / int((law > 0).sum())
    for prob, (lo, hi) in zip(law.tolist(), bounds.tolist()):
        pmf = binomial.log_pmf(n, prob).exp()
        assert float(pmf[:lo].sum()) <= share / 2 and float(pmf[hi + 1:].sum()) <= share / 2
        assert lo <= n * prob <= hi


@pytest.mark.parametrize("token", range(toys.V))
def test_distribution_check_catches_each_misconception_with_probability_above_1_minus_1e6(token):
    k, gamma, runs = distribution.K, distribution.GAMMA, distribution.RUNS
    bounds = binomial.intervals(runs, first_tokens_law("mismatch", [token], k, gamma), distribution.FALSE_FAIL)
    passes = {m: binomial.pass_bound(runs, first_tokens_law("mismatch", [token], k, gamma, m), bounds)
              for m in distribution.LAW_MISCONCEPTIONS}
    assert passes["resample_from_target"] < 1.3e-12                        # the figure distribution.py states
    assert passes["deterministic_acceptance"] == 0 and passes["ratio_inverted"] < 1e-57


@pytest.mark.parametrize("gamma", distribution.GAMMAS)
def test_distribution_check_sizing_holds_for_every_hidden_gamma(gamma):
    """distribution.py's figures for the hidden check's gammas: resample_from_target passes with probability
    <= 1.3e-12 at gamma 2 and <= 9e-23 above; the other two never pass (every prompt token is row 0 shifted)."""
    k, runs = distribution.K, distribution.RUNS
    bounds = binomial.intervals(runs, first_tokens_law("mismatch", [0], k, gamma), distribution.FALSE_FAIL)
    passes = {m: binomial.pass_bound(runs, first_tokens_law("mismatch", [0], k, gamma, m), bounds)
              for m in distribution.LAW_MISCONCEPTIONS}
    assert passes["resample_from_target"] < (1.3e-12 if gamma == 2 else 9e-23)
    assert passes["deterministic_acceptance"] == 0 and passes["ratio_inverted"] < 1e-57


def verifying(generate, prompt: list, max_new_tokens: int, gamma: int, runs: int, seed: int) -> tuple | None:
    """(message, misconception) of expect_verified on `runs` runs of `generate` on 'mismatch', None if it passes."""
    raw = generate_runs(generate, "mismatch", prompt, max_new_tokens, gamma, runs, seed)
    try:
        distribution.expect_verified([(list(result[0]), target) for result, target in raw], prompt, gamma, "runs")
    except CheckFailure as failure:
        return str(failure), failure.misconception
    return None


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
def test_generated_tokens_are_verified_by_the_target_calls(module):
    """expect_verified accepts every run of a correct speculative_generate on the hidden check's settings."""
    for seed in range(12):
        prompt, max_new_tokens, gamma = distribution.random_settings(seed)
        assert gamma in distribution.GAMMAS and max_new_tokens >= distribution.K + gamma and 1 <= len(prompt) <= 3
        assert verifying(module.speculative_generate, prompt, max_new_tokens, gamma, 20, seed) is None


def sample_the_target(target, draft, prompt, max_new_tokens, gamma, generator):
    """The target's own law, sampled token by token (what a submission recognising the law check could do)."""
    new = []
    while len(new) < max_new_tokens:
        new.append(int(torch.multinomial(target.next_probs([*prompt, *new]), 1, generator=generator)))
    return new, dict(iterations=max_new_tokens, proposed=0, accepted=0, target_calls=max_new_tokens, draft_calls=0)


def score_the_tokens(target, draft, prompt, max_new_tokens, gamma, generator):
    """Tokens sampled from the target, with one score call over them all made for show."""
    new, stats = sample_the_target(toys.model("mismatch", "target"), draft, prompt, max_new_tokens, gamma, generator)
    target.score([*prompt, *new], 1)
    return new, stats


def draft_for_show(target, draft, prompt, max_new_tokens, gamma, generator):
    """Draft-and-score iterations that emit one sample of p each, whatever the drafts: the target's law exactly."""
    new = []
    while len(new) < max_new_tokens:
        drafted = []
        for _ in range(gamma):
            drafted.append(int(torch.multinomial(draft.next_probs([*prompt, *new, *drafted]), 1, generator=generator)))
        p = target.score([*prompt, *new, *drafted], gamma + 1)
        new.append(int(torch.multinomial(p[0], 1, generator=generator)))
    return new, dict(iterations=max_new_tokens, proposed=gamma * max_new_tokens, accepted=0,
                     target_calls=max_new_tokens, draft_calls=gamma * max_new_tokens)


@pytest.mark.parametrize("generate", [sample_the_target, score_the_tokens, draft_for_show])
def test_tokens_the_target_calls_do_not_verify_fail(generate):
    assert verifying(generate, [1], 5, 2, 30, 0) is not None


def test_a_rejected_draft_given_back_shows_resample_from_target():
    assert verifying(mutant("resample_from_target").speculative_generate, [2], 5, 2, 100, 3)[1] == \
        "resample_from_target"


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
def test_generated_tokens_pass_the_distribution_test(module):
    k, gamma, runs = distribution.K, distribution.GAMMA, distribution.RUNS
    law = first_tokens_law("mismatch", [1], k, gamma)
    raw = generate_runs(module.speculative_generate, "mismatch", [1], k + gamma, gamma, runs, 7)
    counts = distribution.first_tokens_counts(raw, k, k + gamma, "runs")
    assert sum(counts) == runs
    assert binomial.outside(counts, binomial.intervals(runs, law, 1e-6)) == []


@pytest.mark.parametrize("name", ["resample_from_target", "ratio_inverted", "deterministic_acceptance"])
def test_mutant_generations_follow_their_misconception_law(name):
    k, gamma, runs = distribution.K, distribution.GAMMA, distribution.RUNS
    raw = generate_runs(mutant(name).speculative_generate, "mismatch", [2], k + gamma, gamma, runs, 3)
    counts = distribution.first_tokens_counts(raw, k, k + gamma, "runs")
    law = first_tokens_law("mismatch", [2], k, gamma, name)
    assert binomial.outside(counts, binomial.intervals(runs, law, 1e-6)) == []
    assert binomial.outside(counts, binomial.intervals(runs, first_tokens_law("mismatch", [2], k, gamma), 1e-6))


def test_formula_check_tolerances_are_the_documented_ones():
    assert math.isclose(test_public.EPS_ALPHA, 0.109, abs_tol=5e-4)
    assert math.isclose(test_public.EPS_TOKENS, 0.47, abs_tol=5e-3)
    # each Hoeffding event has probability 2 exp(-2 RUNS eps^2 / range^2) = 5e-7 at these tolerances
    assert math.isclose(2 * math.exp(-2 * test_public.RUNS * test_public.HOEFFDING ** 2), 5e-7, rel_tol=1e-9)


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
def test_first_iteration_histogram_is_the_capped_geometric(module):
    gamma, runs = test_public.GAMMA, 2000
    raw = generate_runs(module.speculative_generate, "alpha75", [1], gamma + 1, gamma, runs, 11)
    hist = test_public.accepted_histogram(raw, [1], gamma, "runs")
    assert sum(hist) == runs
    alpha = test_public.ALPHA
    for a, count in enumerate(hist):
        prob = alpha ** a * ((1 - alpha) if a < gamma else 1)
        assert abs(count - runs * prob) < 6 * math.sqrt(runs * prob * (1 - prob))


# --- generate ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
def test_generate_spends_one_target_call_per_iteration_and_counts_its_stats(module):
    for pair, n, gamma in (("mismatch", 13, 3), ("identical", 10, 2), ("alpha75", 1, 4), ("mismatch", 0, 1)):
        target, draft = toys.model(pair, "target"), toys.model(pair, "draft")
        tokens, stats = module.speculative_generate(target, draft, [1], n, gamma, torch.Generator().manual_seed(n))
        assert len(tokens) == n and all(0 <= t < toys.V for t in tokens)
        assert stats["iterations"] == stats["target_calls"] == target.score_calls and target.next_probs_calls == 0
        assert stats["draft_calls"] == draft.calls and stats["accepted"] + stats["iterations"] == n
        if pair == "identical":
            assert stats["accepted"] == stats["proposed"]
    for name, args in (("max_new_tokens", (-1, 2)), ("gamma", (3, 0))):
        with pytest.raises(ValueError, match=name):
            module.speculative_generate(target, draft, [1], *args, torch.Generator())


# --- misconception predictions against the mutants ------------------------------------------------------------

@pytest.mark.parametrize("name", ["deterministic_acceptance", "ratio_inverted", "resample_from_target",
                                  "no_bonus_token"])
def test_verify_predictions_match_the_mutant_whenever_it_differs(name):
    broken = mutant(name).verify
    rng = torch.Generator().manual_seed(5)
    differed = named = 0
    for _ in range(200):
        case = random_case(ref, rng)
        got, right = broken(*case), ref.verify(*case)
        if got != right:
            predictions = verify_predictions(ref, *case)
            differed += 1
            named += (name, got) in predictions
            # never another id; no id at all only where two misconceptions give this same answer
            assert all(mid == name for mid, tokens in predictions if tokens == got)
    assert differed >= 10 and named >= 0.8 * differed


def test_one_target_call_mutant_calls_the_target_per_position():
    target, draft = toys.model("mismatch", "target"), toys.model("mismatch", "draft")
    _, stats = mutant("one_target_call_per_token").speculative_generate(target, draft, [1], 10, 3,
                                                                        torch.Generator().manual_seed(0))
    assert target.score_calls == 0 and target.next_probs_calls == stats["proposed"] + stats["iterations"]


# --- stub, mutants and hints ---------------------------------------------------------------------------------

def test_stub_has_the_contract_api_and_raises_not_implemented():
    calls = {"verify": ([], torch.zeros(0, 2), torch.ones(1, 2) / 2, torch.zeros(0), torch.ones(2)),
             "speculative_generate": (None, None, [0], 1, 1, torch.Generator()),
             "acceptance_rate": (torch.ones(2) / 2, torch.ones(2) / 2),
             "expected_tokens_per_iteration": (0.5, 2), "expected_speedup": (0.5, 2, 0.1)}
    for name in FUNCTIONS:
        assert getattr(stub, name).__doc__
        with pytest.raises(NotImplementedError, match="TODO"):
            getattr(stub, name)(*calls[name])


def test_one_mutant_per_misconception_each_with_a_docstring():
    assert {p.stem for p in MUTANTS.glob("*.py")} == MISCONCEPTIONS
    for name in MISCONCEPTIONS:
        assert mutant(name).__dict__  # compiles and runs on top of the solution
        assert (MUTANTS / f"{name}.py").read_text().startswith('"""Bug: ')


def test_notebook_closes_on_what_the_topic_does_not_do():
    from grader.learner.notebooks.build import build

    last = build("speculative").cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## What this does not do")
    assert all(phrase in " ".join(last.source.split()) for phrase in ('is not voting', 'is not fact-checking'))


def test_notebook_says_where_the_formula_holds():
    # issue 26, points 11 and 19: memory-bound at small batch; the formula assumes i.i.d. acceptance, stated where it
    # first appears (stub, notebook, hints), and the notebook's example of runs, recomputed
    from grader.learner.notebooks.topics import speculative as notebook

    concept = " ".join(notebook.CONCEPT.split())
    assert concept.startswith("At small batch, decoding is memory-bound")
    assert "independently of the others (i.i.d." in concept
    assert "i.i.d." in " ".join(stub.expected_tokens_per_iteration.__doc__.split())
    assert "independently of the others" in hints.hint("speculative", "expected_tokens_per_iteration", 2)
    formula = ref.expected_tokens_per_iteration
    mixed = (formula(0.95, 4) + formula(0.35, 4)) / 2  # half the iterations easy, half hard: mean alpha 0.65
    assert f"the formula gives {formula((0.95 + 0.35) / 2, 4):.2f} tokens" in concept
    assert f"yield {mixed:.2f} on average" in concept
