"""Public sampling checks: the contract's worked examples, small fixed cases and the course's exercise on one
prompt (strategies.py); answers from the goldens."""
import torch

from grader.checks.sampling import strategies
from grader.checks.sampling.boundary import decimal_logits
from grader.checks.sampling.expect import (FILTERED_PROBS_IDS, TOP_P_IDS, expect_names, expect_race, fail_on,
                                           filtered_probs_problem, returned, show, top_k_problem, top_p_problem)
from grader.checks.sampling.frequencies import expect_frequencies
from grader.checks.sampling.misconceptions import filtered_probs_candidates
from grader.engine import check, expect_close, expect_equal, fail, golden, reference, tr, within

F64 = torch.float64


def top_p_bounds(key: str, logits: torch.Tensor, p: float, exact: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(must_keep, may_keep) for top_p_filter(logits, p): the exact rule for inputs built from exact decimals,
    otherwise the contract's 1e-5 allowance at the boundary."""
    stored = golden(key, lambda: dict(zip(("must", "may"), reference("sampling").top_p_keep_bounds(
        logits, p, slack=0.0 if exact else 1e-5))))
    return stored["must"], stored["may"]


# ---------------------------------------------------------------------------------------------- temperature
TEMPERATURE_CASES = {  # name: (logits, temperature)
    "[4]": (torch.tensor([2.0, -1.0, 0.5, 3.25], dtype=F64), 0.5),
    "[2, 4]": (torch.tensor([[1.0, 2.0, -3.0, 0.25], [0.0, 0.0, 1.5, -0.5]], dtype=F64), 2.0),
    "[2, 2, 3]": (torch.tensor([[[0.3, -0.7, 1.1], [2.0, 2.0, -1.0]], [[0.0, 5.0, -5.0], [1.0, 0.5, 0.25]]],
                               dtype=F64), 0.7),
    "[3] float32": (torch.tensor([1.5, -2.25, 0.1], dtype=torch.float32), 0.3),
}


@check("apply_temperature_divides_logits", points=2, hint="apply_temperature",
       title="apply_temperature returns logits / temperature for [V], [B, V] and [B, T, V] inputs")
def test_apply_temperature_divides_logits(sub):
    for name, (logits, temperature) in TEMPERATURE_CASES.items():
        expected = golden(f"temperature/{name}", lambda: reference("sampling").apply_temperature(logits, temperature))
        # a division rounds once; 4 units in the last place also admit multiplying by 1 / temperature
        rtol = 4 * torch.finfo(logits.dtype).eps
        on_probs = torch.softmax(logits.to(F64), dim=-1) / temperature
        expect_close(sub.apply_temperature(logits, temperature), expected, f"apply_temperature({name} logits "
                     f"{show(logits.flatten())}, temperature={temperature})", atol=0.0, rtol=rtol,
                     misconceptions={"temperature_on_probs": on_probs})


@check("temperature_must_be_positive", points=1, hint="apply_temperature",
       title="a temperature <= 0 raises ValueError naming temperature")
def test_temperature_must_be_positive(sub):
    logits = torch.tensor([1.0, 2.0, 3.0])
    for temperature in (0.0, -0.5):
        expect_names(sub.apply_temperature, ("temperature",), f"apply_temperature(logits, {temperature})",
                     logits, temperature)
    expect_names(sub.filtered_probs, ("temperature",), "filtered_probs(logits, temperature=0.0)", logits,
                 temperature=0.0)


# ---------------------------------------------------------------------------------------------------- top-k
TOP_K_CASES = {  # name: (logits, k): distinct logits
    "[2, 5] k=1": (torch.tensor([[0.5, 2.0, -1.0, 3.0, 1.0], [4.0, -2.0, 0.0, 1.0, 2.5]], dtype=F64), 1),
    "[2, 5] k=3": (torch.tensor([[0.5, 2.0, -1.0, 3.0, 1.0], [4.0, -2.0, 0.0, 1.0, 2.5]], dtype=F64), 3),
    "[2, 5] k=5 (= V)": (torch.tensor([[0.5, 2.0, -1.0, 3.0, 1.0], [4.0, -2.0, 0.0, 1.0, 2.5]], dtype=F64), 5),
    "[2, 5] k=7 (> V)": (torch.tensor([[0.5, 2.0, -1.0, 3.0, 1.0], [4.0, -2.0, 0.0, 1.0, 2.5]], dtype=F64), 7),
    "[2, 2, 4] float32 k=2": (torch.tensor([[[0.1, 0.4, 0.3, 0.2], [-1.0, -2.0, -3.0, -0.5]],
                                            [[9.0, 1.0, 7.0, 8.0], [0.0, 1e4, -1e4, 5.0]]]), 2),
}
TOP_K_TIES = {  # name: (logits, k): the k-th largest logit is tied
    "[5] k=2": (torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0], dtype=F64), 2),
    "[2, 6] k=2": (torch.tensor([[0.0, 1.0, 1.0, 1.0, -1.0, 2.0], [5.0, 5.0, 5.0, 5.0, 5.0, 5.0]], dtype=F64), 2),
    "[2, 1, 4] float32 k=3": (torch.tensor([[[2.0, 0.5, 0.5, 1.0]], [[0.0, -1.0, -1.0, -1.0]]]), 3),
}


