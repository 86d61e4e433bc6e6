"""Public speculative checks: fixed verify cases in sixteenths (answers from the goldens), the Leviathan et al.
formulas, and speculative_generate on the toy models of models.py, served by the grader."""
import math

import torch

from grader.checks.speculative.distribution import expect_target_distribution
from grader.checks.speculative.expect import (expect_all_accepted, expect_names, expect_one_target_call,
                                              expect_stats_add_up, expect_tokens, expect_verify, generate,
                                              generate_many, generate_result, generated_tokens, is_token_list,
                                              stored_verify, tie_answers, toy_pair, verify_text)
from grader.checks.speculative.expect import sixteenths as Q
from grader.engine import check, expect_type, fail, golden, reference, tr, within


@check("verify_bonus_token", points=2, hint="verify",
       title="verify accepts a whole draft and adds the bonus token from the last row of p")
def test_verify_bonus_token(sub):
    # x1 = 2 with p/q = 1/2 and u = 1/4; x2 = 0 with p = q; x3 = 3 with p/q = 2: all accepted.
    # The bonus race p4 / noise = [2, 4, 12, 4]/16 picks 2, not the most likely token 1.
    draft = [2, 0, 3]
    q = Q([[2, 2, 8, 4], [8, 4, 2, 2], [4, 4, 6, 2]])
    p = Q([[4, 4, 4, 4], [8, 4, 2, 2], [2, 2, 8, 4], [1, 8, 3, 4]])
    expect_verify(sub, "verify_bonus", draft, q, p, Q([4, 15, 12]), torch.tensor([0.5, 2.0, 0.25, 1.0]).double())
    # a single draft accepted because p(x) > q(x): u = 15/16 is below the ratio 2
    expect_verify(sub, "verify_bonus_single", [1], Q([[8, 4, 2, 2]]), Q([[2, 8, 4, 2], [2, 2, 2, 10]]),
                  Q([15]), torch.tensor([1.0, 1.0, 0.25, 1.0]).double())


@check("verify_acceptance_rule", points=2, hint="verify",
       title="verify accepts x exactly when u < p(x) / q(x)")
def test_verify_acceptance_rule(sub):
    q = Q([[2, 8, 4, 2]])
    noise = torch.tensor([0.75, 1.5, 0.5, 1.25]).double()
    # p(1)/q(1) = 1/2: u = 1/4 accepts, u = 3/4 rejects
    p_half = Q([[6, 4, 2, 4], [4, 4, 4, 4]])
    expect_verify(sub, "verify_rule_accept_below", [1], q, p_half, Q([4]), noise)
    expect_verify(sub, "verify_rule_reject_above", [1], q, p_half, Q([12]), noise)
    # p(1)/q(1) = 3/2: every u accepts
    p_more = Q([[3, 12, 1, 0], [4, 4, 4, 4]])
    expect_verify(sub, "verify_rule_accept_ratio_above_one", [1], q, p_more, Q([12]),
                  torch.tensor([0.25, 2.0, 1.0, 1.0]).double())
    # the target forbids x = 3 (p(3) = 0): any u > 0 rejects
    p_forbid = Q([[6, 6, 4, 0], [4, 4, 4, 4]])
    expect_verify(sub, "verify_rule_reject_forbidden", [3], q, p_forbid, Q([1]), noise)


@check("verify_forbidden_at_u_zero", points=1, hint="verify",
       title="verify never accepts a token the target forbids, even at u = 0 (u < p/q is strict)")
def test_verify_forbidden_at_u_zero(sub):
    # x1 = 1: p/q = 8/4 = 2, so u = 12/16 accepts. x2 = 3: p(3) = 0 and q(3) = 2/16. u in [0, 1) is drawn
    # uniformly, so u < p/q = 0 never holds: the token is rejected even at u = 0, and the residual
    # max(0, p2 - q2) = [4, 0, 0, 0]/16 gives token 0: [1, 0]. A test u <= p/q would keep 3 and add the bonus
    # token (p3 / noise = [4/0.75, 4/1.5, 4/0.375, 4/1.25]/16, largest at 2): [1, 3, 2].
    draft, u = [1, 3], Q([12, 0])
    q = Q([[2, 4, 8, 2], [2, 8, 4, 2]])
    p = Q([[2, 8, 4, 2], [6, 6, 4, 0], [4, 4, 4, 4]])
    noise = torch.tensor([0.75, 1.5, 0.375, 1.25]).double()
    case = stored_verify("verify_forbidden_u_zero", draft, q, p, u, noise)
    actual, what = sub.verify(draft, q, p, u, noise), verify_text(draft, q, p, u, noise)
    if is_token_list(actual) and actual[:2] == draft:
        fail(tr("{what} returned {actual}: it accepted token 3, which the target gives probability 0, at u = 0. "
                "Accept only when u < p(x) / q(x), strictly: u = 0 passes u <= 0, so a non-strict test keeps a token "
                "the target never produces; expected {expected}", what=what, actual=actual, expected=case["expected"]))
    expect_tokens(actual, case["expected"], what, [tuple(w) for w in case["wrong"]])


