"""Bug: zeroes the filtered tokens of the full softmax without renormalising, so rows sum to less than 1."""


def filtered_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    scaled = apply_temperature(logits.to(_prob_dtype(logits)), temperature)
    kept = scaled
    if top_k is not None:
        kept = top_k_filter(kept, top_k)
    if top_p is not None:
        kept = top_p_filter(kept, top_p)
    return torch.softmax(scaled, dim=-1) * torch.isfinite(kept)