def top_k_problems(sub, cases: dict, prefix: str) -> list:
    """Problems of the submission's top_k_filter on `cases`, compared with the goldens."""
    problems = []
    for name, (logits, k) in cases.items():
        expected = golden(f"{prefix}/{name}", lambda: reference("sampling").top_k_filter(logits, k))
        problem = top_k_problem(sub.top_k_filter(logits, k), logits, k, expected, f"top_k_filter({name})")
        problems += [problem] if problem else []
    return problems


@check("top_k_keeps_k_largest", points=2, hint="top_k_filter",
       title="top_k_filter keeps the k largest logits of each row and returns the input when k >= V")
def test_top_k_keeps_k_largest(sub):
    fail_on(top_k_problems(sub, TOP_K_CASES, "top_k"), ("top_k_drops_ties",))


@check("top_k_keeps_ties", points=2, hint="top_k_filter",
       title="top_k_filter keeps every logit tied with the k-th largest")
def test_top_k_keeps_ties(sub):
    fail_on(top_k_problems(sub, TOP_K_TIES, "top_k_ties"), ("top_k_drops_ties",))


@check("top_k_must_be_at_least_one", points=1, hint="top_k_filter", title="k < 1 raises ValueError naming k")
def test_top_k_must_be_at_least_one(sub):
    logits = torch.tensor([1.0, 2.0, 3.0])
    for k in (0, -2):
        expect_names(sub.top_k_filter, ("k", "top_k"), f"top_k_filter(logits, {k})", logits, k)
    expect_names(sub.filtered_probs, ("top_k", "k"), "filtered_probs(logits, top_k=0)", logits, top_k=0)


# ---------------------------------------------------------------------------------------------------- top-p
def top_p_problems(sub, cases: list, prefix: str, exact: bool) -> list:
    """Problems of the submission's top_p_filter on (name, logits, p) cases, judged by the golden bounds."""
    problems = []
    for name, logits, p in cases:
        must, may = top_p_bounds(f"{prefix}/{name}/p={p}", logits, p, exact)
        problem = top_p_problem(sub.top_p_filter(logits, p), logits, p, must, may, f"top_p_filter({name}, p={p})")
        problems += [problem] if problem else []
    return problems


WORKED = [0.70, 0.15, 0.10, 0.05]


@check("top_p_worked_examples", points=3, hint="top_p_filter",
       title="top_p_filter keeps the token that crosses p: 0.70/0.15/0.10/0.05 keeps 2 at p=0.8, 3 at p=0.95")