@check("verify_worked_case", points=1, hint="verify",
       title="four drafted tokens, the first two accepted: the third is replaced from the residual, 3 new tokens")
def test_verify_worked_case(sub):
    # x1 = 1: p/q = 10/8 >= 1, accepted whatever u (12/16). x2 = 0: p/q = 6/8 = 0.75 > u = 4/16, accepted.
    # x3 = 2: p/q = 4/10 = 0.4 < u = 8/16, rejected; its replacement races the residual
    # max(0, p3 - q3) = [2, 4, 0, 0]/16 against the noise [1, 1, 0.5, 1] and gives token 1 (p3 itself would give
    # the rejected 2: [4, 6, 8, 2]/16 over that noise). x4 is never looked at, and the bonus row p5 is unused.
    # The iteration ends with three new tokens: [1, 0, 1].
    draft, u = [1, 0, 2, 3], Q([12, 4, 8, 0])
    q = Q([[2, 8, 4, 2], [8, 4, 2, 2], [2, 2, 10, 2], [4, 4, 4, 4]])
    p = Q([[2, 10, 2, 2], [6, 4, 4, 2], [4, 6, 4, 2], [4, 4, 4, 4], [1, 8, 3, 4]])
    expect_verify(sub, "verify_worked_case", draft, q, p, u, torch.tensor([1.0, 1.0, 0.5, 1.0]).double())


@check("verify_residual", points=2, hint="verify",
       title="at the first rejection verify draws the last token from max(0, p - q)")
def test_verify_residual(sub):
    # x1 = 0 is accepted (p = q); x2 = 1 is rejected (p/q = 1/4 < u = 1/2); x3 is never looked at.
    # The residual max(0, p2 - q2) = [4, 0, 0, 2]/16 races to token 3, whereas p2 itself would give token 2.
    draft = [0, 1, 1]
    q = Q([[8, 4, 2, 2], [2, 8, 4, 2], [4, 4, 4, 4]])
    p = Q([[8, 4, 2, 2], [6, 2, 4, 4], [4, 4, 4, 4], [4, 4, 4, 4]])
    expect_verify(sub, "verify_residual", draft, q, p, Q([8, 8, 0]), torch.tensor([4.0, 1.0, 0.5, 1.0]).double())
    # rejected at the first position: nothing accepted, one residual token
    expect_verify(sub, "verify_residual_first", [2], Q([[2, 2, 10, 2]]), Q([[2, 6, 4, 4], [4, 4, 4, 4]]),
                  Q([12]), torch.tensor([0.1, 1.0, 0.3, 1.5]).double())


@check("verify_zero_draft_probability", points=1, hint="verify",
       title="verify rejects a draft token that q gives probability 0, whatever u is")
def test_verify_zero_draft_probability(sub):
    # q(2) = 0 while p(2) > 0: p/q is not a probability, so the token is rejected even with u = 0
    expect_verify(sub, "verify_zero_q", [2], Q([[8, 4, 0, 4]]), Q([[4, 4, 4, 4], [2, 2, 2, 10]]), Q([0]),
                  torch.tensor([1.0, 0.5, 2.0, 1.0]).double())
    # p = q and x has probability 0 under both: the residual is all zero, so the last token comes from p,
    # here token 3 (p / noise = [4, 0, 4, 8]/16)
    expect_verify(sub, "verify_zero_residual", [0, 1], Q([[4, 4, 4, 4], [8, 0, 4, 4]]),
                  Q([[4, 4, 4, 4], [8, 0, 4, 4], [4, 4, 4, 4]]), Q([0, 0]),
                  torch.tensor([2.0, 0.5, 1.0, 0.5]).double())


