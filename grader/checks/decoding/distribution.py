"""The statistical checks of sample_decode: first-token frequencies, and sampling leaving the loop.

First tokens. RUNS calls of sample_decode(model, prompt, 1, generator, temperature=0.6, top_k=4, top_p=0.85)
share one generator seeded by the check; the model returns the logits SAMPLE_LOGITS (cases.py), permuted by the
check, after any prefix. The filtered law is [0.465, 0.333, 0.202, 0, 0, 0] (in the logits' order). Each count
is exactly Binomial(RUNS, law), and `binomial.intervals` gives each of the 3 cells of positive probability an
interval it leaves with probability <= 1e-6 / 3, split between the tails: by the union bound a correct submission
fails with probability <= 1e-6 for any seed, prompt and permutation; tokens of probability 0 fail on one draw.
Sizing, with RUNS = 150 (tests/topics/test_decoding.py recomputes every figure): a sampler that
  - ignores the temperature draws [0.336, 0.275, 0.204, 0.185, 0, 0] and passes with probability <= 5.1e-14;
  - skips top-k, skips top-p, or applies the temperature after the filters keeps the fourth token
    ([0.397, 0.284, 0.173, 0.146, 0, 0]) and passes with probability <= 5.2e-11;
  - picks the most likely token every time passes with probability 0;
so each is caught with probability > 1 - 1e-6. The model is built once in the child (it is a pure function of
the logits, and the check reads only the tokens): each run costs the one round trip of the call itself.

Generator only. OWN_TOKENS new tokens of sample_decode on the same model from a fresh generator: a token
repeats between two independent runs with probability sum(law**2) = 0.368 and all four of four runs agree on
it with probability sum(law**4) = 0.061, so two runs give the same tokens with probability 0.368**20 < 2.1e-9 and
four runs with 0.061**20 < 5e-24 (tests/topics/test_decoding.py recomputes both). A sampler that keeps a
generator of its own gives other tokens the second time it gets the same seed, and one that makes a fresh one in
each call gives the same tokens for every seed: each is caught with probability > 1 - 1e-6.

Leaving the loop. LOOP_RUNS calls of sample_decode on the loop model (models.py) from "I think that", 12 new
tokens at temperature 1: one run repeats "I think that" four times with probability (0.5 * 0.95 * 0.95)**4 =
0.0415, so all LOOP_RUNS = 6 runs do with probability 0.0415**6 < 6e-9: a correct sampler leaves the loop in some
run except with probability < 1e-6, and a sampler that always takes the likeliest word never does.
"""
import torch

from grader.checks.decoding.cases import SAMPLE_LOGITS, SAMPLE_SETTINGS, constant_model
from grader.checks.decoding.expect import decoded
from grader.checks.decoding.models import BigramModel
from grader.checks.speculative.binomial import intervals, outside
from grader.engine import fail, reference

RUNS = 150
LOOP_RUNS = 6
OWN_TOKENS = 20
FALSE_FAIL = 1e-6


def sample_law(order: list[int]) -> torch.Tensor:
    """The filtered first-token law when token order[i] gets SAMPLE_LOGITS[i]: [V] float64."""
    logits = torch.empty(len(order), dtype=torch.float64)
    logits[order] = torch.tensor(SAMPLE_LOGITS, dtype=torch.float64)
    return reference("decoding").filtered_law(logits.tolist(), **SAMPLE_SETTINGS)


def permuted_logits(order: list[int]) -> list[float]:
    """SAMPLE_LOGITS placed so that token order[i] gets SAMPLE_LOGITS[i]."""
    logits = [0.0] * len(order)
    for i, token in enumerate(order):
        logits[token] = SAMPLE_LOGITS[i]
    return logits


def child_model(sub, logits: list):
    """`constant_model(logits)` built in the child: a pure function of logits the submission sees anyway, for checks
    that read only the tokens returned (its counts there are the submission's to rewrite): no round trip per call."""
    return sub.make(BigramModel, constant_model(logits).table, shown_as="model")


def first_token_counts(sub, prompt: list, order: list[int], seed: int, what: str) -> list[int]:
    """How often each token came first in RUNS sample_decode calls sharing one generator seeded by `seed`."""
    sub.set_timeout(30)
    generator, counts = sub.generator(seed), [0] * len(order)
    model = child_model(sub, permuted_logits(order))
    for i in range(RUNS):
        tokens, _ = decoded(sub.sample_decode(model, list(prompt), 1, generator, **SAMPLE_SETTINGS),
                            f"{what}: run {i + 1}")
        if len(tokens) != 1 or not 0 <= tokens[0] < len(order):
            fail(f"{what}: run {i + 1} returned {tokens}, expected one token id in [0, {len(order)})")
        counts[tokens[0]] += 1
    return counts


def expect_filtered_law(sub, prompt: list, order: list[int], seed: int, law: torch.Tensor) -> None:
    """Fail unless the first tokens of RUNS runs pass the exact per-token binomial test against `law`, the
    filtered first-token law (`sample_law(order)`; a public check passes it from its goldens)."""
    logits = permuted_logits(order)
    what = (f"{RUNS} runs of sample_decode(model, prompt={prompt}, max_new_tokens=1, generator, temperature=0.6, "
            f"top_k=4, top_p=0.85) with logits {logits}")
    counts = first_token_counts(sub, prompt, order, seed, what)                # law: [V]
    bounds = intervals(RUNS, law, FALSE_FAIL)                                 # bounds: [V, 2]
    bad = outside(counts, bounds)
    if bad:
        shown = ", ".join(f"token {t}: {counts[t]} (expected {bounds[t, 0]}..{bounds[t, 1]}, probability "
                          f"{law[t].item():.3f})" for t in bad)
        fail(f"{what}: first-token counts {counts} are not those of the filtered distribution "
             f"{[round(p, 3) for p in law.tolist()]}; out of range: {shown}. A correct sampler fails this with "
             f"probability < 1e-6")


def expect_own_generator(sub, seed: int) -> None:
    """Fail unless, in this one child, a generator seeded alike gives the same OWN_TOKENS tokens twice and four
    seeds do not all give the same ones."""
    what = (f"sample_decode(model, prompt=[1], max_new_tokens={OWN_TOKENS}, generator, temperature=0.6, top_k=4, "
            f"top_p=0.85) with logits {SAMPLE_LOGITS}")

    def tokens(generator_seed: int) -> list[int]:
        model, generator = child_model(sub, SAMPLE_LOGITS), sub.generator(generator_seed)
        return decoded(sub.sample_decode(model, [1], OWN_TOKENS, generator, **SAMPLE_SETTINGS), what)[0]

    first = tokens(seed)
    if tokens(seed) != first:
        fail(f"{what} twice in one process, each with a fresh generator seeded {seed}, gave different tokens: keep "
             f"no random state of your own; draw every random number from `generator`")
    if all(tokens(seed + k) == first for k in (1, 2, 3)):
        fail(f"{what} with generators seeded {seed} to {seed + 3} gave the same tokens {first} every time; a sampler "
             f"that draws from `generator` does so with probability < 5e-24")
