"""Project tests for the sampling topic: the reference against brute-force definitions (exact fractions, sorting,
the exponential race's distribution), the solution against the reference, the check helpers, the stub, the hints
and the mutants."""
import types
from fractions import Fraction
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

from exercises import sampling as stub
from grader.checks.sampling.expect import (expect_race, filtered_probs_problem, kept_tokens, top_k_problem,
                                           top_p_problem)
from grader.checks.sampling.misconceptions import filtered_probs_candidates, top_k_row_ids, top_p_row_ids
from grader.engine import CheckFailure
from reference import sampling as ref
from solutions import sampling as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "sampling"
FUNCTIONS = ("apply_temperature", "top_k_filter", "top_p_filter", "filtered_probs", "sample", "greedy")
MISCONCEPTIONS = {"top_p_keeps_fraction_of_vocab", "top_p_drops_crossing_token", "top_p_boundary_accumulation",
                  "top_k_drops_ties", "temperature_on_probs", "no_renormalization", "filter_order"}
QUICK = settings(max_examples=40, deadline=None)


def decimal_logits(parts: list[int]) -> torch.Tensor:
    """float64 logits whose softmax is parts / 100 (exact decimals)."""
    return (torch.tensor(parts, dtype=torch.float64) / 100).log()


def kept(filtered: torch.Tensor) -> list[bool]:
    return torch.isfinite(filtered).tolist()


# --- the reference against brute-force definitions ------------------------------------------------------

@pytest.mark.parametrize("module", [ref, sol])
@pytest.mark.parametrize("parts, p, count", [([70, 15, 10, 5], 0.8, 2), ([70, 15, 10, 5], 0.95, 3),
                                             ([60, 30, 10], 0.9, 2)])
def test_contract_worked_examples(module, parts, p, count):
    assert sum(kept(module.top_p_filter(decimal_logits(parts), p))) == count


@st.composite
def decimal_distributions(draw) -> tuple[list[int], int]:
    """Distinct percentages summing to 100, most probable first, and a cut in percent."""
    size = draw(st.integers(2, 7))
    cuts = sorted(draw(st.lists(st.integers(1, 99), min_size=size - 1, max_size=size - 1, unique=True)))
    parts = sorted((b - a for a, b in zip([0, *cuts], [*cuts, 100])), reverse=True)
    return parts, draw(st.integers(1, 100))


@QUICK
@given(decimal_distributions())
def test_reference_top_p_is_the_smallest_set_reaching_p(case):
    parts, percent = case
    if len(set(parts)) < len(parts):
        return  # ties at the boundary may go either way; test_keep_bounds_allow_either_tied_token covers them
    p = Fraction(percent, 100)
    smallest = next(n for n in range(1, len(parts) + 1) if Fraction(sum(parts[:n]), 100) >= p)
    assert kept(ref.top_p_filter(decimal_logits(parts), float(p))) == [i < smallest for i in range(len(parts))]
    must, may = ref.top_p_keep_bounds(decimal_logits(parts), float(p), slack=0.0)
    assert must.tolist() == may.tolist() == [i < smallest for i in range(len(parts))]


def test_keep_bounds_allow_either_tied_token():
    logits = decimal_logits([40, 20, 20, 20])  # p = 0.5: one of the tied tokens crosses p, the others may not
    must, may = ref.top_p_keep_bounds(logits, 0.5, slack=0.0)
    assert must.tolist() == [True, False, False, False] and may.tolist() == [True, True, True, True]
    assert sum(kept(ref.top_p_filter(logits, 0.5))) == 2


@QUICK
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=9), st.integers(1, 10))
def test_reference_top_k_keeps_values_reaching_the_kth_largest(values, k):
    kth = sorted(values, reverse=True)[min(k, len(values)) - 1]
    logits = torch.tensor(values, dtype=torch.float64)
    assert kept(ref.top_k_filter(logits, k)) == [v >= kth for v in values]


def test_exponential_race_samples_the_distribution():
    # 20000 draws: each frequency has a standard deviation below 0.0036, so 0.02 is over 5.5 of them
    probs = torch.tensor([0.5, 0.3, 0.2, 0.0], dtype=torch.float64).expand(20000, 4)
    noise = torch.empty(20000, 4, dtype=torch.float64).exponential_(generator=torch.Generator().manual_seed(0))
    counts = torch.bincount(ref.sample(probs, noise), minlength=4).double() / 20000
    assert counts[3] == 0
    assert torch.allclose(counts, probs[0], atol=0.02)


def test_greedy_and_sample_take_the_lowest_index_on_ties():
    assert ref.greedy(torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])).tolist() == [1, 0]
    assert ref.sample(torch.tensor([0.5, 0.5]), torch.tensor([1.0, 1.0])).item() == 0


