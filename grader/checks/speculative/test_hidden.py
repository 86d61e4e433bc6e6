"""Hidden speculative checks: random verify cases and formula arguments against the live reference, and
speculative_generate on toy models with fresh seeds, prompts and settings."""

import torch

from grader.checks.speculative.distribution import expect_target_distribution, random_settings
from grader.checks.speculative.expect import (expect_all_accepted, expect_names, expect_one_target_call,
                                              expect_stats_add_up, expect_tokens, generate, verify_text)
from grader.checks.speculative.misconceptions import verify_predictions
from grader.checks.speculative.models import TABLES
from grader.engine import check, expect_type, fail, reference, tr, within

NUDGE = 2e-6   # every decision of a random case survives this relative change of u or of one noise entry


def random_row(rng: torch.Generator, vocab: int) -> torch.Tensor:
    """A distribution in sixteenths with some zeros: [vocab] float64."""
    weights = torch.rand(vocab, generator=rng, dtype=torch.float64) ** 2
    weights[torch.rand(vocab, generator=rng) < 0.3] = 0
    weights[int(torch.randint(vocab, (), generator=rng))] += 0.1
    counts = torch.multinomial(weights, 16, replacement=True, generator=rng).bincount(minlength=vocab)
    return counts.double() / 16


def robust(ref, case: tuple) -> bool:
    """Whether the reference's answer survives nudging each u and each noise entry by a relative NUDGE.

    Then no u lies within NUDGE of p/q (u = 0 stays 0: a forbidden token is rejected at u = 0 whatever the nudge),
    and the answer is the same in float32 or float64, with u < p/q or u*q < p, and with any summation order.
    """
    draft, q, p, u, noise = case
    answer = ref.verify(draft, q, p, u, noise)
    for values, place in ((u, 3), (noise, 4)):
        for i in range(values.shape[0]):
            for factor in (1 - NUDGE, 1 + NUDGE):
                nudged = list(case)
                nudged[place] = values.clone()
                nudged[place][i] *= factor
                if ref.verify(*nudged) != answer:
                    return False
    return True


def random_case(ref, rng: torch.Generator, zero_u: float = 0.25) -> tuple:
    """(draft_tokens, q, p, u, noise): V in 2..6, g in 0..4, with q = 0 drafts, p = 0 drafts and u = 0 exactly.

    Each u is 0 with probability `zero_u`: a draft the target allows is then accepted, one it forbids rejected.
    """
    while True:
        vocab, g = int(torch.randint(2, 7, (), generator=rng)), int(torch.randint(0, 5, (), generator=rng))
        q = torch.stack([random_row(rng, vocab) for _ in range(g)]) if g else torch.zeros(0, vocab).double()
        p = torch.stack([random_row(rng, vocab) for _ in range(g + 1)])     # p: [g + 1, V]
        from_q = torch.rand(g, generator=rng) < 0.85                        # else any token, maybe with q(x) = 0
        draft = [int(torch.multinomial(q[i], 1, generator=rng)) if from_q[i] else
                 int(torch.randint(vocab, (), generator=rng)) for i in range(g)]
        u = torch.rand(g, generator=rng, dtype=torch.float64)
        u[torch.rand(g, generator=rng) < zero_u] = 0.0
        noise = torch.empty(vocab, dtype=torch.float64).exponential_(generator=rng)
        case = (draft, q, p, u, noise)
        if robust(ref, case):
            return case


def forbidden_case(ref, rng: torch.Generator) -> tuple:
    """A random case with every u = 0 in which a drafted token the target forbids (q(x) > 0, p(x) = 0) is reached:
    the drafts before it are accepted, and it must be rejected."""
    while True:
        case = random_case(ref, rng, zero_u=1.0)
        draft, q, p = case[:3]
        first = next((i for i, x in enumerate(draft) if q[i, x] == 0 or p[i, x] == 0), None)
        if first is not None and q[first, draft[first]] > 0:
            return case