def test_top_p_worked_examples(sub):
    cases = [(f"log({WORKED})", decimal_logits(WORKED), 0.8), (f"log({WORKED})", decimal_logits(WORKED), 0.95)]
    fail_on(top_p_problems(sub, cases, "top_p_worked", exact=True), TOP_P_IDS)


@check("top_p_exact_boundary", points=2, hint="top_p_filter",
       title="a mass that lands on p reaches it, in float64 sums: 0.6/0.3/0.1 at p=0.9 and 0.59/0.28/0.13 at "
             "p=0.87 keep 2 tokens (float32 softmax sums fall short and keep 3)")
def test_top_p_exact_boundary(sub):
    # left-to-right float64 sums of the first three fall just short of p (0.6 + 0.3 = 0.8999999999999999);
    # float32 sums of the last two fall short of p by about 5e-8 whichever way they are taken (boundary.py)
    six = [0.40, 0.28, 0.13, 0.10, 0.08, 0.01]
    rows = [[0.1, 0.6, 0.3], [0.3, 0.1, 0.6]]
    cases = [("log([0.6, 0.3, 0.1])", decimal_logits([0.6, 0.3, 0.1]), 0.9),
             (f"log({six})", decimal_logits(six), 0.68),
             (f"log({rows})", decimal_logits(rows), 0.9),
             ("log([0.59, 0.28, 0.13])", decimal_logits([0.59, 0.28, 0.13]), 0.87),
             ("log([0.77, 0.22, 0.01])", decimal_logits([0.77, 0.22, 0.01]), 0.99)]
    fail_on(top_p_problems(sub, cases, "top_p_boundary", exact=True), TOP_P_IDS)


TOP_P_BATCHED = [
    ("[2, 6] logits", torch.tensor([[2.0, 1.0, 0.5, 0.0, -1.0, -3.0], [0.0, 0.0, 0.0, 1.5, 1.5, -2.0]], dtype=F64),
     0.75),
    ("[2, 2, 5] logits", torch.tensor([[[1.0, -0.5, 0.25, 2.0, 0.0], [0.5, 0.5, -1.0, 3.0, 1.0]],
                                       [[-2.0, 1.0, 1.0, 0.0, 0.0], [0.0, 0.1, 0.2, 0.3, 0.4]]], dtype=F64), 0.5),
    ("[3, 4] float32 logits", torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.0, -5.0, 0.0, -10.0], [1.5, 1.5, 1.5, 1.5]]),
     1.0),
    ("[2, 4] logits", torch.tensor([[1.0, 2.0, 0.5, -1.0], [3.0, 3.0, 1.0, 0.0]], dtype=F64), 0.001),
]


@check("top_p_batched", points=2, hint="top_p_filter",
       title="top_p_filter works row by row on [B, V] and [B, T, V] logits, with ties, p = 1 and a tiny p")
def test_top_p_batched(sub):
    fail_on(top_p_problems(sub, TOP_P_BATCHED, "top_p_batched", exact=False), TOP_P_IDS)


@check("top_p_must_be_in_unit_interval", points=1, hint="top_p_filter",
       title="p outside (0, 1] raises ValueError naming p")
def test_top_p_must_be_in_unit_interval(sub):
    logits = torch.tensor([1.0, 2.0, 3.0])
    for p in (0.0, -0.2, 1.5):
        expect_names(sub.top_p_filter, ("p", "top_p"), f"top_p_filter(logits, {p})", logits, p)
    expect_names(sub.filtered_probs, ("top_p", "p"), "filtered_probs(logits, top_p=1.01)", logits, top_p=1.01)