@check("verify_race_tie", points=1, hint="verify",
       title="verify may break a tie of the exponential race either way")
def test_verify_race_tie(sub):
    # rejected (p/q = 2/10 < u = 1/2); the residual [4, 0, 4, 0]/16 against equal noise: token 0 and token 2 tie
    noise = torch.ones(4, dtype=torch.float64)
    draft, q, p, u = [1], Q([[2, 10, 2, 2]]), Q([[6, 2, 6, 2], [4, 4, 4, 4]]), Q([8])
    allowed = golden("verify_tie_race_answers", lambda: tie_answers(reference("speculative"), draft, q, p, u, noise))
    expect_verify(sub, "verify_tie_race", draft, q, p, u, noise, allowed=[list(a) for a in allowed])


@check("verify_empty_draft", points=1, hint="verify",
       title="verify with no draft tokens returns one token from p")
def test_verify_empty_draft(sub):
    expect_verify(sub, "verify_empty", [], torch.zeros(0, 4, dtype=torch.float64), Q([[2, 6, 4, 4]]),
                  torch.zeros(0, dtype=torch.float64), torch.tensor([0.5, 2.0, 0.25, 1.0]).double())


@check("verify_bad_arguments", points=1, hint="verify",
       title="verify raises ValueError naming a tensor whose shape does not fit")
def test_verify_bad_arguments(sub):
    q, p, u, noise = Q([[4] * 4] * 2), Q([[4] * 4] * 3), Q([8, 8]), torch.ones(4, dtype=torch.float64)
    for name, args in (("p", (q, p[:2], u, noise)), ("u", (q, p, Q([8, 8, 8]), noise)),
                       ("noise", (q, p, u, torch.ones(3, dtype=torch.float64)))):
        shape = list(args[("q", "p", "u", "noise").index(name)].shape)
        expect_names(name, tr("verify with 2 draft tokens and {name} of shape {shape}", name=name, shape=shape),
                     sub.verify, [1, 2], *args)


# Expected tokens and speedup: Leviathan et al. (2023), expected tokens per iteration and walltime
# improvement factor; answers from the goldens.
FORMULA_CASES = [(0.0, 3), (0.5, 1), (0.6, 7), (0.8, 4), (0.9, 2), (1.0, 4), (0.75, 0)]
SPEEDUP_CASES = [(0.8, 4, 0.05), (0.6, 3, 0.1), (0.9, 5, 0.0), (1.0, 4, 0.2), (0.0, 3, 0.1), (0.7, 2, 1.0)]


def expect_number(actual, expected: float, what: str) -> None:
    """Fail unless `actual` is a number within a relative 1e-9 of `expected`."""
    expect_type(actual, (float, int), what)
    if not within(actual, expected, atol=1e-12, rtol=1e-9):
        fail(tr("{what} returned {actual!r}, expected {expected!r} (relative tolerance 1e-9)", what=what,
                actual=actual, expected=expected))


@check("expected_tokens_formula", points=2, hint="expected_tokens_per_iteration",
       title="expected_tokens_per_iteration is (1 - alpha**(gamma+1)) / (1 - alpha), gamma + 1 at alpha = 1")
def test_expected_tokens_formula(sub):
    for alpha, gamma in FORMULA_CASES:
        expected = golden(f"tokens_{alpha}_{gamma}",
                          lambda: reference("speculative").expected_tokens_per_iteration(alpha, gamma))
        expect_number(sub.expected_tokens_per_iteration(alpha, gamma), expected,
                      f"expected_tokens_per_iteration(alpha={alpha}, gamma={gamma})")


@check("expected_speedup_formula", points=1, hint="expected_speedup",
       title="expected_speedup is the expected tokens per iteration over gamma*c + 1")
def test_expected_speedup_formula(sub):
    for alpha, gamma, c in SPEEDUP_CASES:
        expected = golden(f"speedup_{alpha}_{gamma}_{c}",
                          lambda: reference("speculative").expected_speedup(alpha, gamma, c))
        expect_number(sub.expected_speedup(alpha, gamma, c), expected,
                      f"expected_speedup(alpha={alpha}, gamma={gamma}, c={c})")


