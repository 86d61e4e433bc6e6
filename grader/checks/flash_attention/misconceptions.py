"""What each flash_attention misconception returns for a case, so a failing check can name the one it shows.

Models of wrong submissions, computed in float64 from the reference's scores; a check reports an id only when
the submission's output is close to that model's output.
"""
import math

import torch


def no_rescale(ref, q, k, v, causal: bool, block_k: int, rescale_sum: bool = False, rescale_out: bool = False):
    """(o, lse) of an online softmax that, when a key tile raises the running max, does not rescale the sum
    (unless `rescale_sum`) and the output (unless `rescale_out`) accumulated under the old max."""
    scores = ref.scaled_scores(q, k, causal)  # [B, H, Tq, Tk]
    v = v.double()
    m = torch.full(scores.shape[:3], -math.inf, dtype=torch.float64)
    l = torch.zeros_like(m)
    acc = torch.zeros(*scores.shape[:3], v.shape[-1], dtype=torch.float64)
    for k0 in range(0, scores.shape[-1], block_k):
        tile = scores[..., k0:k0 + block_k]
        m_new = torch.maximum(m, tile.amax(dim=-1))  # finite from the first tile on: key 0 is always visible
        alpha = torch.exp(m - m_new)
        p = torch.exp(tile - m_new[..., None])
        l = (alpha * l if rescale_sum else l) + p.sum(dim=-1)
        acc = (alpha[..., None] * acc if rescale_out else acc) + p @ v[:, :, k0:k0 + block_k]
        m = m_new
    return acc / l[..., None], m + torch.log(l)


def top_left_causal(ref, q, k, v):
    """(o, lse) with a top-left aligned mask (query i sees keys j <= i): the first Tq keys, causally."""
    tq = q.shape[2]
    return ref.attention(q, k[:, :, :tq], v[:, :, :tq], causal=True)


def lse_missing_max(ref, q, k, causal: bool, lse: torch.Tensor) -> torch.Tensor:
    """log(sum(exp(s - max))) without the max added back: the correct lse minus each row's max score."""
    return lse - ref.scaled_scores(q, k, causal).amax(dim=-1)


def predictions(ref, q, k, v, causal: bool, block_k: int | None, lse: torch.Tensor) -> list:
    """[(misconception id, {"o": ..., "lse": ...})] for the misconceptions this case can reveal, in the order
    a failure is matched against them (an id may come with several variants of its mistake)."""
    wrong = []
    if block_k is not None and block_k < k.shape[2]:
        for rescale_sum, rescale_out in ((False, False), (True, False), (False, True)):
            o_bad, lse_bad = no_rescale(ref, q, k, v, causal, block_k, rescale_sum, rescale_out)
            wrong.append(("no_rescale", {"o": o_bad, "lse": lse_bad}))
    if causal and q.shape[2] < k.shape[2]:
        o_bad, lse_bad = top_left_causal(ref, q, k, v)
        wrong.append(("causal_alignment", {"o": o_bad, "lse": lse_bad}))
    wrong.append(("lse_without_max", {"lse": lse_missing_max(ref, q, k, causal, lse)}))
    return wrong
