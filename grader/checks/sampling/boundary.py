"""Top-p cases whose boundary mass is an exact decimal: judged exactly, and chosen so that float32 sums fail.

The contract wants float64 sums for float64 inputs: a float64 sum of a few decimals lands within ~1e-16 of the
exact value, well inside the 1e-9 allowance, while a float32 sum lands up to ~1e-7 off. Where it lands below p,
a float32 implementation keeps one token too many. Worked in float32 (tests/topics/test_sampling.py checks each):
- 0.70/0.15/0.10/0.05 at p = 0.95: the mass above the fourth token is 0.9499999881, float32's nearest value to
  0.95 but below 0.95: compared with p in float64 it keeps 4 tokens.
- 0.6/0.3/0.1 at p = 0.9: the mass above the third token taken as cumsum - probability is 1.0 - 0.1 =
  0.8999999762, below 0.9: it keeps 3 tokens.
- 0.59/0.28/0.13 at p = 0.87: the float32 softmax gives 0.5899999738 and 0.2799999714, whose sum 0.8699999452
  is below 0.87 and below float32(0.87) = 0.8700000048. (The float32 sum of the decimals themselves, 0.59 + 0.28,
  is 0.8700000048 and does not fall short: the shortfall comes from the softmax.)
- 0.77/0.22/0.01 at p = 0.99: the float32 softmax's first two sum to 0.9899999499, below 0.99 and below
  float32(0.99) = 0.9900000095.
The last two fall short however the float32 sum is taken (inclusive or exclusive cumulative sum, compared in
float32 or float64, or from the tail against 1 - p): `float32_falls_short` is that test, for the hidden cases.
"""
import torch


def decimal_logits(probs: list) -> torch.Tensor:
    """float64 logits whose softmax is the given exact decimal probabilities."""
    return torch.tensor(probs, dtype=torch.float64).log()


def float32_falls_short(parts: list[int], scale: int, kept: int) -> bool:
    """Whether every float32 way of summing the `kept` largest of parts / scale keeps one more token.

    `parts` are distinct positive integers summing to `scale`, most probable first; p is their first `kept` parts
    over `scale`. Checked: the exclusive mass cumsum - probability and the inclusive cumsum, each below both p and
    float32(p); and the tail mass (ascending cumsum up to token `kept`) above both 1 - p and float32(1 - p).
    """
    p = sum(parts[:kept]) / scale
    probs = torch.softmax(decimal_logits([q / scale for q in parts]).float(), dim=-1)  # [V] float32, descending
    cumsum = probs.cumsum(-1)
    masses = (float(cumsum[kept] - probs[kept]), float(cumsum[kept - 1]))
    tail = float(probs.flip(-1).cumsum(-1)[len(parts) - 1 - kept])  # mass of token `kept` and every token below it
    p32, rest32 = float(torch.tensor(p, dtype=torch.float32)), float(torch.tensor(1 - p, dtype=torch.float32))
    return max(masses) < min(p, p32) and tail > max(1 - p, rest32)