@pytest.mark.parametrize("module", [ref, sol])
@pytest.mark.parametrize("fn, args, argument", [("apply_temperature", (0.0,), "temperature"),
                                                ("top_k_filter", (0,), "k"), ("top_p_filter", (1.5,), "p"),
                                                ("top_p_filter", (0.0,), "p")])
def test_bad_arguments_name_the_argument(module, fn, args, argument):
    with pytest.raises(ValueError, match=rf"\b{argument}\b"):
        getattr(module, fn)(torch.zeros(3), *args)


# --- the solution against the reference -------------------------------------------------------------------

@st.composite
def logits_cases(draw) -> torch.Tensor:
    """[V], [B, V] or [B, T, V] logits with ties, -inf and extreme values, in every float dtype."""
    shape = (*draw(st.sampled_from([(), (2,), (2, 3)])), draw(st.integers(1, 9)))
    values = draw(st.lists(st.sampled_from([-1e4, -2.0, -0.5, 0.0, 0.25, 1.0, 3.0, 1e4, float("-inf")]),
                           min_size=int(torch.Size(shape).numel()), max_size=int(torch.Size(shape).numel())))
    x = torch.tensor(values, dtype=torch.float64).reshape(shape)
    x[..., 0] = torch.where(torch.isfinite(x).any(-1), x[..., 0], 0.0)  # every row keeps a finite logit
    return x.to(draw(st.sampled_from([torch.float64, torch.float32, torch.float16, torch.bfloat16])))


@QUICK
@given(logits_cases(), st.integers(1, 10), st.floats(0.01, 1.0), st.sampled_from([0.25, 0.5, 1.0, 2.0]))
def test_solution_matches_reference(logits, k, p, temperature):
    exact = ref.apply_temperature(logits, temperature)  # a power of two divides exactly
    assert torch.equal(sol.apply_temperature(logits, temperature).double(), exact.double())
    assert top_k_problem(sol.top_k_filter(logits, k), logits, k, ref.top_k_filter(logits, k), "top_k") is None
    must, may = ref.top_p_keep_bounds(logits, p, slack=1e-5)
    assert top_p_problem(sol.top_p_filter(logits, p), logits, p, must, may, "top_p") is None
    assert top_p_problem(ref.top_p_filter(logits, p), logits, p, must, may, "top_p") is None
    assert bool((must <= may).all())
    assert torch.equal(sol.greedy(logits), ref.greedy(logits))
    tempered = ref.apply_temperature(logits.double(), temperature)
    after_k = ref.top_k_filter(tempered, k)
    must, may = ref.top_p_keep_bounds(after_k, p, slack=1e-5)
    finite = torch.isfinite(after_k)
    out = sol.filtered_probs(logits, temperature, k, p)
    assert filtered_probs_problem(out, tempered, must & finite, may & finite, "filtered_probs", []) is None


@QUICK
@given(st.integers(0, 2**31 - 1), st.sampled_from([torch.float64, torch.float32]))
def test_solution_sample_matches_reference(seed, dtype):
    gen = torch.Generator().manual_seed(seed)
    holes = torch.rand(3, 7, generator=gen) < 0.3
    logits = torch.randn(3, 7, generator=gen, dtype=torch.float64).masked_fill(holes, float("-inf"))
    logits[:, 0] = 0.0
    probs = torch.softmax(logits, dim=-1).to(dtype)
    noise = torch.empty(3, 7, dtype=dtype).exponential_(generator=gen).masked_fill(probs == 0, 1e-30)
    assert torch.equal(sol.sample(probs, noise), ref.sample(probs, noise))
    expect_race(sol.sample(probs, noise), probs, noise, "sample")


# --- the check helpers --------------------------------------------------------------------------------------

def test_kept_tokens_rejects_changed_logits():
    logits = torch.tensor([1.0, 2.0, 3.0])
    assert kept_tokens(torch.tensor([float("-inf"), 2.0, 3.0]), logits, "f").tolist() == [False, True, True]
    with pytest.raises(CheckFailure, match="unchanged"):
        kept_tokens(torch.tensor([0.0, 2.0, 3.0]), logits, "f")


def test_expect_race_rejects_probability_zero_and_losing_tokens():
    probs, noise = torch.tensor([0.0, 0.6, 0.4]), torch.tensor([1e-30, 1.0, 0.5])
    expect_race(torch.tensor(2), probs, noise, "sample")
    for wrong, reason in ((0, "probability is 0"), (1, "largest at token 2")):
        with pytest.raises(CheckFailure, match=reason):
            expect_race(torch.tensor(wrong), probs, noise, "sample")
    with pytest.raises(CheckFailure, match="int64"):
        expect_race(torch.tensor(2, dtype=torch.int32), probs, noise, "sample")


