"""Bug: reads p as a fraction of the vocabulary and keeps the ceil(p * V) most probable tokens."""
import math


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p}")
    keep = math.ceil(p * logits.shape[-1])
    kth = torch.topk(logits, keep, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