def expect_verify_cases(sub, rng: torch.Generator, count: int, draw=random_case, dtype=torch.float64) -> None:
    """The submission's verify equals the reference's answer on `count` cases draw(ref, rng), tensors cast to
    `dtype`, each drawn after the one before is checked."""
    ref = reference("speculative")
    for _ in range(count):
        case = draw(ref, rng)
        draft, q, p, u, noise = (case[0], *(t.to(dtype) for t in case[1:]))
        expected = ref.verify(draft, q, p, u, noise)
        expect_tokens(sub.verify(list(draft), q, p, u, noise), expected, verify_text(draft, q, p, u, noise),
                      verify_predictions(ref, draft, q, p, u, noise))


@check("verify_random_cases", points=20, hint="verify",
       title="verify agrees with the reference on random drafts, including q = 0 and p = 0 drafts and u = 0")
def test_verify_random_cases(sub, rng):
    expect_verify_cases(sub, rng, 40)


@check("verify_float32_inputs", points=6, hint="verify",
       title="verify gives the same answers for float32 distributions, uniforms and noise")
def test_verify_float32_inputs(sub, rng):
    expect_verify_cases(sub, rng, 15, dtype=torch.float32)


@check("verify_forbidden_at_u_zero_random", points=2, hint="verify",
       title="verify rejects a drafted token the target forbids even at u = 0, on random drafts")
def test_verify_forbidden_at_u_zero_random(sub, rng):
    expect_verify_cases(sub, rng, 10, draw=forbidden_case)


@check("acceptance_rate_random", points=3, hint="acceptance_rate",
       title="acceptance_rate agrees with the reference on random distributions and rejects shapes that do not fit")
def test_acceptance_rate_random(sub, rng):
    ref = reference("speculative")
    for i in range(12):
        vocab = int(torch.randint(2, 9, (), generator=rng))
        p, q = random_row(rng, vocab), random_row(rng, vocab)
        # first a draft equal to the target, then one with no token in common, then random ones
        if i == 0:
            q = p.clone()
        elif i == 1:                                    # q all on the token p ranks lowest, which p then forbids
            low = int(torch.argmin(p))
            q = torch.zeros(vocab, dtype=torch.float64)
            q[low], p[low] = 1.0, 0.0
            p = p / p.sum()
        dtype = torch.float32 if i % 3 == 2 else torch.float64
        expected = ref.acceptance_rate(p, q)
        what = tr("{call} in {dtype}", call=f"acceptance_rate(p={p.tolist()}, q={q.tolist()})", dtype=dtype)
        actual = expect_type(sub.acceptance_rate(p.to(dtype), q.to(dtype)), (float, int), what)
        if not within(actual, expected, atol=1e-7, rtol=1e-6):
            fail(tr("{what} returned {actual!r}, expected {expected!r}", what=what, actual=actual, expected=expected))
    vocab = int(torch.randint(2, 9, (), generator=rng))
    p, q = random_row(rng, vocab), random_row(rng, vocab + 1)
    expect_names("q", tr("acceptance_rate(p of shape {p}, q of shape {q})", p=[vocab], q=[vocab + 1]),
                 sub.acceptance_rate, p, q)
    expect_names("p", tr("acceptance_rate(p of shape {p}, q of shape {q})", p=[1, vocab], q=[1, vocab]),
                 sub.acceptance_rate, p[None], p[None])


@check("formulas_random_arguments", points=5, hint="expected_tokens_per_iteration",
       title="expected_tokens_per_iteration and expected_speedup agree with the reference on random arguments")
