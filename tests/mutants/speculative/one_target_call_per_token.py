"""Bug: computes the target's distributions with one target.next_probs call per draft position, not one score call."""


def speculative_generate(target, draft, prompt, max_new_tokens, gamma, generator):
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    tokens = [int(t) for t in prompt]
    new = []
    stats = dict(iterations=0, proposed=0, accepted=0, target_calls=0, draft_calls=0)
    while len(new) < max_new_tokens:
        g = min(gamma, max_new_tokens - len(new) - 1)
        drafted, q_rows = [], []
        for _ in range(g):
            q_i = draft.next_probs(tokens + new + drafted)
            drafted.append(int(torch.multinomial(q_i, 1, generator=generator)))
            q_rows.append(q_i)
        p = torch.stack([target.next_probs(tokens + new + drafted[:i]) for i in range(g + 1)])
        q = torch.stack(q_rows) if q_rows else p.new_zeros(0, p.shape[-1])
        u = torch.rand(g, generator=generator, dtype=torch.float64)
        noise = torch.empty(p.shape[-1], dtype=torch.float64).exponential_(generator=generator)
        out = verify(drafted, q, p, u, noise)
        new += out
        stats["iterations"] += 1
        stats["target_calls"] += g + 1
        stats["draft_calls"] += g
        stats["proposed"] += g
        stats["accepted"] += len(out) - 1
    return new, stats
