"""Speculative decoding: a cheap draft model guesses a few tokens, the expensive target checks them in one pass.

A model has two methods:
  next_probs(tokens) -> Tensor[V]      the next-token distribution after the prefix `tokens` (a list of ints);
  score(tokens, n)   -> Tensor[n, V]   the next-token distributions after each of the last n prefixes of
                                       `tokens`, in one forward pass: row j follows tokens[:len(tokens) - n + 1 + j].
The models count their calls, so the checks can see how many forward passes you spend.
References: Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative Decoding" (2023);
Chen et al., "Accelerating Large Language Model Decoding with Speculative Sampling" (2023). Leviathan et al.'s
Algorithm 1 accepts a draft token when u <= p/q; this exercise follows Chen et al.'s strict u < p/q. The two differ
only when u lands exactly on p/q: a token the target forbids (p = 0) drawn with u = 0 is rejected here.
"""
import torch


def verify(draft_tokens, q: torch.Tensor, p: torch.Tensor, u: torch.Tensor, noise: torch.Tensor) -> list[int]:
    """Decide which draft tokens to keep and which one token the target adds.

    Args:
        draft_tokens: the g draft tokens x_1..x_g (list of ints, g >= 0).
        q: [g, V] the draft model's distribution at each draft position (x_i was drawn from q[i-1]).
        p: [g + 1, V] the target's distribution at the same positions, plus one row after the last draft.
        u: [g] uniforms in [0, 1), one per draft token.
        noise: [V] i.i.d. Exp(1) draws; sample from weights w as argmax(w / noise).
    Returns:
        list of ints: the accepted draft tokens (a prefix of draft_tokens) followed by exactly one more token.
        Accept x_i iff q_i(x_i) > 0 and u_i < p_i(x_i) / q_i(x_i) (strictly less: a token the target gives
        probability 0 is rejected even at u_i = 0); stop at the first rejection and add a token drawn from
        max(0, p_i - q_i) (from p_i when that is all zero); if every draft is accepted, add a bonus token drawn
        from the last row of p. So g drafts yield between 1 and g + 1 tokens.
    Raises:
        ValueError naming the argument when a shape does not fit g and V.
    """
    raise NotImplementedError("TODO: implement verify (accepted draft prefix plus one residual or bonus token)")


def speculative_generate(target, draft, prompt, max_new_tokens: int, gamma: int, generator: torch.Generator):
    """Generate tokens with speculative sampling; the result must be distributed exactly as the target's samples.

    Each iteration drafts up to gamma tokens with `draft`, scores them with exactly one `target.score` call,
    and keeps what `verify` returns.
    Args:
        target, draft: models with next_probs / score (see the module docstring).
        prompt: list of token ids to continue.
        max_new_tokens: how many new tokens to return.
        gamma: the most draft tokens per iteration (>= 1).
        generator: the torch.Generator that every random draw must come from (and nothing else).
    Returns:
        (tokens, stats): the max_new_tokens new tokens only (list of ints), and a dict of ints with keys
        "iterations", "proposed" (draft tokens drafted), "accepted" (draft tokens kept), "target_calls" and
        "draft_calls" (forward passes of each model).
    Raises:
        ValueError naming the argument: max_new_tokens < 0, gamma < 1.
    """
    raise NotImplementedError("TODO: implement speculative_generate (draft, score once, verify, repeat)")


def acceptance_rate(p: torch.Tensor, q: torch.Tensor) -> float:
    """The probability that one token drafted from q is accepted by verify against the target's p.

    Args:
        p: [V] the target's next-token distribution.
        q: [V] the draft's next-token distribution at the same position.
    Returns:
        float in [0, 1] (Leviathan et al.'s alpha at this position): 1 when q equals p, 0 when they share no token.
    Raises:
        ValueError naming the argument when p is not one row [V] or q does not have p's shape.
    """
    raise NotImplementedError("TODO: implement acceptance_rate (the chance that verify keeps a draft from q)")


def expected_tokens_per_iteration(alpha: float, gamma: int) -> float:
    """Mean number of tokens one iteration yields when each draft token is accepted with probability alpha.

    The formula assumes acceptances are i.i.d.: every draft token is accepted with the same alpha, independently
    of the others (Leviathan et al. assume it too). Real acceptance varies by position and comes in runs, so for
    real models the result is an approximation.

    Args:
        alpha: acceptance rate in [0, 1].
        gamma: draft tokens per iteration (>= 0).
    Returns:
        float (Leviathan et al., 2023); gamma + 1 at alpha = 1.
    Raises:
        ValueError naming the argument: alpha outside [0, 1], gamma < 0.
    """
    raise NotImplementedError("TODO: implement expected_tokens_per_iteration (Leviathan et al., 2023)")


def expected_speedup(alpha: float, gamma: int, c: float) -> float:
    """Expected walltime improvement of speculative decoding over decoding with the target alone.

    Args:
        alpha: acceptance rate in [0, 1].
        gamma: draft tokens per iteration (>= 0).
        c: cost of one draft forward pass relative to one target forward pass (>= 0).
    Returns:
        float: expected tokens per iteration divided by the cost of an iteration in target passes.
    Raises:
        ValueError naming the argument: alpha outside [0, 1], gamma < 0, c < 0.
    """
    raise NotImplementedError("TODO: implement expected_speedup (tokens per iteration over iteration cost)")
