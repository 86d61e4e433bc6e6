"""An exact goodness-of-fit test for multinomial counts: one binomial test per cell, Bonferroni over the cells.

Each cell count of n draws from a law is exactly Binomial(n, p_c), so no asymptotic approximation enters:
- false fail: P(some cell leaves its interval) <= sum over cells of P(that cell leaves) <= false_fail;
- false pass against another law: every cell must land in its interval, so P(pass) <= min over cells of
  P_alt(lo_c <= X_c <= hi_c), computed exactly by `pass_bound`.
Cells of probability 0 accept only a count of 0 (they never fail a correct sample).
"""
import math

import torch


def log_pmf(n: int, prob: float) -> torch.Tensor:
    """log P(X = x) for x = 0..n, X ~ Binomial(n, prob): [n + 1] float64."""
    x = torch.arange(n + 1, dtype=torch.float64)
    if prob <= 0 or prob >= 1:
        certain = 0 if prob <= 0 else n
        return torch.where(x == certain, 0.0, -math.inf)
    return (math.lgamma(n + 1) - torch.lgamma(x + 1) - torch.lgamma(n - x + 1)
            + x * math.log(prob) + (n - x) * math.log1p(-prob))


def intervals(n: int, law: torch.Tensor, false_fail: float) -> torch.Tensor:
    """[cells, 2] bounds (lo, hi): each cell of positive probability leaves [lo, hi] with probability <= its share.

    The share is false_fail / (cells of positive probability), split evenly between the two tails.
    """
    share = false_fail / int((law > 0).sum())
    bounds = []
    for prob in law.tolist():
        pmf = log_pmf(n, prob).exp()                                    # pmf: [n + 1]
        below = pmf.cumsum(0)                                           # P(X <= x)
        above = pmf.flip(0).cumsum(0).flip(0)                           # P(X >= x)
        lo = int((below <= share / 2).sum())                            # P(X < lo) <= share / 2
        hi = n - int((above <= share / 2).sum())                        # P(X > hi) <= share / 2
        bounds.append((lo, hi) if prob > 0 else (0, 0))
    return torch.tensor(bounds, dtype=torch.long)


def outside(counts: list, bounds: torch.Tensor) -> list[int]:
    """Indices of the cells whose count leaves its interval."""
    c = torch.tensor(counts, dtype=torch.long)
    return torch.nonzero((c < bounds[:, 0]) | (c > bounds[:, 1])).flatten().tolist()


def pass_bound(n: int, law_alt: torch.Tensor, bounds: torch.Tensor) -> float:
    """An upper bound on the probability that n draws from `law_alt` pass the test: min over cells."""
    best = 1.0
    for prob, (lo, hi) in zip(law_alt.tolist(), bounds.tolist()):
        best = min(best, float(log_pmf(n, prob)[lo:hi + 1].exp().sum()))
    return best