@check("formula_bad_arguments", points=1, hint="expected_speedup",
       title="the formulas raise ValueError naming alpha, gamma or c when it is out of range")
def test_formula_bad_arguments(sub):
    for alpha in (1.5, -0.1):
        expect_names("alpha", f"expected_tokens_per_iteration(alpha={alpha}, gamma=3)",
                     sub.expected_tokens_per_iteration, alpha, 3)
    expect_names("gamma", "expected_tokens_per_iteration(alpha=0.5, gamma=-1)", sub.expected_tokens_per_iteration,
                 0.5, -1)
    expect_names("alpha", "expected_speedup(alpha=2.0, gamma=3, c=0.1)", sub.expected_speedup, 2.0, 3, 0.1)
    expect_names("c", "expected_speedup(alpha=0.5, gamma=3, c=-0.5)", sub.expected_speedup, 0.5, 3, -0.5)


# acceptance_rate: each case's sum_v min(p(v), q(v)) in sixteenths is written beside it.
ACCEPTANCE_CASES = {
    "overconfident": ([8, 4, 4, 0], [14, 0, 0, 2]),   # the 'mismatch' toys' first row: min = [8, 0, 0, 0] -> 1/2
    "alpha75": ([8, 4, 2, 2], [4, 8, 2, 2]),          # the 'alpha75' toys' first row: min = [4, 4, 2, 2] -> 3/4
    "identical": ([1, 8, 3, 4], [1, 8, 3, 4]),        # q = p: every draft is kept -> 1
    "disjoint": ([8, 8, 0, 0], [0, 0, 8, 8]),         # no common token: every draft is rejected -> 0
}


@check("acceptance_rate_cases", points=1, hint="acceptance_rate",
       title="acceptance_rate is the probability that verify keeps one draft token: 1/2, 3/4, 1 and 0 here")
def test_acceptance_rate_cases(sub):
    for name, (p, q) in ACCEPTANCE_CASES.items():
        expected = golden(f"acceptance_{name}", lambda: reference("speculative").acceptance_rate(Q(p), Q(q)))
        expect_number(sub.acceptance_rate(Q(p), Q(q)), expected, f"acceptance_rate(p={p}/16, q={q}/16)")
    expect_names("q", tr("acceptance_rate(p of shape {p}, q of shape {q})", p=[4], q=[3]), sub.acceptance_rate,
                 Q([4] * 4), Q([4] * 3))
    expect_names("p", tr("acceptance_rate(p of shape {p}, q of shape {q})", p=[2, 4], q=[2, 4]),
                 sub.acceptance_rate, Q([[4] * 4] * 2), Q([[4] * 4] * 2))


# Two drafts of one target row, both costing c = 1/4 of a target forward pass (an assumed ratio, not a measured
# one). A close draft, min(p, q) = [7, 4, 2, 2]/16: alpha = 15/16; a poor one, min = [0, 2, 2, 2]/16: alpha = 3/8.
# With tokens(a, g) = 1 + a + ... + a**g and cost g/4 + 1, exactly:
#   alpha = 15/16: gamma = 1 -> (31/16) / (5/4) = 31/20;  gamma = 4 -> (289201/65536) / 2 = 289201/131072 (> 2)
#   alpha = 3/8:   gamma = 1 -> (11/8) / (5/4) = 11/10;   gamma = 4 -> (6505/4096) / 2 = 6505/8192 (< 1)
# Long drafts pay off only when most drafts survive; at low acceptance they make decoding slower than the target
# alone, and a short draft keeps a small gain. The check compares with the goldens, computed by the reference.
SCENARIO_TARGET = [8, 4, 2, 2]
SCENARIO_DRAFTS = {"close draft": [7, 5, 2, 2], "poor draft": [0, 2, 8, 6]}  # the goldens' keys, told by `named`
SCENARIO_C, SCENARIO_GAMMAS = 0.25, (1, 4)


@check("speedup_collapses_at_low_acceptance", points=1, hint="expected_speedup",
       title="expected_speedup with a close draft against a poor one: at low acceptance long drafts cost time")
