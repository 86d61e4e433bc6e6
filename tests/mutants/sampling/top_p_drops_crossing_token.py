"""Bug: keeps a token only while the cumulative mass including it stays below p, dropping the token that crosses p."""


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p}")
    probs = torch.softmax(logits.to(_prob_dtype(logits)), dim=-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    drop_sorted = sorted_probs.cumsum(dim=-1) >= p * (1 - BOUNDARY_RTOL)
    drop_sorted[..., 0] = False  # the most probable token always stays
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
