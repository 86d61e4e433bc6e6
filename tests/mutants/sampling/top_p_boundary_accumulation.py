"""Bug: compares the float sum of the mass above a token with p exactly, so 0.6 + 0.3 falls short of 0.9."""


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p}")
    probs = torch.softmax(logits.to(_prob_dtype(logits)), dim=-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    drop_sorted = sorted_probs.cumsum(dim=-1) - sorted_probs >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
