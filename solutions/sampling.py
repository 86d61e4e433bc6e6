"""Model answer for the sampling exercise: temperature, top-k, top-p (nucleus), the filter pipeline, the
exponential race, greedy decoding and the frequencies of many draws. Every function works along the last dim of a
[..., V] tensor."""
import torch

BOUNDARY_RTOL = 1e-9  # a mass within 1e-9 (relative) of p counts as reaching p (contract)


def _prob_dtype(logits: torch.Tensor) -> torch.dtype:
    """The dtype probabilities and their sums are computed in: float64 for float64 logits, else float32 or wider.

    A float32 softmax of exact decimals lands up to ~1e-7 off: for log([0.59, 0.28, 0.13]) the first two
    probabilities sum to 0.8699999452, 6e-8 short of 0.87, beyond the 1e-9 allowance at the top-p boundary;
    float64 lands within ~1e-16."""
    return torch.promote_types(logits.dtype, torch.float32)


def apply_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Divide the logits by the temperature: below 1 sharpens the distribution, above 1 flattens it."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return logits / temperature


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Set every logit below the k-th largest of its row to -inf (ties with the k-th largest stay)."""
    if not k >= 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k >= logits.shape[-1]:
        return logits
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]  # kth: [..., 1]
    filtered = logits.masked_fill(logits < kth, float("-inf"))  # [..., V]
    assert (filtered >= kth).sum(-1).ge(k).all(), "at least k logits stay"
    return filtered


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the most probable tokens until their mass reaches p (the crossing token stays); the rest get -inf."""
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p}")
    probs = torch.softmax(logits.to(_prob_dtype(logits)), dim=-1)  # probs: [..., V]
    sorted_probs, order = probs.sort(dim=-1, descending=True)  # both [..., V]
    mass_above = sorted_probs.cumsum(dim=-1) - sorted_probs  # mass ranked strictly above each sorted token
    drop_sorted = mass_above >= p * (1 - BOUNDARY_RTOL)  # [..., V]
    assert not drop_sorted[..., 0].any(), "the most probable token always stays"
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)  # back to vocabulary order
    return logits.masked_fill(drop, float("-inf"))


def filtered_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    """The sampling distribution: temperature, then top-k, then top-p, then softmax."""
    scaled = apply_temperature(logits.to(_prob_dtype(logits)), temperature)  # [..., V]
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    if top_p is not None:
        scaled = top_p_filter(scaled, top_p)
    probs = torch.softmax(scaled, dim=-1)  # removed tokens: exp(-inf) = exactly 0
    assert torch.allclose(probs.sum(-1), torch.ones((), dtype=probs.dtype)), "rows sum to 1"
    return probs


def sample(probs: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """One token per row by the exponential race argmax(probs / noise), noise being i.i.d. Exp(1) draws."""
    assert probs.shape == noise.shape and bool((noise > 0).all()), "noise: positive, shaped like probs"
    return torch.argmax(probs / noise, dim=-1)  # probability-0 tokens score 0 and never beat a positive one


def greedy(logits: torch.Tensor) -> torch.Tensor:
    """The most likely token of each row (torch.argmax returns the first maximum: lowest index on ties)."""
    return torch.argmax(logits, dim=-1)


def empirical_distribution(probs: torch.Tensor, num_samples: int, generator: torch.Generator) -> torch.Tensor:
    """Observed frequencies of num_samples independent draws (with replacement) per row, from `generator` only."""
    if not num_samples >= 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    rows = probs.detach().to(torch.float64).reshape(-1, probs.shape[-1])  # rows: [R, V]
    draws = torch.multinomial(rows, num_samples, replacement=True, generator=generator)  # draws: [R, num_samples]
    counts = torch.zeros_like(rows).scatter_add_(-1, draws, torch.ones_like(draws, dtype=torch.float64))
    return (counts / num_samples).reshape(probs.shape)
