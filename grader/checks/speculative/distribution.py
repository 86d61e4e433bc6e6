"""The statistical check that speculative_generate samples exactly the target's distribution.

Test: RUNS generations of max_new_tokens >= K + gamma from the 'mismatch' toy pair (models.py): max_new_tokens =
K + GAMMA and gamma = GAMMA in the public check, both drawn from the seed in the hidden one (gamma in GAMMAS, up to 3
more tokens), with a prompt of 1 to 3 tokens. The first K = 3 tokens fall into V**K = 64 outcomes whose
probabilities under the target alone are known exactly (`first_tokens_law`). Each outcome count is
Binomial(RUNS, law), so `binomial.intervals` gives every outcome of positive probability an interval it leaves with
probability <= 1e-6 / (outcomes of positive probability), split between the tails. By the union bound a correct
submission fails with probability <= 1e-6 for any seed and any prompt; outcomes of probability 0 fail on a single
occurrence, which a correct submission never produces.

Sizing against the misconceptions, for prompt [0] and gamma = 2 (every prompt token gives the same numbers, the
toy rows being shifts of each other, and a larger gamma smaller ones: resample_from_target passes with probability
<= 9e-23 at gamma 3 and 4; tests/topics/test_speculative.py recomputes them all): 27 outcomes have positive
probability, so each gets 1e-6 / 27. With RUNS = 500 a generator whose verify rule has
  - resample_from_target passes with probability <= 1.3e-12: the outcome [0, 0, 0] has probability 0.125 under
    the target, so its count must lie in [26, 107]; the misconception gives it 0.359 (about 180 runs);
  - deterministic_acceptance passes with probability 0: it never produces [0, 0, 0] (the overconfident draft
    token 0 is never accepted and the residual never gives it), so that count is 0 < 26;
  - ratio_inverted passes with probability 0.766**500 < 1e-57: 23% of its runs contain a token the target
    forbids, an outcome of probability 0 that fails at once;
so each is caught with probability > 1 - 1e-6. The misconception is reported only when the counts also pass the
same test against that misconception's own exact law.

The target is served here, a fresh one per run, and its calls must match the tokens returned (`expect_verified`):
every target.score call holds the prompt, the tokens so far and at most gamma drafts, the output goes on with the
drafts it accepts and one more token that is not the draft it rejected, and the target has no other call. So the
tokens come from draft-and-verify iterations, whatever the submission makes of the arguments: sampling the target
token by token where it recognises the check fails it, and so does drafting for show and emitting a sample of p.
A correct submission never fails this part: the residual gives a rejected token probability 0 (p(x) < q(x)), and
the 'mismatch' rows are exact sixteenths. A rejected draft given back is the mark of resample_from_target, which
this part then reports. The draft, whose calls nothing reads, is built in the child (no round trip per call). The
counts, the law and the test are computed here.
"""
import functools
import random

from grader.checks.speculative import models as toys
from grader.checks.speculative.binomial import intervals, outside
from grader.checks.speculative.expect import generate_many, generated_tokens
from grader.checks.speculative.misconceptions import first_tokens_law, outcome
from grader.engine import fail, tr

PAIR = "mismatch"
K = 3
GAMMA = 2
GAMMAS = (2, 3, 4)  # the hidden check's gamma; at gamma = 1 resample_from_target would pass with probability 1.8e-5
RUNS = 500
FALSE_FAIL = 1e-6
LAW_MISCONCEPTIONS = ("deterministic_acceptance", "ratio_inverted", "resample_from_target")


def first_tokens_counts(runs: list, k: int, max_new_tokens: int, what: str) -> list[int]:
    """How many of the (result, target) runs start with each outcome of k tokens: [V**k] ints, indexed by the
    tokens read as base-V digits. Fails unless every run returned max_new_tokens tokens of the vocabulary."""
    counts = [0] * toys.V ** k
    for i, (result, _) in enumerate(runs):
        tokens = generated_tokens(result, max_new_tokens, tr("{what}: run {run}", what=what, run=i + 1))
        counts[sum(t * toys.V ** (k - 1 - j) for j, t in enumerate(tokens[:k]))] += 1
    return counts


def holds(scored: tuple, head: list, gamma: int) -> bool:
    """Whether a target.score call's tokens are `head` followed by at most gamma drafts."""
    return list(scored[:len(head)]) == head and len(scored) - len(head) <= gamma


def verified(tokens: list, log: list, prompt: list, gamma: int, given_back: int | None = None) -> bool:
    """Whether the score calls in `log` account for `tokens` iteration by iteration: each holds the prompt, the
    tokens so far and at most gamma drafts, and the output goes on with the drafts it accepts (those it starts with)
    and one more token. With `given_back` = k, an iteration may instead end with one of its first len(drafts) - k
    drafts given back as the replacement of itself (a replacement not drawn from the residual): k = 1 leaves out
    the last draft, whose giving back looks like an iteration with no bonus token; k = 0 leaves out none."""
    @functools.cache
    def fits(call: int, done: int) -> bool:
        """Whether calls call.. account for tokens[done:]."""
        if call == len(log):
            return done >= len(tokens)
        if done >= len(tokens) or not holds(log[call], [*prompt, *tokens[:done]], gamma):
            return False
        drafted = log[call][len(prompt) + done:]
        accepted = next((a for a, t in enumerate(drafted) if done + a >= len(tokens) or tokens[done + a] != t),
                        len(drafted))
        ends = {done + accepted + 1}
        if given_back is not None:
            ends |= set(range(done + 1, done + min(accepted, len(drafted) - given_back) + 1))
        return any(fits(call + 1, end) for end in ends)

    return fits(0, 0)