def test_formulas_random_arguments(sub, rng):
    ref = reference("speculative")
    for i in range(20):
        alpha = (0.0, 1.0)[i] if i < 2 else round(float(torch.rand((), generator=rng)) * 0.99, 6)
        gamma = int(torch.randint(0, 13, (), generator=rng))
        c = round(float(torch.rand((), generator=rng)), 6)
        for name, args in (("expected_tokens_per_iteration", (alpha, gamma)), ("expected_speedup", (alpha, gamma, c))):
            expected = getattr(ref, name)(*args)
            what = f"{name}{args}"
            actual = expect_type(getattr(sub, name)(*args), (float, int), what)
            if not within(actual, expected, atol=1e-12, rtol=1e-9):
                fail(tr("{what} returned {actual!r}, expected {expected!r} (relative tolerance 1e-9)", what=what,
                        actual=actual, expected=expected))


def random_speedup_arguments(rng: torch.Generator, i: int) -> tuple:
    """(alpha, gamma, c): the edges alpha = 0 or 1, gamma = 0 and c = 0 first, then random ones up to c = 3."""
    alpha = (0.0, 1.0, 1.0, 0.5)[i] if i < 4 else round(float(torch.rand((), generator=rng)), 6)
    gamma = (3, 0, 5, 4)[i] if i < 4 else int(torch.randint(0, 13, (), generator=rng))
    c = (0.25, 0.5, 0.0, 1.0)[i] if i < 4 else round(3 * float(torch.rand((), generator=rng)), 6)
    return alpha, gamma, c


@check("expected_speedup_random", points=7, hint="expected_speedup",
       title="expected_speedup agrees with the reference on random arguments and rejects random bad ones")
def test_expected_speedup_random(sub, rng):
    ref = reference("speculative")
    for i in range(24):
        args = random_speedup_arguments(rng, i)
        expected, what = ref.expected_speedup(*args), f"expected_speedup{args}"
        actual = expect_type(sub.expected_speedup(*args), (float, int), what)
        if not within(actual, expected, atol=1e-12, rtol=1e-9):
            fail(tr("{what} returned {actual!r}, expected {expected!r} (relative tolerance 1e-9)", what=what,
                    actual=actual, expected=expected))
    for _ in range(4):
        alpha, gamma, c = random_speedup_arguments(rng, 4)
        low = round(-float(torch.rand((), generator=rng)) - 1e-3, 6)
        for name, args in (("alpha", (1 - low, gamma, c)), ("alpha", (low, gamma, c)),
                           ("gamma", (alpha, -int(torch.randint(1, 5, (), generator=rng)), c)),
                           ("c", (alpha, gamma, low))):
            expect_names(name, f"expected_speedup{args}", sub.expected_speedup, *args)


@check("generate_distribution_fresh_seed", points=16, hint="speculative_generate",
       title="speculative_generate's first tokens follow the target's distribution, for a fresh seed, prompt, "
             "length and gamma, each token verified by the target's calls")
def test_generate_distribution_fresh_seed(sub, seed):
    # The public test with a fresh generator seed, prompt, max_new_tokens and gamma (the toy rows are shifts of each
    # other, so the false-fail bound 1e-6 holds for every prompt, and the misconception bounds of distribution.py
    # for every gamma drawn).
    prompt, max_new_tokens, gamma = random_settings(seed)
    expect_target_distribution(sub, prompt, seed, max_new_tokens, gamma)


@check("generate_random_settings", points=12, hint="speculative_generate",
       title="speculative_generate keeps its stats, one target call per iteration, on random settings")
def test_generate_random_settings(sub, rng, seed):
    for run_seed in range(seed, seed + 6):
        pair = sorted(TABLES)[int(torch.randint(len(TABLES), (), generator=rng))]
        prompt = torch.randint(4, (int(torch.randint(0, 4, (), generator=rng)),), generator=rng).tolist()
        n, gamma = int(torch.randint(1, 16, (), generator=rng)), int(torch.randint(1, 6, (), generator=rng))
        run = generate(sub, pair, prompt, n, gamma, run_seed)
        expect_one_target_call(run)
        expect_stats_add_up(run)
        if pair == "identical":
            expect_all_accepted(run)