def test_speedup_collapses_at_low_acceptance(sub):
    def compute() -> dict:
        ref = reference("speculative")
        out = {}
        for name, q in SCENARIO_DRAFTS.items():
            alpha = ref.acceptance_rate(Q(SCENARIO_TARGET), Q(q))
            out[name] = {"alpha": alpha, "speedups": [ref.expected_speedup(alpha, g, SCENARIO_C)
                                                       for g in SCENARIO_GAMMAS]}
        return out
    expected = golden("speedup_scenarios", compute)
    for name, q in SCENARIO_DRAFTS.items():
        alpha = expected[name]["alpha"]
        expect_number(sub.acceptance_rate(Q(SCENARIO_TARGET), Q(q)), alpha,
                      tr("{name}: {call}", name=named(name), call=f"acceptance_rate(p={SCENARIO_TARGET}/16, q={q}/16)"))
        for gamma, speedup in zip(SCENARIO_GAMMAS, expected[name]["speedups"]):
            expect_number(sub.expected_speedup(alpha, gamma, SCENARIO_C), speedup,
                          tr("{name} (alpha = {alpha}): {call} (the scenario: {summary})", name=named(name),
                             alpha=alpha, call=f"expected_speedup(alpha={alpha}, gamma={gamma}, c={SCENARIO_C})",
                             summary=summary(expected)))


def named(draft: str) -> str:
    """A scenario draft's name in the run's language."""
    return {"close draft": tr("close draft"), "poor draft": tr("poor draft")}[draft]


def summary(expected: dict) -> str:
    """The scenario's computed speedups in words."""
    said = []
    for name, e in expected.items():
        speedups = tr(", ").join(tr("gamma = {gamma} gives {speedup:.3f}x", gamma=g, speedup=s)
                                 for g, s in zip(SCENARIO_GAMMAS, e["speedups"]))
        said.append(tr("{name}, alpha = {alpha}: {speedups}", name=named(name), alpha=e["alpha"], speedups=speedups))
    return tr("; ").join(said)


# speculative_generate on the toy models -------------------------------------------------------------------
@check("generate_stats_add_up", points=2, hint="speculative_generate",
       title="speculative_generate returns max_new_tokens tokens and stats that agree with the models' call counts")
def test_generate_stats_add_up(sub, seed):
    for prompt, n, gamma in (([1], 9, 3), ([3, 0], 1, 2), ([2], 7, 1)):
        expect_stats_add_up(generate(sub, "mismatch", prompt, n, gamma, seed))


@check("generate_one_target_call_per_iteration", points=2, hint="speculative_generate",
       title="speculative_generate verifies each iteration's drafts with exactly one target.score call")
def test_generate_one_target_call_per_iteration(sub, seed):
    expect_one_target_call(generate(sub, "mismatch", [2], 10, 3, seed))


@check("generate_identical_draft", points=1, hint="speculative_generate",
       title="with a draft identical to the target, speculative_generate accepts every draft token")
def test_generate_identical_draft(sub, seed):
    run = generate(sub, "identical", [0], 11, 3, seed)
    if run.stats["proposed"] == 0:
        fail(tr("{what} drafted no tokens", what=run.what))
    expect_all_accepted(run)


@check("generate_uses_generator", points=1, hint="speculative_generate",
       title="speculative_generate takes all randomness from the generator it is given")
