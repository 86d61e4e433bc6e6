"""What each speculative misconception produces, so that a check names a bug only when the output shows it.

For `verify`, a misconception is expressed as a change to the reference's inputs (uniforms that force its
acceptance decisions) or to its last token, never as a second implementation. For `speculative_generate`,
`first_tokens_law` is the exact law of the first k tokens when every iteration follows a misconception's
acceptance and rejection rules: a small Markov chain over (prefix, draft position), summed in closed form.
"""
import torch

from grader.checks.speculative.models import V, probs_after, table

INF = float("inf")


def _forced(ref, draft_tokens, q, p, accept: torch.Tensor, noise) -> list[int]:
    """The reference's answer when its acceptance decisions are `accept`: u = -inf accepts (q(x) > 0), u = inf rejects.

    (u = 0 would not do: the strict test u < p(x) / q(x) rejects a token the target forbids even at u = 0.)
    """
    u = torch.where(accept, torch.full((), -INF), torch.full((), INF)).to(torch.float64)
    return ref.verify(draft_tokens, q, p, u, noise)


def verify_predictions(ref, draft_tokens, q, p, u, noise) -> list[tuple[str, list[int]]]:
    """[(misconception id, what verify returns under it)] for the ids that change the answer on these inputs.

    An id may appear twice (two forms of the same mistake); an answer that two ids share is left out, as is one
    that the non-strict acceptance test gives.
    """
    right = ref.verify(draft_tokens, q, p, u, noise)
    g, n = len(draft_tokens), len(right) - 1
    x = torch.tensor(draft_tokens, dtype=torch.long)
    q_x = q[torch.arange(g), x].to(torch.float64)                      # q_x, p_x: [g]
    p_x = p[torch.arange(g), x].to(torch.float64)
    u = u.to(torch.float64)
    predictions = [
        # accepted by a fixed rule, ignoring u: when the target likes x at least as much, or x is its argmax
        ("deterministic_acceptance", _forced(ref, draft_tokens, q, p, p_x >= q_x, noise)),
        ("deterministic_acceptance", _forced(ref, draft_tokens, q, p, x == p[:g].argmax(-1), noise)),
        # u compared with q(x) / p(x); p(x) = 0 gives inf, which every u passes
        ("ratio_inverted", _forced(ref, draft_tokens, q, p, u < q_x / p_x, noise)),
    ]
    if n < g:
        # the replacement drawn from p_i itself: the reference's bonus token for an empty draft with p = p_i
        resampled = ref.verify([], q[:0], p[n:n + 1], u[:0], noise)
        predictions.append(("resample_from_target", right[:-1] + resampled))
    else:
        predictions.append(("no_bonus_token", right[:-1]))
    # an answer that two different misconceptions would give names neither; nor does one that the non-strict test
    # u <= p(x) / q(x) gives (no id: it differs only where p(x) = 0 and u = 0, where it keeps a forbidden token)
    owners = {tuple(_forced(ref, draft_tokens, q, p, (q_x > 0) & (u <= p_x / q_x), noise)): {None}}
    for mid, tokens in predictions:
        owners.setdefault(tuple(tokens), set()).add(mid)
    return [(mid, tokens) for mid, tokens in predictions if tokens != right and len(owners[tuple(tokens)]) == 1]


def _acceptance(misconception: str | None, p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """P(draft token x is accepted) for every x, under the misconception's rule (None: min(1, p/q))."""
    if misconception == "deterministic_acceptance":
        return ((q > 0) & (p >= q)).to(torch.float64)
    if misconception == "ratio_inverted":
        return torch.where(q > 0, (q / p).clamp(max=1).nan_to_num(1.0), torch.zeros_like(q))
    return torch.where(q > 0, (p / q).clamp(max=1), torch.zeros_like(q))


def _replacement(misconception: str | None, p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """The distribution of the token added at a rejection, under the misconception's rule."""
    if misconception == "resample_from_target":
        return p
    residual = (p - q).clamp(min=0)
    return residual / residual.sum() if residual.sum() > 0 else p


def first_tokens_law(pair: str, prompt: list, k: int, gamma: int, misconception: str | None = None) -> torch.Tensor:
    """P(first k new tokens = t_1..t_k) for every outcome, flattened as base-V digits: [V**k] float64.

    An iteration at draft position d < gamma emits x with probability q(x)·a(x) and moves on to d + 1, or
    rejects (probability 1 - sum q·a) and emits a replacement, starting a new iteration; at d = gamma it emits
    the bonus token from p. With the correct rules (misconception None) every step emits t with probability
    q(t) min(1, p(t)/q(t)) + (1 - sum min(p, q)) max(0, p(t) - q(t)) / sum max(0, p - q) = p(t), so this is the
    target's own law (the correctness proof of Leviathan et al., 2023). It assumes full gamma drafts until the
    k-th token, which holds whenever max_new_tokens >= k + gamma.
    """
    target, draft = table(pair, "target"), table(pair, "draft")

    def law(prefix: list, depth: int, left: int) -> torch.Tensor:
        """The law of the next `left` tokens after `prefix`, `depth` drafts into the current iteration."""
        if left == 0:
            return torch.ones(1, dtype=torch.float64)
        p = probs_after(target, prefix)                                  # p: [V]
        if depth == gamma:
            return torch.cat([p[t] * law(prefix + [t], 0, left - 1) for t in range(V)])
        q = probs_after(draft, prefix)                                   # q: [V]
        stay = q * _acceptance(misconception, p, q)                      # emitted as an accepted draft
        rejected = (1 - stay.sum()) * _replacement(misconception, p, q)  # emitted as the replacement
        return torch.cat([stay[t] * law(prefix + [t], depth + 1, left - 1)
                          + rejected[t] * law(prefix + [t], 0, left - 1) for t in range(V)])

    out = law(list(prompt), 0, k)
    assert out.shape == (V ** k,) and abs(float(out.sum()) - 1) < 1e-12
    return out


def outcome(index: int, k: int) -> list[int]:
    """The k tokens a flattened outcome index stands for."""
    return [(index // V ** (k - 1 - j)) % V for j in range(k)]
