"""The statistical checks of sample_decode: token frequencies against the filtered law, and sampling leaving the loop.

The law test. Runs of sample_decode(model, prompt, max_new_tokens, generator, temperature, top_k, top_p) share one
generator seeded by the check; the model (built in the child: a pure function of logits the submission sees anyway,
and the check reads only the tokens) returns the same logits after any prefix, with no eos and no stop sequence.
So a correct sampler's LAW_DRAWS or more tokens (every token of every run: runs(max_new_tokens) runs) are
independent draws from the filtered law, each cell count exactly Binomial(n, law), and `binomial.intervals` gives
each cell of positive probability an interval it leaves with probability <= 1e-6 / (cells of positive probability),
split between the tails: by the union bound a correct submission fails with probability <= 1e-6 for any law; a
token of probability 0 fails on one draw.

Public case: SAMPLE_LOGITS with temperature 0.6, top_k 4, top_p 0.85, runs of 3 tokens: the law is
[0.465, 0.333, 0.202, 0, 0, 0] and n = 150. A sampler that (tests/topics/test_decoding.py recomputes every figure)
  - ignores the temperature draws [0.336, 0.275, 0.204, 0.185, 0, 0] and passes with probability <= 5.1e-14;
  - skips top-k, skips top-p, or applies the temperature after the filters keeps the fourth token
    ([0.397, 0.284, 0.173, 0.146, 0, 0]) and passes with probability <= 5.2e-11;
  - picks the most likely token every time passes with probability 0;
so each is caught with probability > 1 - 1e-6.

Hidden case (`random_law_case`): the vocabulary, logits, temperature, top_k, top_p, prompt and max_new_tokens are
drawn from the seed and the law is the reference's, computed live: no argument tells the check from another, and
no law can be written down ahead. A draw is kept only when each of the five wrong samplers above (`wrong_laws`,
their laws computed live too) passes with probability <= WRONG_PASS by `binomial.pass_bound`: an exact bound, so
each is caught with probability > 1 - 1e-6 on every case the check runs. About one draw in six that reaches that
test is kept (tests/topics/test_decoding.py recomputes the bounds of drawn cases and counts the draws).

Generator only. OWN_TOKENS new tokens of sample_decode on the public model from a fresh generator: a token
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
import math
import random

import torch

from grader.checks.decoding.cases import SAMPLE_LOGITS, SAMPLE_SETTINGS, constant_model
from grader.checks.decoding.expect import decoded
from grader.checks.decoding.models import BigramModel
from grader.checks.speculative.binomial import intervals, outside, pass_bound
from grader.engine import fail, reference, tr

LAW_DRAWS = 150    # at least this many tokens per law test
PUBLIC_TOKENS = 3  # new tokens per run of the public law test
WRONG_PASS = 1e-6  # the most a wrong sampler may pass a hidden law test with
LOOP_RUNS = 6
OWN_TOKENS = 20
FALSE_FAIL = 1e-6


def runs(max_new_tokens: int) -> int:
    """How many runs of max_new_tokens tokens give at least LAW_DRAWS draws."""
    return math.ceil(LAW_DRAWS / max_new_tokens)


def public_law() -> torch.Tensor:
    """The filtered law of the public case (SAMPLE_LOGITS, SAMPLE_SETTINGS): [6] float64."""
    return reference("decoding").filtered_law(SAMPLE_LOGITS, **SAMPLE_SETTINGS)


def wrong_laws(logits: list, settings: dict) -> dict[str, torch.Tensor]:
    """The law each wrong sampler draws from instead of the filtered one: name -> [V] float64."""
    ref, temperature = reference("decoding"), settings["temperature"]
    x = torch.tensor(logits, dtype=torch.float64)
    kept = ref.filtered_law(logits, 1.0, settings["top_k"], settings["top_p"]) > 0   # the filters at temperature 1
    after = torch.softmax(x / temperature, -1) * kept
    return {"ignores the temperature": ref.filtered_law(logits, 1.0, settings["top_k"], settings["top_p"]),
            "skips top-k": ref.filtered_law(logits, temperature, None, settings["top_p"]),
            "skips top-p": ref.filtered_law(logits, temperature, settings["top_k"], None),
            "applies the temperature after the filters": after / after.sum(),
            "always picks the likeliest token": torch.nn.functional.one_hot(x.argmax(), len(logits)).double()}


def largest_wrong_pass(logits: list, settings: dict, max_new_tokens: int) -> float:
    """The largest probability with which a wrong sampler passes the law test of this case."""
    n = runs(max_new_tokens) * max_new_tokens
    bounds = intervals(n, reference("decoding").filtered_law(logits, **settings), FALSE_FAIL)
    return max(pass_bound(n, law, bounds) for law in wrong_laws(logits, settings).values())


def random_law_case(r: random.Random) -> dict:
    """Logits, settings, prompt and max_new_tokens of a hidden law test, drawn until every wrong sampler passes it
    with probability <= WRONG_PASS. top_p is drawn where it binds both inside the top k and beyond them (the k
    likeliest tokens hold less than p, and the k - 1 likeliest more than p of the k), so that skipping either
    filter changes the law."""
    while True:
        vocab = r.randint(5, 9)
        logits = [round(r.uniform(-2.5, 2.5), 1) for _ in range(vocab)]
        temperature = r.choice([round(r.uniform(0.3, 0.7), 2), round(r.uniform(1.4, 2.5), 2)])
        top_k = r.randint(2, vocab - 1)
        tempered = torch.softmax(torch.tensor(logits, dtype=torch.float64) / temperature, -1)
        mass = tempered.sort(descending=True).values.cumsum(0)        # mass: [V], of the i + 1 likeliest tokens
        low, high = float(mass[top_k - 1]), float(mass[top_k - 2] / mass[top_k - 1])
        if high - low < 0.02:
            continue
        settings = {"temperature": temperature, "top_k": top_k, "top_p": round(r.uniform(low + 0.01, high - 0.01), 2)}
        case = {"logits": logits, "settings": settings, "prompt": [r.randrange(vocab) for _ in range(r.randint(1, 3))],
                "max_new_tokens": r.randint(1, 4)}
        if largest_wrong_pass(logits, settings, case["max_new_tokens"]) <= WRONG_PASS:
            return case


def child_model(sub, logits: list):
    """`constant_model(logits)` built in the child: a pure function of logits the submission sees anyway, for checks
    that read only the tokens returned (its counts there are the submission's to rewrite): no round trip per call."""
    return sub.make(BigramModel, constant_model(logits).table, shown_as="model")


def token_counts(sub, logits: list, settings: dict, prompt: list, max_new_tokens: int, seed: int,
                 what: str) -> list[int]:
    """How often each token came out of runs(max_new_tokens) sample_decode calls sharing one generator."""
    sub.set_timeout(30)
    generator, counts = sub.generator(seed), [0] * len(logits)
    model = child_model(sub, logits)
    for i in range(runs(max_new_tokens)):
        tokens, _ = decoded(sub.sample_decode(model, list(prompt), max_new_tokens, generator, **settings),
                            tr("{what}: run {run}", what=what, run=i + 1))
        if len(tokens) != max_new_tokens or not all(0 <= t < len(logits) for t in tokens):
            fail(tr("{what}: run {run} returned {tokens}, expected {count} token ids in [0, {vocab}) (the model has no "
                    "eos and no stop sequence)", what=what, run=i + 1, tokens=tokens, count=max_new_tokens,
                    vocab=len(logits)))
        for t in tokens:
            counts[t] += 1
    return counts


def expect_filtered_law(sub, logits: list, settings: dict, prompt: list, max_new_tokens: int, seed: int,
                        law: torch.Tensor) -> None:
    """Fail unless the tokens of runs(max_new_tokens) runs pass the exact per-token binomial test against `law`,
    the filtered law of `logits` under `settings` (a public check passes it from its goldens, a hidden one from
    the live reference)."""
    n = runs(max_new_tokens) * max_new_tokens
    shown = ", ".join(f"{name}={value}" for name, value in settings.items())
    what = tr("{runs} runs of sample_decode(model, prompt={prompt}, max_new_tokens={max_new_tokens}, generator, "
              "{settings}) with logits {logits}", runs=runs(max_new_tokens), prompt=prompt,
              max_new_tokens=max_new_tokens, settings=shown, logits=logits)
    counts = token_counts(sub, logits, settings, prompt, max_new_tokens, seed, what)   # law: [V]
    bounds = intervals(n, law, FALSE_FAIL)                                            # bounds: [V, 2]
    bad = outside(counts, bounds)
    if bad:
        detail = tr(", ").join(tr("token {token}: {count} (expected {low}..{high}, probability {probability:.3f})",
                                  token=t, count=counts[t], low=bounds[t, 0], high=bounds[t, 1],
                                  probability=law[t].item()) for t in bad)
        fail(tr("{what}: the counts {counts} of the {n} tokens are not those of the filtered distribution {law}; out "
                "of range: {detail}. A correct sampler fails this with probability < 1e-6", what=what, counts=counts,
                n=n, law=[round(p, 3) for p in law.tolist()], detail=detail))


def expect_own_generator(sub, seed: int) -> None:
    """Fail unless, in this one child, a generator seeded alike gives the same OWN_TOKENS tokens twice and four
    seeds do not all give the same ones."""
    what = tr("sample_decode(model, prompt=[1], max_new_tokens={tokens}, generator, temperature=0.6, top_k=4, "
              "top_p=0.85) with logits {logits}", tokens=OWN_TOKENS, logits=SAMPLE_LOGITS)

    def tokens(generator_seed: int) -> list[int]:
        model, generator = child_model(sub, SAMPLE_LOGITS), sub.generator(generator_seed)
        return decoded(sub.sample_decode(model, [1], OWN_TOKENS, generator, **SAMPLE_SETTINGS), what)[0]

    first = tokens(seed)
    if tokens(seed) != first:
        fail(tr("{what} twice in one process, each with a fresh generator seeded {seed}, gave different tokens: keep "
                "no random state of your own; draw every random number from `generator`", what=what, seed=seed))
    if all(tokens(seed + k) == first for k in (1, 2, 3)):
        fail(tr("{what} with generators seeded {seed} to {last} gave the same tokens {tokens} every time; a sampler "
                "that draws from `generator` does so with probability < 5e-24", what=what, seed=seed, last=seed + 3,
                tokens=first))
