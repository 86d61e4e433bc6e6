"""Hidden oracle for the speculative topic: speculative sampling (Leviathan et al., 2023; Chen et al., 2023).

Written for clarity in float64 with explicit loops, one draft position at a time, unlike the vectorised model
answer. `verify` is the exact, deterministic part of the algorithm (the randomness arrives as arguments);
`speculative_generate` drives draft and target models; `acceptance_rate` is the chance that one draft survives;
the two formulas are Leviathan et al.'s expected tokens per iteration and walltime improvement factor, the first
summed term by term rather than in closed form.
"""
import torch


def _race(weights: torch.Tensor, noise: torch.Tensor) -> int:
    """The exponential race: the index maximising weights[v] / noise[v] (a draw from weights / weights.sum())."""
    best, best_score = 0, -1.0
    for v in range(weights.shape[0]):
        score = float(weights[v]) / float(noise[v])
        if score > best_score:
            best, best_score = v, score
    return best


def _shape_error(name: str, tensor: torch.Tensor, expected: tuple) -> ValueError:
    """The ValueError for an argument whose shape does not fit, naming it."""
    return ValueError(f"{name} must have shape {list(expected)}, got {list(tensor.shape)}")


def verify(draft_tokens, q: torch.Tensor, p: torch.Tensor, u: torch.Tensor, noise: torch.Tensor) -> list[int]:
    """Accept the longest prefix of draft tokens the target agrees with, then add one residual or bonus token."""
    tokens = [int(t) for t in draft_tokens]
    g = len(tokens)
    p = torch.as_tensor(p, dtype=torch.float64)
    vocab = p.shape[-1]
    q = torch.as_tensor(q, dtype=torch.float64)
    u = torch.as_tensor(u, dtype=torch.float64)
    noise = torch.as_tensor(noise, dtype=torch.float64)
    if tuple(q.shape) != (g, vocab):
        raise _shape_error("q", q, (g, vocab))
    if tuple(p.shape) != (g + 1, vocab):
        raise _shape_error("p", p, (g + 1, vocab))
    if tuple(u.shape) != (g,):
        raise _shape_error("u", u, (g,))
    if tuple(noise.shape) != (vocab,):
        raise _shape_error("noise", noise, (vocab,))
    if any(t < 0 or t >= vocab for t in tokens):
        raise ValueError(f"draft_tokens must lie in [0, {vocab}), got {tokens}")

    out = []
    for i, x in enumerate(tokens):
        q_x, p_x = float(q[i, x]), float(p[i, x])
        if q_x > 0 and float(u[i]) < p_x / q_x:     # strict: p(x) = 0 rejects even at u = 0
            out.append(x)
            continue
        residual = torch.tensor([max(0.0, float(p[i, v]) - float(q[i, v])) for v in range(vocab)],
                                dtype=torch.float64)
        if float(residual.sum()) == 0.0:
            residual = p[i]
        out.append(_race(residual, noise))
        return out
    out.append(_race(p[g], noise))
    return out


def _sample(probs: torch.Tensor, generator: torch.Generator) -> int:
    """One draw from `probs` by inverting its cumulative distribution at a uniform from `generator`."""
    r = float(torch.rand((), generator=generator, dtype=torch.float64)) * float(probs.sum())
    total, last = 0.0, 0
    for v in range(probs.shape[0]):
        if probs[v] > 0:
            total += float(probs[v])
            last = v
            if r < total:
                return v
    return last


def speculative_generate(target, draft, prompt, max_new_tokens: int, gamma: int, generator: torch.Generator):
    """Generate exactly max_new_tokens tokens: draft up to gamma, verify them with one target.score call, repeat."""
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    context = [int(t) for t in prompt]
    new: list[int] = []
    stats = {"iterations": 0, "proposed": 0, "accepted": 0, "target_calls": 0, "draft_calls": 0}
    while len(new) < max_new_tokens:
        # Never draft past the end: the iteration then yields at most the tokens still wanted.
        g = min(gamma, max_new_tokens - len(new) - 1)
        drafted, q_rows = [], []
        for _ in range(g):
            q_row = draft.next_probs(context + new + drafted).to(torch.float64)
            stats["draft_calls"] += 1
            q_rows.append(q_row)
            drafted.append(_sample(q_row, generator))
        p = target.score(context + new + drafted, g + 1).to(torch.float64)
        stats["target_calls"] += 1
        vocab = p.shape[-1]
        q = torch.stack(q_rows) if q_rows else torch.zeros(0, vocab, dtype=torch.float64)
        u = torch.rand(g, generator=generator, dtype=torch.float64)
        noise = torch.empty(vocab, dtype=torch.float64).exponential_(generator=generator)
        produced = verify(drafted, q, p, u, noise)
        stats["iterations"] += 1
        stats["proposed"] += g
        stats["accepted"] += len(produced) - 1
        new.extend(produced)
    assert len(new) == max_new_tokens
    return new, stats


def acceptance_rate(p: torch.Tensor, q: torch.Tensor) -> float:
    """Leviathan et al.'s alpha for one position: P(accept) = sum_x q(x) min(1, p(x) / q(x)) = sum_x min(p(x), q(x))."""
    if p.dim() != 1:
        raise ValueError(f"p must have shape [V], got {list(p.shape)}")
    if tuple(q.shape) != tuple(p.shape):
        raise ValueError(f"q must have shape {list(p.shape)} like p, got {list(q.shape)}")
    total = 0.0
    for v in range(p.shape[0]):
        total += min(float(p[v]), float(q[v]))
    return total


def _check_formula_args(alpha: float, gamma: int) -> None:
    """Reject an acceptance rate outside [0, 1] or a negative draft length, naming the argument."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")


def expected_tokens_per_iteration(alpha: float, gamma: int) -> float:
    """E[tokens per iteration] = 1 + alpha + ... + alpha**gamma: draft i survives with probability alpha**i."""
    _check_formula_args(alpha, gamma)
    return float(sum(alpha ** i for i in range(gamma + 1)))


def expected_speedup(alpha: float, gamma: int, c: float) -> float:
    """Walltime improvement: tokens per iteration over the cost of one iteration (gamma drafts at c, one target)."""
    _check_formula_args(alpha, gamma)
    if c < 0:
        raise ValueError(f"c must be >= 0, got {c}")
    return expected_tokens_per_iteration(alpha, gamma) / (gamma * c + 1)
