"""Hidden sampling checks: fresh random cases from the seed (ties, peaked, flat and extreme logits; float64,
float32, float16 and bfloat16; exact-decimal top-p boundaries; statistical tests of many draws), compared with the
live reference."""
import torch

from grader.checks.sampling.boundary import decimal_logits, float32_falls_short
from grader.checks.sampling.expect import (FILTERED_PROBS_IDS, TOP_P_IDS, expect_names, expect_race, fail_on,
                                           filtered_probs_problem, top_k_problem, top_p_problem)
from grader.checks.sampling.frequencies import (PROBE_MAX_TOKENS, PROBE_MIN_DRAWS, PROBE_MIN_MASS, counts_of,
                                                expect_frequencies)
from grader.checks.sampling.misconceptions import filtered_probs_candidates
from grader.engine import check, expect_close, expect_equal, fail, reference, tolerance, tr

CASES = 30  # random cases per check
DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
KINDS = ("normal", "ties", "peaked", "flat", "extreme")
# Powers of two divide exactly in every dtype, so float32/float16/bfloat16 callers see the same scaled logits as
# the float64 reference (a rounded quotient could turn two distinct logits into a tie at the top-k boundary).
EXACT_TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)
SLACK = 1e-5  # contract: either answer where the deciding mass is within 1e-5 of p (inputs not exact decimals)


def pick(rng: torch.Generator, options):
    """One of `options`, uniformly."""
    return options[int(torch.randint(len(options), (), generator=rng))]


def uniform(rng: torch.Generator, low: float, high: float) -> float:
    return low + (high - low) * float(torch.rand((), generator=rng, dtype=torch.float64))


def random_shape(rng: torch.Generator) -> tuple[int, ...]:
    """[V], [B, V] or [B, T, V] with a small vocabulary (V = 1 included)."""
    return (*pick(rng, [(), (3,), (2, 3)]), pick(rng, [1, 2, 5, 8, 17, 32]))


def random_logits(rng: torch.Generator, kind: str, dtype: torch.dtype, shape: tuple | None = None) -> torch.Tensor:
    """Logits of the given kind and shape (random if None), in `dtype`; every row keeps at least one finite logit."""
    shape = shape or random_shape(rng)
    normal = torch.randn(shape, generator=rng, dtype=torch.float64)
    if kind == "normal":
        x = normal * uniform(rng, 0.5, 3.0)
    elif kind == "ties":  # few distinct values: many exact ties
        x = torch.randint(-2, 3, shape, generator=rng).double() * 0.5
    elif kind == "peaked":  # one dominant token per row
        peak = torch.randint(shape[-1], (*shape[:-1], 1), generator=rng)
        x = normal.scatter_add(-1, peak, torch.full(peak.shape, 8.0, dtype=torch.float64))
    elif kind == "flat":  # nearly or exactly uniform
        x = normal * 0.02 if bool(torch.rand((), generator=rng) < 0.5) else torch.full(shape, 0.5, dtype=torch.float64)
    else:  # extreme: +-1e4 next to ordinary values (integers: exact in float32)
        values = torch.tensor([-1e4, 1e4, 1e4 - 1, -1.0, 0.0, 2.0], dtype=torch.float64)
        x = values[torch.randint(len(values), shape, generator=rng)]
    if kind != "extreme" and bool(torch.rand((), generator=rng) < 0.25):  # some tokens already filtered out
        holes = torch.rand(shape, generator=rng) < 0.3
        holes.scatter_(-1, x.argmax(dim=-1, keepdim=True), False)
        x = x.masked_fill(holes, float("-inf"))
    return x.to(dtype)


def random_case(rng: torch.Generator) -> tuple[str, torch.dtype, torch.Tensor]:
    kind, dtype = pick(rng, KINDS), pick(rng, DTYPES)
    return kind, dtype, random_logits(rng, kind, dtype)


def random_temperature(rng: torch.Generator, kind: str, dtype: torch.dtype) -> float:
    """Any temperature for moderate float64 logits; a power of two otherwise (see EXACT_TEMPERATURES)."""
    if dtype == torch.float64 and kind != "extreme" and bool(torch.rand((), generator=rng) < 0.7):
        return uniform(rng, 0.5, 3.0)
    return pick(rng, EXACT_TEMPERATURES)


