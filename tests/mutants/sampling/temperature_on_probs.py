"""Bug: divides the probabilities by the temperature after the softmax, so renormalising cancels it."""


def filtered_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    logits = logits.to(_prob_dtype(logits))
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = torch.softmax(logits, dim=-1) / temperature
    return probs / probs.sum(dim=-1, keepdim=True)
