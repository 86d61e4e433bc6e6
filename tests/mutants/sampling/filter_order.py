"""Bug: applies top-p before top-k, so the nucleus is measured on the distribution before top-k renormalises it."""


def filtered_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    scaled = apply_temperature(logits.to(_prob_dtype(logits)), temperature)
    if top_p is not None:
        scaled = top_p_filter(scaled, top_p)
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    return torch.softmax(scaled, dim=-1)