def random_p(rng: torch.Generator, logits: torch.Tensor) -> float:
    """p in (0, 1]: uniform, 1, tiny, or exactly the float64 mass of a row's top tokens (a boundary case)."""
    choice = pick(rng, ["uniform", "uniform", "one", "tiny", "boundary"])
    if choice == "uniform":
        return uniform(rng, 0.05, 0.99)
    if choice == "one":
        return 1.0
    if choice == "tiny":
        return 1e-3
    probs = torch.softmax(logits.to(torch.float64).reshape(-1, logits.shape[-1])[0], dim=-1)
    mass = float(probs.sort(descending=True).values[: pick(rng, [1, 2, 3])].sum())
    return min(max(mass, 1e-3), 1.0)


def label(kind: str, logits: torch.Tensor) -> str:
    return f"{kind} {str(logits.dtype).removeprefix('torch.')} logits {list(logits.shape)}"


def random_cases(rng: torch.Generator):
    """CASES random cases (kind, dtype, logits), each drawn once the caller is done with the one before."""
    for _ in range(CASES):
        yield random_case(rng)


def random_problems(rng: torch.Generator, problem_of) -> list[str]:
    """What problem_of(kind, dtype, logits) finds wrong on random cases (it may draw from rng too)."""
    problems = []
    for case in random_cases(rng):
        problem = problem_of(*case)
        problems += [problem] if problem else []
    return problems


@check("apply_temperature_random", points=7, hint="apply_temperature",
       title="apply_temperature matches logits / temperature on random logits of every dtype")
def test_apply_temperature_random(sub, rng):
    ref = reference("sampling")
    for kind, dtype, logits in random_cases(rng):
        temperature = uniform(rng, 0.25, 4.0)
        exact = ref.apply_temperature(logits.to(torch.float64), temperature)
        atol, rtol = tolerance(exact, ref.apply_temperature(logits, temperature), torch.finfo(dtype).tiny)
        on_probs = torch.softmax(logits.to(torch.float64), dim=-1) / temperature
        expect_close(sub.apply_temperature(logits, temperature), exact,
                     f"apply_temperature({label(kind, logits)}, temperature={temperature:.4g})", atol, rtol,
                     misconceptions={"temperature_on_probs": on_probs})


@check("bad_arguments_random", points=1, hint="filtered_probs",
       title="a temperature <= 0, k < 1 or p outside (0, 1] raises ValueError naming the argument; the valid "
             "values beside them (a small temperature, k past V, p = 1) are answered")
def test_bad_arguments_random(sub, rng):
    ref = reference("sampling")
    logits, problems = torch.randn(2, 5, generator=rng), []
    for _ in range(4):
        temperature = pick(rng, [0.0, -uniform(rng, 1e-3, 5.0)])
        k = pick(rng, [0, -int(torch.randint(1, 5, (), generator=rng))])
        p = pick(rng, [0.0, -uniform(rng, 1e-3, 1.0), 1.0 + uniform(rng, 1e-6, 2.0)])
        expect_names(sub.apply_temperature, ("temperature",), f"apply_temperature(logits, {temperature})", logits,
                     temperature)
        expect_names(sub.top_k_filter, ("k", "top_k"), f"top_k_filter(logits, {k})", logits, k)
        expect_names(sub.top_p_filter, ("p", "top_p"), f"top_p_filter(logits, {p})", logits, p)
        expect_names(sub.filtered_probs, ("temperature",), f"filtered_probs(logits, temperature={temperature})",
                     logits, temperature=temperature)
        expect_names(sub.filtered_probs, ("top_k", "k"), f"filtered_probs(logits, top_k={k})", logits, top_k=k)
        expect_names(sub.filtered_probs, ("top_p", "p"), f"filtered_probs(logits, top_p={p})", logits, top_p=p)
        # valid values at the edges beside them, answered as the reference answers: refusing every call fails here
        temperature = pick(rng, [uniform(rng, 1e-3, 0.1), uniform(rng, 0.1, 5.0)])
        k, p = int(torch.randint(1, 8, (), generator=rng)), pick(rng, [1.0, uniform(rng, 1e-3, 1.0)])
        exact = ref.apply_temperature(logits.to(torch.float64), temperature)
        atol, rtol = tolerance(exact, ref.apply_temperature(logits, temperature), torch.finfo(torch.float32).tiny)
        expect_close(sub.apply_temperature(logits, temperature), exact,
                     f"apply_temperature(logits, {temperature:.4g})", atol, rtol)
        problems += filter(None, [
            top_k_problem(sub.top_k_filter(logits, k), logits, k, ref.top_k_filter(logits, k),
                          f"top_k_filter(logits [2, 5], k={k})"),
            top_p_problem(sub.top_p_filter(logits, p), logits, p, *ref.top_p_keep_bounds(logits, p, slack=SLACK),
                          f"top_p_filter(logits [2, 5], p={p:.6g})"),
            filtered_problem(sub, ref, "normal", logits, temperature, k, p)])
    fail_on(problems, ())


