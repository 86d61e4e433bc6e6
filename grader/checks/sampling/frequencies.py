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
from grader.engine import expect_type, fail, tr, within

FALSE_FAIL = 1e-6
PROBE_MIN_DRAWS, PROBE_MIN_MASS, PROBE_MAX_TOKENS = 40, 0.5, 64
MAX_ROWS = 24  # rows one check may test while the probe bound above holds


def counts_of(out, probs: torch.Tensor, num_samples: int, what: str) -> torch.Tensor:
    """[rows, V] draw counts behind `out`, after checking it is float64 frequencies of whole draws summing to 1."""
    expect_type(out, torch.Tensor, what)
    if out.dtype != torch.float64:
        fail(tr("{what} returned dtype {dtype}, expected {expected}", what=what, dtype=out.dtype,
                expected=torch.float64))
    if tuple(out.shape) != tuple(probs.shape):
        fail(tr("{what} returned shape {shape}, expected {expected} (the shape of probs)", what=what,
                shape=list(out.shape), expected=list(probs.shape)))
    scaled = out.reshape(-1, probs.shape[-1]) * num_samples  # [rows, V]: the counts, up to rounding
    counts = scaled.round()
    if not (torch.isfinite(scaled).all() and within(scaled, counts, atol=1e-6) and (counts >= 0).all()):
        fail(tr("{what} returned {frequencies}...; each frequency is a count of draws divided by "
                "num_samples={num_samples}", what=what, frequencies=show(out.flatten()[:8]), num_samples=num_samples))
    sums = counts.sum(-1)
    if (sums != num_samples).any():
        r = int((sums != num_samples).nonzero()[0])
        fail(tr("{what}: the frequencies{row} sum to {sum:.6g}, expected 1 (num_samples={num_samples} draws per row)",
                what=what, row=row_name(r, probs.shape), sum=sums[r].item() / num_samples, num_samples=num_samples))
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
        shown = tr(", ").join(tr("token {token}: {count} (expected {low}..{high}, probability {probability:.4g})",
                                 token=v, count=counts[r, v].item(), low=bounds[v, 0], high=bounds[v, 1],
                                 probability=law[r, v].item()) for v in bad[:4])
        said = dict(what=what, row=row_name(r, probs.shape), draws=num_samples, counts=shown)
        fail(tr("{what}{row}: counts out of range for {draws} independent draws: {counts}. No token was drawn twice: "
                "draw with replacement. A correct sampler fails this with probability < 1e-6", **said) if once else
             tr("{what}{row}: counts out of range for {draws} independent draws: {counts}. A correct sampler fails "
                "this with probability < 1e-6", **said),
             "without_replacement" if once else None)
