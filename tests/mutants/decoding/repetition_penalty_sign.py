"""Bug: every seen token's logit is divided by the penalty, whatever its sign."""


def apply_repetition_penalty(logits, seen_tokens, penalty):
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty}")
    batch = logits.reshape(-1, logits.shape[-1]).clone()
    per_row = [seen_tokens] if logits.dim() == 1 else list(seen_tokens)
    for row, seen in zip(batch, per_row):
        ids = torch.as_tensor(seen, dtype=torch.long).flatten().unique()
        row[ids] = row[ids] / penalty
    return batch.reshape(logits.shape)
