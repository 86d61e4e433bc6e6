"""Sampling exercise: control the next-token distribution of a language model.

Implement each function below. All of them work along the last dim of a logits (or probabilities) tensor of
shape [..., V] (V = vocabulary size), so a single row [V], a batch [B, V] and a batch of sequences [B, T, V]
are all valid inputs. Compute probabilities and their sums in float64 when the input is float64, in at least
float32 otherwise. Bad arguments raise ValueError with a message that names the argument, e.g.
"p must be in (0, 1], got 1.5".

Run `infergrade check sampling` after each edit; `infergrade hint sampling.<function>` when stuck.
"""
import torch


def apply_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Scale logits by a temperature.

    Args:
        logits: [..., V] float tensor.
        temperature: > 0; below 1 makes the distribution sharper, above 1 flatter.
    Returns:
        [..., V] tensor: logits / temperature.
    Raises:
        ValueError: temperature <= 0.
    """
    raise NotImplementedError("TODO: apply_temperature: divide the logits by the temperature")


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k largest logits of each row.

    Args:
        logits: [..., V] float tensor.
        k: >= 1. When k >= V the input comes back unchanged.
    Returns:
        [..., V] tensor: the same logits, except those below the k-th largest of their row, which become -inf.
        Every logit equal to the k-th largest stays (a row may keep more than k).
    Raises:
        ValueError: k < 1.
    """
    raise NotImplementedError("TODO: top_k_filter: set the logits below each row's k-th largest to -inf")


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus (top-p) filtering of each row.

    Keeps the smallest set of most probable tokens whose total probability reaches p: a token stays if and only
    if the probability mass of the tokens ranked strictly above it is below p, so the token that crosses p stays.
    A mass within 1e-9 (relative) of p counts as reaching p, so the answer is the one exact arithmetic gives: sum
    float64 inputs in float64. Tokens tied at the boundary may stay or go.
    Examples: probabilities 0.70, 0.15, 0.10, 0.05 keep 2 tokens at p = 0.8 and 3 at p = 0.95; 0.6, 0.3, 0.1
    keep 2 at p = 0.9. Libraries differ on such exact ties (Hugging Face's TopPLogitsWarper keeps 3 of 0.59, 0.28,
    0.13 at p = 0.87); this exercise fixes the mathematical answer (2).

    Args:
        logits: [..., V] float tensor.
        p: in (0, 1].
    Returns:
        [..., V] tensor: the same logits, the removed ones set to -inf.
    Raises:
        ValueError: p outside (0, 1].
    """
    raise NotImplementedError("TODO: top_p_filter: keep the most probable tokens until their mass reaches p")


def filtered_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    """The distribution to sample from: temperature, then top-k, then top-p, then softmax.

    Args:
        logits: [..., V] float tensor.
        temperature: > 0.
        top_k: None (no top-k filter) or >= 1.
        top_p: None (no top-p filter) or in (0, 1].
    Returns:
        [..., V] float tensor (float32 or wider) of probabilities: each row sums to 1 and removed tokens have
        probability exactly 0.
    Raises:
        ValueError: a bad temperature, top_k or top_p (the message names it).
    """
    raise NotImplementedError("TODO: filtered_probs: chain temperature, top-k and top-p, then softmax")


def sample(probs: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """Draw one token per row by the exponential race, deterministically given the noise.

    Args:
        probs: [..., V] probabilities (each row sums to 1; some may be exactly 0).
        noise: [..., V] i.i.d. Exp(1) draws (all > 0), one per token.
    Returns:
        [...] LongTensor: per row, the index of the largest probs / noise. A token with probability 0 is never
        chosen.
    """
    raise NotImplementedError("TODO: sample: pick the token that wins the race probs / noise")


def greedy(logits: torch.Tensor) -> torch.Tensor:
    """Greedy decoding: the most likely token of each row.

    Args:
        logits: [..., V] float tensor.
    Returns:
        [...] LongTensor: per row, the index of the largest logit, the lowest such index on ties.
    """
    raise NotImplementedError("TODO: greedy: the index of each row's largest logit")


def empirical_distribution(probs: torch.Tensor, num_samples: int, generator: torch.Generator) -> torch.Tensor:
    """Sample many times and count: the frequencies that estimate a distribution.

    One draw says almost nothing about a sampling strategy (a strategy that says the right token 80% of the time
    misses it one draw in five); the frequencies of many draws approach the probabilities, with a standard error
    of sqrt(p * (1 - p) / num_samples) per token.

    Args:
        probs: [..., V] probabilities (each row sums to 1; some may be exactly 0).
        num_samples: >= 1 draws per row. The draws are independent: a token may come up any number of times.
        generator: the torch.Generator every random number comes from (the same seed gives the same result).
    Returns:
        [..., V] float64 tensor: per row, how often each token was drawn divided by num_samples (rows sum to 1).
    Raises:
        ValueError: num_samples < 1.
    """
    raise NotImplementedError("TODO: empirical_distribution: draw num_samples tokens per row and count them")
