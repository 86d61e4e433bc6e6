"""The statistical check that speculative_generate samples exactly the target's distribution.

Test: RUNS generations of max_new_tokens = K + GAMMA from the 'mismatch' toy pair (models.py); the
first K = 3 tokens fall into V**K = 64 outcomes whose probabilities under the target alone are known exactly
(`first_tokens_law`). Each outcome count is Binomial(RUNS, law), so `binomial.intervals` gives every outcome
of positive probability an interval it leaves with probability <= 1e-6 / (outcomes of positive probability),
split between the tails. By the union bound a correct submission fails with probability <= 1e-6 for any seed
and any prompt; outcomes of probability 0 fail on a single occurrence, which a correct submission never produces.

Sizing against the misconceptions, for prompt [0] (every prompt token gives the same numbers, the toy rows being
shifts of each other; tests/topics/test_speculative.py recomputes them): 27 outcomes have positive probability,
so each gets 1e-6 / 27. With RUNS = 500 a generator whose verify rule has
  - resample_from_target passes with probability <= 1.3e-12: the outcome [0, 0, 0] has probability 0.125 under
    the target, so its count must lie in [26, 107]; the misconception gives it 0.359 (about 180 runs);
  - deterministic_acceptance passes with probability 0: it never produces [0, 0, 0] (the overconfident draft
    token 0 is never accepted and the residual never gives it), so that count is 0 < 26;
  - ratio_inverted passes with probability 0.766**500 < 1e-57: 23% of its runs contain a token the target
    forbids, an outcome of probability 0 that fails at once;
so each is caught with probability > 1 - 1e-6. The misconception is reported only when the counts also pass the
same test against that misconception's own exact law.

Only the outputs of the runs come from the child, and the counts, the law and the test are computed here. The
check reads nothing but the outputs, so the models are built in the child (expect.child_pair): pure functions of
the published tables, with no round trip to the grader per call.
"""
from grader.checks.speculative import models as toys
from grader.checks.speculative.binomial import intervals, outside
from grader.checks.speculative.expect import generate_many, generated_tokens
from grader.checks.speculative.misconceptions import first_tokens_law, outcome
from grader.engine import fail

PAIR = "mismatch"
K = 3
GAMMA = 2
RUNS = 500
FALSE_FAIL = 1e-6
LAW_MISCONCEPTIONS = ("deterministic_acceptance", "ratio_inverted", "resample_from_target")


def first_tokens_counts(runs: list, k: int, max_new_tokens: int, what: str) -> list[int]:
    """How many of the (result, score log) runs start with each outcome of k tokens: [V**k] ints, indexed by the
    tokens read as base-V digits. Fails unless every run returned max_new_tokens tokens of the vocabulary."""
    counts = [0] * toys.V ** k
    for i, (result, _) in enumerate(runs):
        tokens = generated_tokens(result, max_new_tokens, f"{what}: run {i + 1}")
        counts[sum(t * toys.V ** (k - 1 - j) for j, t in enumerate(tokens[:k]))] += 1
    return counts


def expect_target_distribution(sub, prompt: list, seed: int) -> None:
    """Fail unless RUNS generations from `prompt` pass the exact per-outcome binomial test against the target."""
    sub.set_timeout(30)
    what = (f"{RUNS} runs of speculative_generate(target, draft, prompt={prompt}, max_new_tokens={K + GAMMA}, "
            f"gamma={GAMMA}, generator) on the toy models {PAIR!r}")
    runs = generate_many(sub, PAIR, prompt, K + GAMMA, GAMMA, RUNS, seed)
    counts = first_tokens_counts(runs, K, K + GAMMA, what)
    law = first_tokens_law(PAIR, prompt, K, GAMMA)                         # law: [V**K]
    bounds = intervals(RUNS, law, FALSE_FAIL)                               # bounds: [V**K, 2]
    bad = outside(counts, bounds)
    if not bad:
        return
    # the outcome furthest from its expectation, in standard deviations (any impossible outcome first)
    spread = [(RUNS * law[c] * (1 - law[c])).sqrt().item() for c in bad]
    worst = max(zip(bad, spread), key=lambda cs: abs(counts[cs[0]] - RUNS * law[cs[0]].item()) / max(cs[1], 1e-9))[0]
    lo, hi = bounds[worst].tolist()
    found = next((m for m in LAW_MISCONCEPTIONS
                  if not outside(counts, intervals(RUNS, first_tokens_law(PAIR, prompt, K, GAMMA, m), FALSE_FAIL))),
                 None)
    fail(f"{what}: the first {K} tokens were {outcome(worst, K)} in {counts[worst]} runs; sampling from the target "
         f"alone gives that with probability {law[worst].item():.4f}, so {RUNS * law[worst].item():.1f} runs on "
         f"average and between {lo} and {hi} except with probability < 1e-6. {len(bad)} of {len(counts)} outcomes "
         f"are outside their range: the tokens are not distributed as the target's samples", found)
