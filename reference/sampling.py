"""Hidden reference for the sampling exercise (CONTRACTS.md section 1): the oracle the checks compare against.

Every function works row by row on the last dim with Python floats (float64) and plain loops, so each rule of
the contract reads off the code. `top_p_keep_bounds` also says which top-p answers the contract accepts when
float rounding or ties make the boundary token ambiguous.
"""
import math

import torch

BOUNDARY_RTOL = 1e-9  # contract: a mass within 1e-9 (relative) of p counts as reaching p


def _check_temperature(temperature: float) -> None:
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")


def _check_k(k: int) -> None:
    if not k >= 1:
        raise ValueError(f"k must be >= 1, got {k}")


def _check_p(p: float) -> None:
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p}")


def _check_num_samples(num_samples: int) -> None:
    if not num_samples >= 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")


def _rows(x: torch.Tensor) -> list[list[float]]:
    """The rows of `x` along its last dim, as lists of Python floats."""
    return x.detach().to(torch.float64).reshape(-1, x.shape[-1]).tolist()


def _softmax(row: list[float]) -> list[float]:
    """Softmax of one row of logits; -inf logits get probability 0."""
    top = max(row)
    assert math.isfinite(top), "a row needs at least one finite logit (and no +inf)"
    weights = [math.exp(v - top) for v in row]
    total = math.fsum(weights)
    return [w / total for w in weights]


def _reaches(mass: float, p: float) -> bool:
    """Whether `mass` reaches the threshold p (within the contract's 1e-9 relative tolerance)."""
    return mass >= p * (1 - BOUNDARY_RTOL)


def apply_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """logits / temperature, computed in float64 and rounded once to the input dtype."""
    _check_temperature(temperature)
    return (logits.to(torch.float64) / temperature).to(logits.dtype)


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Logits below the k-th largest of their row become -inf; ties with the k-th largest stay."""
    _check_k(k)
    out = []
    for row in _rows(logits):
        if k >= len(row):
            out.append(row)
            continue
        kth = sorted(row, reverse=True)[k - 1]
        out.append([v if v >= kth else -math.inf for v in row])
    return torch.tensor(out, dtype=torch.float64).reshape(logits.shape).to(logits.dtype)


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus filter: walk the tokens from most to least probable; a token stays while the mass before it < p."""
    _check_p(p)
    out = []
    for row in _rows(logits):
        probs = _softmax(row)
        kept = list(row)
        mass_above = 0.0
        for i in sorted(range(len(row)), key=lambda j: -probs[j]):  # ties: lower index first
            if _reaches(mass_above, p):
                kept[i] = -math.inf
            mass_above += probs[i]
        out.append(kept)
    return torch.tensor(out, dtype=torch.float64).reshape(logits.shape).to(logits.dtype)


def top_p_keep_bounds(logits: torch.Tensor, p: float, slack: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(must_keep, may_keep) bool masks: the top-p answers the contract accepts.

    A token's deciding quantity is the mass ranked strictly above it. Tokens tied with it may be ranked on either
    side, so that mass lies between `least` (only strictly more probable tokens) and `most` (ties above too).
    It must be kept when even `most` is below p, and may be kept when `least` is. `slack` widens both: 0 gives
    the exact rule for inputs built from exact decimals; 1e-5 accepts either answer where the deciding quantity
    is within 1e-5 of p, and treats probabilities within a relative 1e-5 of each other as tied (float32 ranks).
    """
    _check_p(p)
    threshold = p * (1 - BOUNDARY_RTOL)
    must, may = [], []
    for row in _rows(logits):
        probs = _softmax(row)
        for i, q in enumerate(probs):
            higher = [r for j, r in enumerate(probs) if j != i and r > q * (1 + slack)]
            tied = [r for j, r in enumerate(probs) if j != i and q * (1 - slack) <= r <= q * (1 + slack)]
            least = math.fsum(higher)
            most = least + math.fsum(tied)
            must.append(most < threshold - slack)
            may.append(least < threshold + slack)
    shape = logits.shape
    return torch.tensor(must).reshape(shape), torch.tensor(may).reshape(shape)


def filtered_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    """Temperature, then top-k, then top-p, then softmax; float64 probabilities, removed tokens exactly 0."""
    scaled = apply_temperature(logits.to(torch.float64), temperature)
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    if top_p is not None:
        scaled = top_p_filter(scaled, top_p)
    probs = [_softmax(row) for row in _rows(scaled)]
    return torch.tensor(probs, dtype=torch.float64).reshape(logits.shape)


def _first_max(values: list[float]) -> int:
    """Index of the largest value, the lowest index among equals."""
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


def sample(probs: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """Exponential race: per row the token with the largest probs / noise; probability-0 tokens never win."""
    assert probs.shape == noise.shape, "noise has the shape of probs"
    picks = []
    for q, e in zip(_rows(probs), _rows(noise)):
        race = [qi / ei if qi > 0 else -math.inf for qi, ei in zip(q, e)]
        picks.append(_first_max(race))
    return torch.tensor(picks, dtype=torch.long).reshape(probs.shape[:-1])


def greedy(logits: torch.Tensor) -> torch.Tensor:
    """Per row the index of the largest logit, the lowest index on ties."""
    picks = [_first_max(row) for row in _rows(logits)]
    return torch.tensor(picks, dtype=torch.long).reshape(logits.shape[:-1])


def _inverse_cdf(row: list[float], u: float) -> int:
    """The token whose slice of [0, total) holds u * total (probability-0 tokens have empty slices)."""
    total = math.fsum(row)
    below = 0.0
    for i, q in enumerate(row):
        below += q
        if q > 0 and u * total < below:
            return i
    return max(i for i, q in enumerate(row) if q > 0)  # u * total rounded onto the last boundary


def empirical_distribution(probs: torch.Tensor, num_samples: int, generator: torch.Generator) -> torch.Tensor:
    """Frequencies of num_samples independent draws per row (with replacement), by inverse CDF; float64."""
    _check_num_samples(num_samples)
    out = []
    for row in _rows(probs):
        counts = [0] * len(row)
        for u in torch.rand(num_samples, generator=generator, dtype=torch.float64).tolist():
            counts[_inverse_cdf(row, u)] += 1
        out.append([c / num_samples for c in counts])
    return torch.tensor(out, dtype=torch.float64).reshape(probs.shape)