@check("top_k_random", points=12, hint="top_k_filter",
       title="top_k_filter matches the reference on random logits with ties, -inf and extreme values")
def test_top_k_random(sub, rng):
    ref = reference("sampling")

    def problem_of(kind: str, dtype: torch.dtype, logits: torch.Tensor) -> str | None:
        k = max(1, pick(rng, [1, 2, 3, logits.shape[-1] - 1, logits.shape[-1], logits.shape[-1] + 2]))
        return top_k_problem(sub.top_k_filter(logits, k), logits, k, ref.top_k_filter(logits, k),
                             f"top_k_filter({label(kind, logits)}, k={k})")

    fail_on(random_problems(rng, problem_of), ("top_k_drops_ties",))


@check("top_p_random", points=19, hint="top_p_filter",
       title="top_p_filter keeps an accepted nucleus on random logits, ties and boundary cases included")
def test_top_p_random(sub, rng):
    ref = reference("sampling")

    def problem_of(kind: str, dtype: torch.dtype, logits: torch.Tensor) -> str | None:
        p = random_p(rng, logits)
        must, may = ref.top_p_keep_bounds(logits, p, slack=SLACK)
        return top_p_problem(sub.top_p_filter(logits, p), logits, p, must, may,
                             f"top_p_filter({label(kind, logits)}, p={p:.6g})")

    fail_on(random_problems(rng, problem_of), TOP_P_IDS)


DECIMAL_CASES = 16  # half of them chosen so that float32 sums fall short of p (boundary.py)


def decimal_case(rng: torch.Generator, trap: bool) -> tuple[list[int], int]:
    """Distinct per-mille parts summing to 1000, most probable first, and how many the nucleus keeps.

    A trap is a case where every float32 way of summing the kept parts falls short of p (about 2% of draws).
    """
    for _ in range(5000):
        size = int(torch.randint(3, 9, (), generator=rng))
        cuts = sorted(torch.randperm(999, generator=rng)[: size - 1].add(1).tolist())
        parts = sorted((b - a for a, b in zip([0, *cuts], [*cuts, 1000])), reverse=True)
        kept = int(torch.randint(1, size, (), generator=rng))
        if len(set(parts)) == size and (not trap or float32_falls_short(parts, 1000, kept)):
            return parts, kept
    raise AssertionError("no exact-decimal top-p case found in 5000 draws")


@check("top_p_exact_decimals_random", points=3, hint="top_p_filter",
       title="top_p_filter keeps exactly the nucleus when p is the sum of exact decimal probabilities (float64 sums)")
def test_top_p_exact_decimals_random(sub, rng):
    ref = reference("sampling")
    problems = []
    for i in range(DECIMAL_CASES):
        parts, kept = decimal_case(rng, trap=i % 2 == 0)
        order = torch.randperm(len(parts), generator=rng)  # token order[j] gets the j-th largest part
        ranked = torch.tensor(parts, dtype=torch.float64) / 1000
        probs = torch.empty(len(parts), dtype=torch.float64).scatter_(0, order, ranked)
        logits, p = decimal_logits(probs.tolist()), sum(parts[:kept]) / 1000
        must, may = ref.top_p_keep_bounds(logits, p, slack=0.0)
        problem = top_p_problem(sub.top_p_filter(logits, p), logits, p, must, may,
                                f"top_p_filter(log of {len(parts)} exact per-mille probabilities, p={p})")
        problems += [problem] if problem else []
    fail_on(problems, TOP_P_IDS)


