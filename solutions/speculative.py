"""Speculative decoding: a cheap draft model proposes tokens, the target verifies them all in one pass (model answer).

Speculative sampling (Leviathan et al., 2023; Chen et al., 2023) keeps the target's output distribution exactly:
draft token x is accepted with probability min(1, p(x) / q(x)); at the first rejection the replacement comes
from the residual max(0, p - q), renormalised; when every draft survives, the target's last distribution gives
one bonus token for free.
"""
import torch


def _draft_tensor(draft_tokens, q, p, u, noise) -> torch.Tensor:
    """The draft tokens as a LongTensor, after checking every shape against g = len(draft_tokens) and V."""
    x = torch.as_tensor(draft_tokens, dtype=torch.long).reshape(-1)    # x: [g]
    g, vocab = x.shape[0], p.shape[-1]
    if q.shape != (g, vocab):
        raise ValueError(f"q must have shape [{g}, {vocab}], got {list(q.shape)}")
    if p.shape != (g + 1, vocab):
        raise ValueError(f"p must have shape [{g + 1}, {vocab}], got {list(p.shape)}")
    if u.shape != (g,):
        raise ValueError(f"u must have shape [{g}], got {list(u.shape)}")
    if noise.shape != (vocab,):
        raise ValueError(f"noise must have shape [{vocab}], got {list(noise.shape)}")
    if g and not bool(((x >= 0) & (x < vocab)).all()):
        raise ValueError(f"draft_tokens must lie in [0, {vocab}), got {x.tolist()}")
    return x


def _accepted_prefix(x: torch.Tensor, q: torch.Tensor, p: torch.Tensor, u: torch.Tensor) -> int:
    """How many draft tokens survive: x_i needs q_i(x_i) > 0 and u_i < p_i(x_i) / q_i(x_i), as do all before it."""
    rows = torch.arange(x.shape[0])
    q_x, p_x = q[rows, x].double(), p[rows, x].double()                # q_x, p_x: [g]
    ratio = torch.where(q_x > 0, p_x / q_x, torch.zeros_like(p_x))      # q(x) = 0 can never be accepted
    accept = (q_x > 0) & (u.double() < ratio)                           # strict: p(x) = 0 rejects even at u = 0
    return int(accept.long().cumprod(0).sum())


def _residual(p_i: torch.Tensor, q_i: torch.Tensor) -> torch.Tensor:
    """What the target wants and the draft under-proposed: max(0, p - q), or p itself when that is all zero."""
    r = (p_i.double() - q_i.double()).clamp(min=0)                      # r: [V]
    return r if bool(r.any()) else p_i.double()


def _race(weights: torch.Tensor, noise: torch.Tensor) -> int:
    """The exponential race argmax(w / noise): a draw from w / w.sum(), no normalisation needed."""
    return int(torch.argmax(weights.double() / noise.double()))


def verify(draft_tokens, q: torch.Tensor, p: torch.Tensor, u: torch.Tensor, noise: torch.Tensor) -> list[int]:
    """The accepted prefix of the draft tokens plus one token: the residual at the first rejection, else the bonus."""
    x = _draft_tensor(draft_tokens, q, p, u, noise)                     # x: [g]
    g = x.shape[0]
    n = _accepted_prefix(x, q, p, u)
    assert 0 <= n <= g
    last = _race(p[g], noise) if n == g else _race(_residual(p[n], q[n]), noise)   # bonus, or replacement
    return x[:n].tolist() + [last]


def speculative_generate(target, draft, prompt, max_new_tokens: int, gamma: int, generator: torch.Generator):
    """Exactly max_new_tokens tokens distributed as the target's, with one target.score call per iteration."""
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    tokens = [int(t) for t in prompt]
    new: list[int] = []
    stats = dict(iterations=0, proposed=0, accepted=0, target_calls=0, draft_calls=0)
    while len(new) < max_new_tokens:
        g = min(gamma, max_new_tokens - len(new) - 1)                   # never draft past the last wanted token
        drafted, q_rows = [], []
        for _ in range(g):
            q_i = draft.next_probs(tokens + new + drafted)              # q_i: [V]
            drafted.append(int(torch.multinomial(q_i, 1, generator=generator)))
            q_rows.append(q_i)
        p = target.score(tokens + new + drafted, g + 1)                 # p: [g+1, V], one target forward pass
        q = torch.stack(q_rows) if q_rows else p.new_zeros(0, p.shape[-1])   # q: [g, V]
        u = torch.rand(g, generator=generator, dtype=torch.float64)     # u: [g]
        noise = torch.empty(p.shape[-1], dtype=torch.float64).exponential_(generator=generator)  # noise: [V]
        out = verify(drafted, q, p, u, noise)
        assert 1 <= len(out) <= g + 1, "verify yields the accepted drafts plus exactly one token"
        new += out
        stats["iterations"] += 1
        stats["target_calls"] += 1
        stats["draft_calls"] += g
        stats["proposed"] += g
        stats["accepted"] += len(out) - 1
    assert len(new) == max_new_tokens and stats["accepted"] + stats["iterations"] == max_new_tokens
    return new, stats


def acceptance_rate(p: torch.Tensor, q: torch.Tensor) -> float:
    """sum_v min(p(v), q(v)): the chance that one token drafted from q survives verification against p."""
    if p.dim() != 1:
        raise ValueError(f"p must be one distribution [V], got shape {list(p.shape)}")
    if q.shape != p.shape:
        raise ValueError(f"q must have the shape of p {list(p.shape)}, got {list(q.shape)}")
    return float(torch.minimum(p.double(), q.double()).sum())


def expected_tokens_per_iteration(alpha: float, gamma: int) -> float:
    """(1 - alpha**(gamma+1)) / (1 - alpha): the mean tokens one iteration yields (Leviathan et al., 2023)."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    if alpha == 1:
        return float(gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def expected_speedup(alpha: float, gamma: int, c: float) -> float:
    """Walltime improvement over plain decoding when one draft step costs c target steps (Leviathan et al.)."""
    if c < 0:
        raise ValueError(f"c must be >= 0, got {c}")
    return expected_tokens_per_iteration(alpha, gamma) / (gamma * c + 1)