def expect_verified(runs: list, prompt: list, gamma: int, what: str) -> None:
    """Fail unless the tokens of every (tokens, served target) run are what its target's score calls verified
    (`verified`), and the targets had no other call. A correct submission never fails: the residual gives a
    rejected draft x probability 0 (p(x) < q(x)). resample_from_target is named when every failing run is one in
    which a rejected draft may have been given back, and some run one in which it surely was."""
    failing, surely = [], False
    for i, (tokens, target) in enumerate(runs):
        run, log = tr("{what}: run {run}", what=what, run=i + 1), target.score_log
        if target.next_probs_calls:
            fail(tr("{run} made {calls} target.next_probs calls; the target is called only through target.score, "
                    "once per iteration", run=run, calls=target.next_probs_calls))
        if verified(tokens, log, prompt, gamma):
            continue
        calls = ", ".join(str(list(scored)) for scored in log[:8]) + (", ..." if len(log) > 8 else "")
        failing.append((tr("{run} returned {tokens}, which its target.score calls {calls} do not account for: each "
                           "call holds the prompt {prompt}, the tokens so far and at most gamma={gamma} drafts, and "
                           "each iteration's output the drafts it accepts (those it starts with) and one more token, "
                           "never the draft it rejected", run=run, tokens=tokens, calls=calls, prompt=list(prompt),
                           gamma=gamma), verified(tokens, log, prompt, gamma, given_back=0)))
        surely = surely or verified(tokens, log, prompt, gamma, given_back=1)
    if failing:
        given_back = surely and all(maybe for _, maybe in failing)
        fail(failing[0][0] + (tr(" (and {more} more runs)", more=len(failing) - 1) if len(failing) > 1 else ""),
             "resample_from_target" if given_back else None)


def random_settings(seed: int) -> tuple[list, int, int]:
    """(prompt, max_new_tokens, gamma) of the hidden check: 1 to 3 prompt tokens, gamma in GAMMAS, and room for
    K tokens after full iterations plus up to 3 more."""
    r = random.Random(seed)
    prompt = [r.randrange(toys.V) for _ in range(r.randint(1, 3))]
    gamma = r.choice(GAMMAS)
    return prompt, K + gamma + r.randint(0, 3), gamma


def expect_target_distribution(sub, prompt: list, seed: int, max_new_tokens: int = K + GAMMA,
                               gamma: int = GAMMA) -> None:
    """Fail unless RUNS generations from `prompt`, each verified by a target served here, pass the exact
    per-outcome binomial test against the target."""
    sub.set_timeout(30)
    what = tr("{runs} runs of {call} on the toy models {pair!r}", runs=RUNS, pair=PAIR, call=f"speculative_generate("
              f"target, draft, prompt={prompt}, max_new_tokens={max_new_tokens}, gamma={gamma}, generator)")
    runs = generate_many(sub, PAIR, prompt, max_new_tokens, gamma, RUNS, seed, served_target=True)
    counts = first_tokens_counts(runs, K, max_new_tokens, what)       # every run's tokens checked first
    expect_verified([(generated_tokens(result, max_new_tokens, what), target) for result, target in runs], prompt,
                    gamma, what)
    law = first_tokens_law(PAIR, prompt, K, gamma)                         # law: [V**K]
    bounds = intervals(RUNS, law, FALSE_FAIL)                               # bounds: [V**K, 2]
    bad = outside(counts, bounds)
    if not bad:
        return
    # the outcome furthest from its expectation, in standard deviations (any impossible outcome first)
    spread = [(RUNS * law[c] * (1 - law[c])).sqrt().item() for c in bad]
    worst = max(zip(bad, spread), key=lambda cs: abs(counts[cs[0]] - RUNS * law[cs[0]].item()) / max(cs[1], 1e-9))[0]
    lo, hi = bounds[worst].tolist()
    found = next((m for m in LAW_MISCONCEPTIONS
                  if not outside(counts, intervals(RUNS, first_tokens_law(PAIR, prompt, K, gamma, m), FALSE_FAIL))),
                 None)
    fail(tr("{what}: the first {k} tokens were {outcome} in {count} runs; sampling from the target alone gives that "
            "with probability {probability:.4f}, so {mean:.1f} runs on average and between {lo} and {hi} except with "
            "probability < 1e-6. {bad} of {outcomes} outcomes are outside their range: the tokens are not distributed "
            "as the target's samples", what=what, k=K, outcome=outcome(worst, K), count=counts[worst],
            probability=law[worst].item(), mean=RUNS * law[worst].item(), lo=lo, hi=hi, bad=len(bad),
            outcomes=len(counts)), found)
