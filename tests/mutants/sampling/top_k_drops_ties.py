"""Bug: keeps exactly the k indices torch.topk returns, dropping logits tied with the k-th largest."""


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    if not k >= 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k >= logits.shape[-1]:
        return logits
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, torch.topk(logits, k, dim=-1).indices, True)
    return logits.masked_fill(~keep, float("-inf"))