def test_row_ids_name_only_matching_misconceptions():
    probs = [0.70, 0.15, 0.10, 0.05]
    assert top_p_row_ids(probs, [True, False, False, False], 0.8) == {"top_p_drops_crossing_token"}
    assert "top_p_keeps_fraction_of_vocab" in top_p_row_ids(probs, [True, True, True, True], 0.8)
    assert top_p_row_ids(probs, [True, False, True, False], 0.8) == set()  # not the most probable tokens
    assert top_p_row_ids([0.6, 0.3, 0.1], [True, True, True], 0.9) >= {"top_p_boundary_accumulation"}
    assert top_k_row_ids([False, True, True, False], [False, True, True, True], 2) == {"top_k_drops_ties"}
    assert top_k_row_ids([True, True, False, False], [False, True, True, True], 2) == set()


# --- stub, hints, mutants -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [("apply_temperature", (torch.zeros(3), 1.0)),
                                      ("top_k_filter", (torch.zeros(3), 1)), ("top_p_filter", (torch.zeros(3), 0.5)),
                                      ("filtered_probs", (torch.zeros(3),)),
                                      ("sample", (torch.ones(3) / 3, torch.ones(3))), ("greedy", (torch.zeros(3),))])
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)



def mutant(misconception: str) -> types.ModuleType:
    """The solution with the mutant appended, as the selftest builds it."""
    module = types.ModuleType(f"sampling_{misconception}")
    source = (ROOT / "solutions" / "sampling.py").read_text() + "\n" + (MUTANTS / f"{misconception}.py").read_text()
    exec(compile(source, str(MUTANTS / f"{misconception}.py"), "exec"), module.__dict__)
    return module


TOP_P_CASES = [([70, 15, 10, 5], 0.8), ([70, 15, 10, 5], 0.95), ([60, 30, 10], 0.9), ([40, 28, 13, 10, 8, 1], 0.68)]
TOP_K_CASES = [(torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 2), (torch.tensor([0.0, 1.0, 1.0, 2.0]), 2)]
FILTERED_CASES = [(decimal_logits([50, 30, 20]), 1.0, 2, 0.6), (torch.tensor([2.0, 1.0, 0.0, -1.0]), 0.5, None, 0.7),
                  (torch.tensor([[1.0, 2.0, 0.0, -1.0, 0.5, 1.5]]), 1.0, 3, None)]


def differing_top_p_rows(module) -> list[tuple[list[float], list[bool], float]]:
    """(probabilities, kept, p) of the public top-p cases where `module` keeps other tokens than the reference."""
    rows = []
    for parts, p in TOP_P_CASES:
        got = kept(module.top_p_filter(decimal_logits(parts), p))
        if got != kept(ref.top_p_filter(decimal_logits(parts), p)):
            rows.append(([q / 100 for q in parts], got, p))
    return rows


def differing_top_k_rows(module) -> list[tuple[list[bool], list[bool], int]]:
    """(kept, expected, k) of tie cases where `module` keeps other tokens than the reference."""
    rows = []
    for logits, k in TOP_K_CASES:
        got, expected = kept(module.top_k_filter(logits, k)), kept(ref.top_k_filter(logits, k))
        rows += [(got, expected, k)] if got != expected else []
    return rows


def differing_filtered_probs(module) -> list[tuple[torch.Tensor, list]]:
    """(output, misconception candidates) of filtered_probs cases where `module` differs from the reference."""
    found = []
    for logits, temperature, k, p in FILTERED_CASES:
        got = module.filtered_probs(logits, temperature, k, p).double()
        if not torch.allclose(got, ref.filtered_probs(logits, temperature, k, p), atol=1e-6):
            tempered = ref.apply_temperature(logits.double(), temperature)
            wrong = [*filtered_probs_candidates(ref, logits, temperature, k, p),
                     ("no_renormalization", torch.softmax(tempered, dim=-1) * (got > 0))]
            found.append((got, wrong))
    return found


@pytest.mark.parametrize("misconception", sorted(MISCONCEPTIONS))
def test_mutant_output_is_what_its_misconception_predicts(misconception):
    module = mutant(misconception)
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')
    if misconception.startswith("top_p"):
        rows = differing_top_p_rows(module)
        assert rows and all(misconception in top_p_row_ids(*row) for row in rows)
    elif misconception.startswith("top_k"):
        rows = differing_top_k_rows(module)
        assert rows and all(top_k_row_ids(*row) == {misconception} for row in rows)
    else:
        found = differing_filtered_probs(module)
        assert found and all({mid for mid, value in wrong if torch.allclose(got, value, atol=1e-6)} == {misconception}
                             for got, wrong in found)
