"""How empirical_distribution is judged: float64 frequencies of whole draws, then an exact binomial test per token.

Sizing (tests/topics/test_sampling.py recomputes every figure):
- False fail. Whatever the joint law of the draws, the count of token v in n independent draws from a row q is
  exactly Binomial(n, q_v). A check splits FALSE_FAIL = 1e-6 evenly over the rows it tests, and
  `binomial.intervals` splits a row's share over its tokens of positive probability, half per tail; a token of
  probability 0 must never be drawn. By the union bound a correct submission fails a check with probability
  <= 1e-6, for any seed.
- `without_replacement`. Draws without replacement from a row with at least n tokens of positive probability
  draw each token at most once. The probe rows give one token probability q0 >= 0.5 and draw n >= 40 times from
  at least n tokens: a correct count of that token is at most 1 with probability
  (1 - q0)**n + n * q0 * (1 - q0)**(n - 1) <= 41 / 2**40 = 3.7e-11, below half its share of the budget
  (>= 1e-6 / 24 rows / 64 tokens / 2 = 3.3e-10 in any check), so its interval starts at 2 or more and every
  answer drawn without replacement fails: the mutant passes with probability 0.
"""
import torch

from grader.checks.sampling.expect import row_name, show
from grader.checks.speculative.binomial import intervals, outside
from grader.engine import expect_type, fail, within

FALSE_FAIL = 1e-6
PROBE_MIN_DRAWS, PROBE_MIN_MASS, PROBE_MAX_TOKENS = 40, 0.5, 64
MAX_ROWS = 24  # rows one check may test while the probe bound above holds


def counts_of(out, probs: torch.Tensor, num_samples: int, what: str) -> torch.Tensor:
    """[rows, V] draw counts behind `out`, after checking it is float64 frequencies of whole draws summing to 1."""
    expect_type(out, torch.Tensor, what)
    if out.dtype != torch.float64:
        fail(f"{what} returned dtype {out.dtype}, expected torch.float64")
    if tuple(out.shape) != tuple(probs.shape):
        fail(f"{what} returned shape {list(out.shape)}, expected {list(probs.shape)} (the shape of probs)")
    scaled = out.reshape(-1, probs.shape[-1]) * num_samples  # [rows, V]: the counts, up to rounding
    counts = scaled.round()
    if not (torch.isfinite(scaled).all() and within(scaled, counts, atol=1e-6) and (counts >= 0).all()):
        fail(f"{what} returned {show(out.flatten()[:8])}...; each frequency is a count of draws divided by "
             f"num_samples={num_samples}")
    sums = counts.sum(-1)
    if (sums != num_samples).any():
        r = int((sums != num_samples).nonzero()[0])
        fail(f"{what}: the frequencies{row_name(r, probs.shape)} sum to {sums[r].item() / num_samples:.6g}, "
             f"expected 1 (num_samples={num_samples} draws per row)")
    return counts.long()


def expect_frequencies(out, probs: torch.Tensor, num_samples: int, rows_in_check: int, what: str) -> None:
    """Fail unless `out` passes the exact binomial test of every row of `probs` (its share of FALSE_FAIL)."""
    assert rows_in_check <= MAX_ROWS, "the probe bound assumes at most MAX_ROWS rows per check"
    counts = counts_of(out, probs, num_samples, what)
    law = probs.detach().to(torch.float64).reshape(-1, probs.shape[-1])
    law = law / law.sum(-1, keepdim=True)  # [rows, V]
    for r in range(law.shape[0]):
        bounds = intervals(num_samples, law[r], FALSE_FAIL / rows_in_check)  # [V, 2]
        bad = outside(counts[r].tolist(), bounds)
        if not bad:
            continue
        once = num_samples >= 2 and int(counts[r].max()) <= 1
        shown = ", ".join(f"token {v}: {counts[r, v].item()} (expected {bounds[v, 0]}..{bounds[v, 1]}, probability "
                          f"{law[r, v].item():.4g})" for v in bad[:4])
        fail(f"{what}{row_name(r, probs.shape)}: counts out of range for {num_samples} independent draws: {shown}"
             + (". No token was drawn twice: draw with replacement" if once else "")
             + ". A correct sampler fails this with probability < 1e-6",
             "without_replacement" if once else None)