def filtered_problem(sub, ref, kind: str, logits: torch.Tensor, temperature: float, top_k: int | None,
                     top_p: float | None) -> tuple[str, set[str]] | None:
    """What is wrong with the submission's filtered_probs on one case, judged against the reference pipeline."""
    tempered = ref.apply_temperature(logits.to(torch.float64), temperature)
    after_k = tempered if top_k is None else ref.top_k_filter(tempered, top_k)
    must = may = torch.isfinite(after_k)
    if top_p is not None:
        bounds = ref.top_p_keep_bounds(after_k, top_p, slack=SLACK)
        must, may = must & bounds[0], may & bounds[1]
    what = f"filtered_probs({label(kind, logits)}, temperature={temperature:.4g}, top_k={top_k}, top_p={top_p})"
    out = sub.filtered_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    return filtered_probs_problem(out, tempered, must, may, what,
                                  filtered_probs_candidates(ref, logits, temperature, top_k, top_p))


@check("filtered_probs_random", points=13, hint="filtered_probs",
       title="filtered_probs matches the reference pipeline on random logits, temperatures, k and p")
def test_filtered_probs_random(sub, rng):
    ref = reference("sampling")

    def problem_of(kind: str, dtype: torch.dtype, logits: torch.Tensor) -> str | None:
        temperature = random_temperature(rng, kind, dtype)
        top_k = pick(rng, [None, 1, 2, 3, logits.shape[-1]])
        top_p = pick(rng, [None, random_p(rng, logits)])
        return filtered_problem(sub, ref, kind, logits, temperature, top_k, top_p)

    fail_on(random_problems(rng, problem_of), FILTERED_PROBS_IDS)


@check("sample_random", points=7, hint="sample",
       title="sample picks the exponential-race winner on random distributions, never a probability-0 token")
def test_sample_random(sub, rng):
    for _ in range(CASES):
        kind, dtype = pick(rng, KINDS), pick(rng, (torch.float64, torch.float32))
        probs = torch.softmax(random_logits(rng, kind, torch.float64), dim=-1).to(dtype)
        noise = torch.empty(probs.shape, dtype=torch.float64).exponential_(generator=rng).clamp_min(1e-12)
        if bool(torch.rand((), generator=rng) < 0.5):  # tiny noise where the probability is 0: 0 / tiny is still 0
            noise = noise.masked_fill(probs == 0, 1e-30)
        noise = noise.to(dtype)
        expect_race(sub.sample(probs, noise), probs, noise,
                    f"sample({kind} {str(dtype).removeprefix('torch.')} probs {list(probs.shape)}, noise)")


@check("greedy_random", points=3, hint="greedy",
       title="greedy matches the reference argmax (lowest index on ties) on random logits of every dtype")
def test_greedy_random(sub, rng):
    ref = reference("sampling")
    for kind, _, logits in random_cases(rng):
        expect_equal(sub.greedy(logits), ref.greedy(logits), f"greedy({label(kind, logits)})")


FREQUENCY_CASES = 6  # random cases of at most 3 rows each, after one probe row: at most 19 <= MAX_ROWS rows


def probe_case(rng: torch.Generator) -> tuple[torch.Tensor, int]:
    """One row where draws without replacement show (frequencies.py): n >= 40 draws, a token of probability >= 0.5,
    and at least n tokens of positive probability."""
    vocab = int(torch.randint(48, PROBE_MAX_TOKENS + 1, (), generator=rng))
    draws = int(torch.randint(PROBE_MIN_DRAWS, 49, (), generator=rng))
    top = uniform(rng, PROBE_MIN_MASS, 0.8)
    rest = torch.rand(vocab - 1, generator=rng, dtype=torch.float64) + 0.1
    probs = torch.cat([torch.tensor([top], dtype=torch.float64), rest / rest.sum() * (1 - top)])
    return probs[torch.randperm(vocab, generator=rng)], draws


def frequency_case(rng: torch.Generator, ref) -> tuple[torch.Tensor, int]:
    """Probabilities of a random strategy on random logits ([V], [2, V] or [1, 3, V]; float64 or float32), and a
    number of draws from 1 to 3000."""
    kind, shape = pick(rng, KINDS), (*pick(rng, [(), (2,), (1, 3)]), pick(rng, [1, 2, 5, 8, 17, 32]))
    logits = random_logits(rng, kind, torch.float64, shape)
    probs = ref.filtered_probs(logits, random_temperature(rng, kind, torch.float64),
                               pick(rng, [None, 1, 3]), pick(rng, [None, random_p(rng, logits)]))
    return probs.to(pick(rng, (torch.float64, torch.float32))), pick(rng, [1, 2, 30, 400, 3000])


