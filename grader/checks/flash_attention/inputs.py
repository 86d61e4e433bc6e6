"""Inputs of the flash_attention checks.

Public cases use `lattice` tensors: multiples of 1/32 in [-2, 2) from an integer hash, so they are identical on
every machine and torch version and exact in float32, float16 and bfloat16 (the goldens stay valid). Hidden cases
draw from the check's `rng`.
"""
import math

import torch


def lattice(shape, salt: int, scale: float = 1.0) -> torch.Tensor:
    """float32 values k/32, k in [-64, 64), from a multiplicative hash of (element index, salt), times `scale`."""
    i = torch.arange(math.prod(shape), dtype=torch.int64) + salt * 1_000_003
    h = (i * 2654435761) % 2**32  # every product stays below 2**63
    h = ((h ^ (h >> 15)) * 2246822519) % 2**32
    k = (h >> 16) % 128 - 64
    return (k.to(torch.float32) / 32 * scale).reshape(shape)


def lattice_qkv(b: int, h: int, tq: int, tk: int, d: int, salt: int, dtype=torch.float32):
    """q [b, h, tq, d], k and v [b, h, tk, d] lattice tensors in `dtype`."""
    return (lattice((b, h, tq, d), salt).to(dtype), lattice((b, h, tk, d), salt + 1).to(dtype),
            lattice((b, h, tk, d), salt + 2).to(dtype))


def with_row_scores(q: torch.Tensor, k: torch.Tensor, targets: torch.Tensor):
    """q, k such that every score of query row r is targets[r] plus a small lattice term.

    k's first feature becomes 1 for every key and q's first feature targets[r] * sqrt(D); with D a power of 4
    and integer targets the scores are exact in float32, so any summation order gives the same scores.
    targets: [Tq] integers.
    """
    d = q.shape[-1]
    assert math.isqrt(d) ** 2 == d and (math.isqrt(d) & (math.isqrt(d) - 1)) == 0, "D must be a power of 4"
    q, k = q.clone(), k.clone()
    q[..., 0] = targets.to(q.dtype) * math.isqrt(d)
    k[..., 0] = 1.0
    return q, k


def randn_qkv(rng: torch.Generator, b: int, h: int, tq: int, tk: int, d: int, dtype, scale: float = 1.0):
    """Gaussian q [b, h, tq, d] (times `scale`), k and v [b, h, tk, d], rounded to `dtype`."""
    q = torch.randn(b, h, tq, d, generator=rng) * scale
    k = torch.randn(b, h, tk, d, generator=rng)
    v = torch.randn(b, h, tk, d, generator=rng)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def between(rng: torch.Generator, low: int, high: int) -> int:
    """A uniform integer in [low, high]."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def pick(rng: torch.Generator, options: list):
    """A uniformly chosen element of `options`."""
    return options[between(rng, 0, len(options) - 1)]