def test_generate_uses_generator(sub, seed):
    what = "speculative_generate(target, draft, prompt=[1], max_new_tokens=12, gamma=3, generator)"
    # two calls, each in a fresh child whose global seeds of torch, numpy and Python the grader set differently
    # before the submission was imported, each with fresh models and a fresh generator seeded alike
    results = []
    for global_seed in (1, 2):
        sub.restart(global_seed=global_seed)
        _, _, offered = toy_pair(sub, "mismatch")
        results.append(generate_result(sub.speculative_generate(*offered, [1], 12, 3,
                                                                sub.generator(seed)), 12, what))
    first, second = results
    if first != second:
        fail(tr("{what} twice, with generators seeded alike but torch/numpy/random global seeds changed between the "
                "runs, returned {first} and then {second}; draw every random number from `generator`", what=what,
                first=first, second=second))
    # the same seed twice more in this child: a generator the submission keeps of its own (seeded at import)
    # passes the above and gives both runs the same 12 tokens as before with probability <= sum(p**3)**12 =
    # (1/2**3 + 2/4**3)**12 < 2.2e-10 (the 'mismatch' rows below)
    for _ in range(2):
        _, _, offered = toy_pair(sub, "mismatch")
        generator = sub.generator(seed)
        again = generate_result(sub.speculative_generate(*offered, [1], 12, 3, generator), 12, what)
        if again != second:
            fail(tr("{what} in one process, each time with a fresh generator seeded {seed}, returned {second} and "
                    "then {again}: keep no random state of your own; draw every random number from `generator`",
                    what=what, seed=seed, second=second, again=again))
    # and the generator must matter: three more seeds in this child. Speculative decoding samples the target's law
    # exactly and every 'mismatch' target row is a shift of [8, 4, 4, 0]/16, so four runs of a correct sampler
    # all give the same 12 tokens with probability (1/2**4 + 2/4**4)**12 < 1.5e-14; a submission that reseeds the
    # global generator inside each call and ignores `generator` always does.
    tokens = [first[0]]
    for other in (seed + 1, seed + 2, seed + 3):
        _, _, offered = toy_pair(sub, "mismatch")
        tokens.append(generate_result(sub.speculative_generate(*offered, [1], 12, 3, sub.generator(other)),
                                      12, what)[0])
    if all(t == tokens[0] for t in tokens):
        fail(tr("{what} with generators seeded {seed}, {second}, {third} and {fourth} returned the same tokens "
                "{tokens} every time; a sampler that draws from `generator` does so with probability < 1.5e-14",
                what=what, seed=seed, second=seed + 1, third=seed + 2, fourth=seed + 3, tokens=tokens[0]))


@check("generate_bad_arguments", points=1, hint="speculative_generate",
       title="speculative_generate raises ValueError naming max_new_tokens or gamma when it is negative")
def test_generate_bad_arguments(sub, seed):
    for name, n, gamma in (("max_new_tokens", -1, 3), ("gamma", 5, -1)):
        _, _, offered = toy_pair(sub, "mismatch")
        expect_names(name, f"speculative_generate(target, draft, prompt=[1], max_new_tokens={n}, gamma={gamma}, "
                           f"generator)", sub.speculative_generate, *offered, [1], n, gamma,
                     sub.generator(seed))


@check("generate_matches_target_distribution", points=3, hint="speculative_generate",
       title="the first tokens of speculative_generate are distributed exactly as sampling from the target, each "
             "verified by the target's calls")
def test_generate_matches_target_distribution(sub, seed):
    # 500 runs, each verified by a target served here, exact binomial test per outcome of the first 3 tokens,
    # Bonferroni over the 27 possible outcomes: false fail <= 1e-6; each distribution-changing misconception passes
    # with probability < 1.3e-12 (the calculation is in grader/checks/speculative/distribution.py).
    expect_target_distribution(sub, [0], seed)


# Tokens per iteration on the "alpha75" toys, where sum_x min(p(x), q(x)) = 3/4 after every prefix, so each
# draft token is accepted with probability ALPHA independently of the others (Leviathan et al., 2023), and
# the first iteration of each run (gamma drafts, as max_new_tokens = gamma + 1) accepts A drafts with
# P(A = a) = ALPHA**a (1 - ALPHA) for a < GAMMA and ALPHA**GAMMA for a = GAMMA; E[A] + 1 = f(ALPHA), the formula.
# Bounds: Hoeffding's inequality P(|mean - E| >= eps) <= 2 exp(-2 RUNS eps^2 / range^2) over RUNS i.i.d. runs;
# two events, each failing with probability <= 5e-7, so a correct submission fails with probability <= 1e-6:
#   2 exp(-2 RUNS eps^2 / range^2) = 5e-7  <=>  eps = range * sqrt(ln(4e6) / (2 RUNS)) = range * 0.0872.
#  - A lies in [0, GAMMA]: |mean A - E[A]| <= eps_a = 2 * 0.0872 = 0.174.
#  - T = drafts verified (A + [A < GAMMA]); Z = A - ALPHA T has mean 0 (Wald's identity) and lies in
#    [-ALPHA, GAMMA (1 - ALPHA)], a range of 1.25, so |alpha_hat - ALPHA| = |sum Z| / sum T <= |mean Z| <= 0.109.
#  - So |mean A + 1 - f(alpha_hat)| <= eps_a + max f' * 0.109 = 0.174 + 2.72 * 0.109 = 0.47, as f' = 1 + 2a
#    grows with a (f(ALPHA) = 2.3125). Both tolerances are computed below from these formulas.
# The child only runs the generations and returns their raw outputs; the histogram is counted here, from the score
# log of a target served here (the draft, whose calls nothing reads, is built in the child: no round trip).
ALPHA, GAMMA, RUNS = 0.75, 2, 1000
HOEFFDING = math.sqrt(math.log(4e6) / (2 * RUNS))
EPS_ALPHA = (GAMMA * (1 - ALPHA) + ALPHA) * HOEFFDING
EPS_TOKENS = GAMMA * HOEFFDING + sum(i * (ALPHA + EPS_ALPHA) ** (i - 1) for i in range(1, GAMMA + 1)) * EPS_ALPHA