@check("empirical_distribution_random", points=7, hint="empirical_distribution",
       title="empirical_distribution passes an exact binomial test per token on random distributions, shapes and "
             "numbers of draws, including a probe for draws without replacement")
def test_empirical_distribution_random(sub, rng, seed):
    # false fail <= 1e-6, split over at most 19 rows; the probe comes first and fails every answer drawn without
    # replacement, before a call with more draws than tokens could raise instead (frequencies.py)
    ref = reference("sampling")
    cases = [probe_case(rng)] + [frequency_case(rng, ref) for _ in range(FREQUENCY_CASES)]
    rows = sum(probs.numel() // probs.shape[-1] for probs, _ in cases)  # <= MAX_ROWS (frequencies.py)
    sub.set_timeout(30)
    generator = sub.generator(seed)
    for probs, draws in cases:
        what = (f"empirical_distribution({str(probs.dtype).removeprefix('torch.')} probs {list(probs.shape)}, "
                f"num_samples={draws}, generator)")
        expect_frequencies(sub.empirical_distribution(probs, draws, generator), probs, draws, rows, what)


@check("empirical_distribution_generator_only", points=2, hint="empirical_distribution",
       title="empirical_distribution draws only from its generator: the same seed gives the same frequencies in "
             "processes whose global random generators were seeded differently, and in one process; other seeds "
             "give other frequencies")
def test_empirical_distribution_generator_only(sub, rng, seed):
    probs = torch.softmax(torch.randn(2, 9, generator=rng, dtype=torch.float64), dim=-1)
    what = "empirical_distribution(probs [2, 9], num_samples=500, generator)"
    results = []
    for global_seed in (seed + 1, seed + 2):
        sub.restart(global_seed=global_seed)
        out = sub.empirical_distribution(probs, 500, sub.generator(seed))
        results.append(counts_of(out, probs, 500, what))
    if not torch.equal(*results):
        fail(tr("{what} twice, with generators seeded alike but torch/numpy/random global seeds changed between the "
                "runs, returned different frequencies; draw every random number from `generator`", what=what))
    # In this one child: a generator of its own that the submission keeps (seeded once at import) passes the
    # above, and gives other frequencies the second time. Uniform rows: two independent runs give equal counts
    # with probability <= the largest Multinomial(500, 1/9) probability per row, 1.95e-10, so <= 3.9e-20 for both
    # rows; four seeds all give the same counts with probability < 1e-58 (bounds in tests/topics/test_sampling.py).
    uniform = torch.full((2, 9), 1 / 9, dtype=torch.float64)
    uniform_what = "empirical_distribution(uniform probs [2, 9], num_samples=500, generator)"

    def counts(generator_seed: int) -> torch.Tensor:
        out = sub.empirical_distribution(uniform, 500, sub.generator(generator_seed))
        return counts_of(out, uniform, 500, uniform_what)

    first = counts(seed)
    if not torch.equal(counts(seed), first):
        fail(tr("{what} twice in one process, each with a fresh generator seeded {seed}, returned different "
                "frequencies: keep no random state of your own; draw every random number from `generator`",
                what=uniform_what, seed=seed))
    if all(torch.equal(counts(seed + k), first) for k in (1, 2, 3)):
        fail(tr("{what} with generators seeded {seed} to {last} returned the same frequencies every time; a sampler "
                "that draws from `generator` does so with probability < 1e-58", what=uniform_what, seed=seed,
                last=seed + 3))


@check("num_samples_random", points=1, hint="empirical_distribution",
       title="num_samples < 1 raises ValueError naming num_samples; one draw or a few are answered")
def test_num_samples_random(sub, rng, seed):
    probs = torch.softmax(torch.randn(3, generator=rng, dtype=torch.float64), dim=-1)
    for num_samples in (0, -int(torch.randint(1, 100, (), generator=rng))):
        expect_names(sub.empirical_distribution, ("num_samples",),
                     f"empirical_distribution(probs, num_samples={num_samples}, generator)", probs, num_samples,
                     sub.generator(seed))
    # the valid counts beside them: frequencies of whole draws (refusing every call fails here)
    for num_samples in (1, int(torch.randint(2, 6, (), generator=rng))):
        what = f"empirical_distribution(probs, num_samples={num_samples}, generator)"
        counts_of(sub.empirical_distribution(probs, num_samples, sub.generator(seed)), probs, num_samples, what)