# ------------------------------------------------------------------------------------------- filtered_probs
def filtered_case(key: str, logits: torch.Tensor, temperature: float, top_k, top_p) -> dict:
    """Golden material to judge filtered_probs(logits, temperature, top_k, top_p) (see filtered_probs_problem)."""
    def compute() -> dict:
        ref = reference("sampling")
        tempered = ref.apply_temperature(logits.to(F64), temperature)
        after_k = tempered if top_k is None else ref.top_k_filter(tempered, top_k)
        must = may = torch.isfinite(after_k)
        if top_p is not None:
            bounds = ref.top_p_keep_bounds(after_k, top_p, slack=1e-5)
            must, may = must & bounds[0], may & bounds[1]
        expected = ref.filtered_probs(logits, temperature, top_k, top_p)
        return {"tempered": tempered, "must": must, "may": may, "expected": expected,
                "wrong": filtered_probs_candidates(ref, logits, temperature, top_k, top_p)}
    return golden(key, compute)


def filtered_probs_problems(sub, cases: list) -> list:
    """Problems of the submission's filtered_probs on (name, logits, temperature, top_k, top_p) cases."""
    problems = []
    for name, logits, temperature, top_k, top_p in cases:
        case = filtered_case(f"filtered/{name}/T={temperature}/k={top_k}/p={top_p}", logits, temperature, top_k,
                             top_p)
        what = f"filtered_probs({name}, temperature={temperature}, top_k={top_k}, top_p={top_p})"
        out = sub.filtered_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p)
        problem = filtered_probs_problem(out, case["tempered"], case["must"], case["may"], what, case["wrong"])
        problems += [problem] if problem else []
    return problems


FIVE = torch.tensor([2.0, 1.0, 0.5, -0.5, -1.0], dtype=F64)


@check("filtered_probs_pipeline", points=3, hint="filtered_probs",
       title="filtered_probs applies temperature, top-k, top-p and softmax on [V], [B, V] and [B, T, V] inputs")
def test_filtered_probs_pipeline(sub):
    cases = [
        ("[5] logits", FIVE, 1.0, None, None),
        ("[5] logits", FIVE, 0.5, 3, None),
        ("[2, 5] logits", torch.stack([FIVE, FIVE.flip(0) * 2]), 2.0, None, 0.8),
        ("[2, 2, 6] float32 logits", torch.tensor([[[0.1, 1.2, -0.3, 2.0, 0.7, 0.0], [3.0, 3.0, 1.0, -1.0, 0.5, 0.25]],
                                                   [[-1.0, 0.0, 1.0, 2.0, 3.0, 4.0], [0.4, 0.3, 0.2, 0.1, 0.0, -0.1]]]),
         0.8, 4, 0.9),
        ("[2, 4] float16 logits", torch.tensor([[1.0, 0.5, -0.5, 2.5], [0.0, 1.0, 1.0, -2.0]], dtype=torch.float16),
         0.5, None, 0.9),
    ]
    fail_on(filtered_probs_problems(sub, cases), FILTERED_PROBS_IDS)


@check("filtered_probs_renormalizes", points=1, hint="filtered_probs",
       title="filtered_probs rows sum to 1 and removed tokens have probability exactly 0")
def test_filtered_probs_renormalizes(sub):
    logits = torch.tensor([[1.0, 2.0, 0.0, -1.0, 0.5, 1.5], [0.3, 0.2, 0.1, 0.0, -0.1, -0.2]], dtype=F64)
    for temperature, top_k, top_p in ((1.0, 3, None), (0.7, None, 0.6)):
        case = filtered_case(f"renormalizes/k={top_k}/p={top_p}", logits, temperature, top_k, top_p)
        what = f"filtered_probs({show(logits[0])} and {show(logits[1])}, temperature={temperature}, top_k={top_k}, " \
               f"top_p={top_p})"
        got = returned(sub.filtered_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p),
                       logits.shape, what)
        removed = case["expected"] == 0
        if (got[removed] != 0).any():
            fail(tr("{what} returned {probs}; the removed tokens must have probability exactly 0", what=what,
                    probs=show(got.flatten())))
        sums = got.sum(dim=-1)
        if not within(sums, 1.0, atol=1e-5):
            unnormalized = torch.softmax(case["tempered"], dim=-1) * ~removed
            fail(tr("{what}: rows sum to {sums}, expected 1 (renormalise over the kept tokens)", what=what,
                    sums=show(sums)),
                 "no_renormalization" if within(got, unnormalized, atol=1e-6, rtol=1e-5) else None)