def leviathan_tokens(alpha: float, gamma: int) -> float:
    """The contract's formula for the expected tokens per iteration."""
    return gamma + 1 if alpha == 1 else (1 - alpha ** (gamma + 1)) / (1 - alpha)


def accepted_histogram(runs: list, prompt: list, gamma: int, what: str) -> list[int]:
    """How many of the (result, served target) runs of gamma + 1 tokens accepted 0..gamma drafts in their first
    iteration: [gamma + 1] ints, computed here from the raw outputs of the runs and the targets' score logs.

    The first `target.score` call holds the prompt and the gamma draft tokens; a correct implementation accepts
    exactly the drafts its output starts with (a rejected token x has p(x) < q(x), so the residual never gives x
    back). Fails when a run does not fit that pattern.
    """
    hist = [0] * (gamma + 1)
    for i, (result, target) in enumerate(runs):
        run, log = tr("{what}: run {run}", what=what, run=i + 1), target.score_log
        new = generated_tokens(result, gamma + 1, run)
        if not log:
            fail(tr("{run} made no target.score call", run=run))
        if log[0][:len(prompt)] != tuple(prompt) or len(log[0]) != len(prompt) + gamma:
            fail(tr("{run}: the first target.score call got tokens {tokens}, expected the prompt {prompt} followed by "
                    "{gamma} draft tokens", run=run, tokens=list(log[0]), prompt=list(prompt), gamma=gamma))
        drafted = log[0][len(prompt):]
        hist[next((a for a in range(gamma) if drafted[a] != new[a]), gamma)] += 1
    return hist


@check("tokens_per_iteration_match_formula", points=2, hint="speculative_generate",
       title="on toy models, the mean tokens per iteration match the formula at the measured acceptance rate")
def test_tokens_per_iteration_match_formula(sub, seed):
    sub.set_timeout(30)
    what = tr("{runs} runs of {call} on the toy models {pair!r}", runs=RUNS, pair="alpha75", call=f"speculative_"
              f"generate(target, draft, prompt=[1], max_new_tokens={GAMMA + 1}, gamma={GAMMA}, generator)")
    hist = accepted_histogram(generate_many(sub, "alpha75", [1], GAMMA + 1, GAMMA, RUNS, seed, served_target=True),
                              [1], GAMMA, what)                                      # runs accepting 0..GAMMA drafts
    accepted = sum(a * count for a, count in enumerate(hist))
    trials = accepted + sum(hist[:GAMMA])                                # every rejection is one more trial
    alpha_hat, mean_tokens = accepted / trials, 1 + accepted / RUNS
    if not within(alpha_hat, ALPHA, atol=EPS_ALPHA):
        fail(tr("{what}: the first iterations accepted {accepted} of {trials} draft tokens they verified (alpha = "
                "{alpha:.3f}); these toys accept each draft with probability sum_x min(p(x), q(x)) = {expected}, so "
                "alpha must be within {eps:.3f} of it (histogram of accepted drafts: {hist})", what=what,
                accepted=accepted, trials=trials, alpha=alpha_hat, expected=ALPHA, eps=EPS_ALPHA, hist=hist))
    formula = leviathan_tokens(alpha_hat, GAMMA)
    if not within(mean_tokens, formula, atol=EPS_TOKENS):
        fail(tr("{what}: the first iterations yielded {mean:.3f} tokens on average, but the formula (1 - "
                "alpha**(gamma+1)) / (1 - alpha) at the measured alpha = {alpha:.3f} gives {formula:.3f} (allowed "
                "difference {eps:.3f}; histogram of accepted drafts: {hist})", what=what, mean=mean_tokens,
                alpha=alpha_hat, formula=formula, eps=EPS_TOKENS, hist=hist))
