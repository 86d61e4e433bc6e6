"""Bug: draws with torch.multinomial's default, without replacement, so each token is drawn at most once per row."""


def empirical_distribution(probs: torch.Tensor, num_samples: int, generator: torch.Generator) -> torch.Tensor:
    if not num_samples >= 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    rows = probs.detach().to(torch.float64).reshape(-1, probs.shape[-1])
    draws = torch.multinomial(rows, num_samples, generator=generator)
    counts = torch.zeros_like(rows).scatter_add_(-1, draws, torch.ones_like(draws, dtype=torch.float64))
    return (counts / num_samples).reshape(probs.shape)