@check("filtered_probs_order", points=2, hint="filtered_probs",
       title="filtered_probs applies temperature first, then top-k, then top-p (on the renormalised top-k set)")
def test_filtered_probs_order(sub):
    cases = [
        # top-k renormalises 0.5/0.3 to 0.625/0.375, so top-p 0.6 then keeps one token; top-p first keeps two
        ("log([0.5, 0.3, 0.2])", decimal_logits([0.5, 0.3, 0.2]), 1.0, 2, 0.6),
        # temperature 0.5 sharpens the distribution before the nucleus is taken: one token instead of two
        ("[2.0, 1.0, 0.0, -1.0]", torch.tensor([2.0, 1.0, 0.0, -1.0], dtype=F64), 0.5, None, 0.7),
        ("[2, 5] logits", torch.tensor([[2.0, 1.5, 1.0, 0.0, -1.0], [0.0, 0.5, 3.0, 2.5, 1.0]], dtype=F64), 1.5, 3,
         0.7),
    ]
    fail_on(filtered_probs_problems(sub, cases), FILTERED_PROBS_IDS)


# ----------------------------------------------------------------------------------------- sample and greedy
SAMPLE_CASES = {  # name: (probs, noise)
    "[3]": (torch.tensor([0.1, 0.6, 0.3], dtype=F64), torch.tensor([0.05, 2.0, 0.9], dtype=F64)),
    "[2, 4] with zero probabilities and tiny noise on them": (
        torch.tensor([[0.0, 0.5, 0.5, 0.0], [0.25, 0.0, 0.75, 0.0]]),
        torch.tensor([[1e-30, 1.0, 2.0, 1e-30], [0.5, 1e-30, 0.1, 3.0]])),
    "[2, 2, 3]": (torch.tensor([[[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], [[0.3, 0.3, 0.4], [0.05, 0.9, 0.05]]], dtype=F64),
                  torch.tensor([[[0.3, 1.7, 0.2], [2.5, 1e-9, 0.01]], [[0.4, 0.2, 1.1], [0.01, 3.0, 0.8]]],
                               dtype=F64)),
}


@check("sample_exponential_race", points=2, hint="sample",
       title="sample returns argmax(probs / noise) per row and never a token of probability 0")
def test_sample_exponential_race(sub):
    for name, (probs, noise) in SAMPLE_CASES.items():
        expected = golden(f"sample/{name}", lambda: reference("sampling").sample(probs, noise))
        out = sub.sample(probs, noise)
        what = f"sample({name} probs, noise)"
        expect_race(out, probs, noise, what)
        expect_equal(out, expected, what)


GREEDY_CASES = {
    "[3.0, 1.0, 3.0, 2.0]": torch.tensor([3.0, 1.0, 3.0, 2.0], dtype=F64),
    "[2, 4] with -inf and ties": torch.tensor([[float("-inf"), 0.5, 0.5, -1.0], [1.0, 2.0, 2.0, 2.0]], dtype=F64),
    "[2, 2, 3] float16": torch.tensor([[[1e4, -1e4, 1e4], [0.0, 0.0, 0.0]], [[-1.0, 2.0, 1.0], [-3.0, -2.0, -2.0]]],
                                      dtype=torch.float16),
}


@check("greedy_lowest_index_on_ties", points=1, hint="greedy",
       title="greedy returns the argmax of each row, the lowest index on ties")
def test_greedy_lowest_index_on_ties(sub):
    for name, logits in GREEDY_CASES.items():
        expected = golden(f"greedy/{name}", lambda: reference("sampling").greedy(logits))
        expect_equal(sub.greedy(logits), expected, f"greedy({name} logits)")


# ------------------------------------------------------------- one prompt, five strategies (strategies.py)
def strategy_probs() -> torch.Tensor:
    """[5, 6] float64: the probabilities of the five strategies on the fixed logits."""
    return golden("strategies/probs", lambda: strategies.strategy_probs(reference("sampling")))


@check("sample_one_draw_misranks", points=1, hint="sample",
       title="one draw per strategy can rank them wrongly: with this noise temperature 0.5 draws ' a' and "
             "temperature 1.5 draws ' Paris', though 0.5 says ' Paris' about twice as often")
def test_sample_one_draw_misranks(sub):
    probs, noise = strategy_probs()[list(strategies.ONE_DRAW)], strategies.ONE_DRAW_NOISE  # both [2, 6]
    expected = golden("strategies/one_draw", lambda: reference("sampling").sample(probs, noise))
    what = (f"sample(probs of temperature 0.5 and 1.5 on logits {show(strategies.LOGITS)} over "
            f"{list(strategies.VOCAB)}, noise {noise.tolist()})")
    out = sub.sample(probs, noise)
    expect_race(out, probs, noise, what)
    expect_equal(out, expected, what)


@check("empirical_distribution_ranks_strategies", points=2, hint="empirical_distribution",
       title=f"{strategies.DRAWS} draws per strategy rank the five strategies by how often they say ' Paris', as "
             f"their probabilities do (an exact binomial test per token)")
def test_empirical_distribution_ranks_strategies(sub, seed):
    # false fail <= 1e-6, split over the 5 rows; the accepted counts of ' Paris' form disjoint intervals in the
    # order of the probabilities, so every accepted answer ranks the strategies right (strategies.py)
    probs = strategy_probs()
    names = [name for name, *_ in strategies.STRATEGIES]
    what = (f"empirical_distribution(probs of {names} on logits {show(strategies.LOGITS)}, "
            f"num_samples={strategies.DRAWS}, generator)")
    sub.set_timeout(30)
    out = sub.empirical_distribution(probs, strategies.DRAWS, sub.generator(seed))
    expect_frequencies(out, probs, strategies.DRAWS, probs.shape[0], what)


# A probe for draws without replacement (frequencies.py): 48 draws per row, each row with at least 48 tokens of
# positive probability; token 0 of row 0 has probability 0.5, the first 16 tokens of row 1 have probability 0
PROBE = torch.tensor([[0.5] + [0.5 / 63] * 63, [0.0] * 16 + [1 / 48] * 48], dtype=F64)
PROBE_DRAWS = 48


@check("empirical_distribution_draws_with_replacement", points=1, hint="empirical_distribution",
       title="empirical_distribution returns float64 frequencies of independent draws: a token of probability 0.5 "
             "comes up about 24 times in 48 draws, a token of probability 0 never")
def test_empirical_distribution_draws_with_replacement(sub, seed):
    # false fail <= 1e-6 over the 2 rows; token 0 of row 0 must come up at least 5 times in 48 draws, which draws
    # without replacement never reach: the mutant is caught surely (frequencies.py)
    what = (f"empirical_distribution(probs [2, 64] (row 0: token 0 at 0.5, 63 tokens at 0.5/63; row 1: tokens "
            f"16..63 at 1/48), num_samples={PROBE_DRAWS}, generator)")
    out = sub.empirical_distribution(PROBE, PROBE_DRAWS, sub.generator(seed))
    expect_frequencies(out, PROBE, PROBE_DRAWS, PROBE.shape[0], what)


@check("num_samples_must_be_positive", points=1, hint="empirical_distribution",
       title="num_samples < 1 raises ValueError naming num_samples")
def test_num_samples_must_be_positive(sub, seed):
    probs = torch.tensor([0.25, 0.75], dtype=F64)
    for num_samples in (0, -3):
        expect_names(sub.empirical_distribution, ("num_samples",),
                     f"empirical_distribution(probs, num_samples={num_samples}, generator)", probs, num_samples,
                     sub.generator(seed))
