"""What each sampling misconception does to an answer, so that a check names a bug only when the output shows it.

Top-p and top-k answers are judged row by row from the kept tokens; filtered_probs candidates are built from the
reference's own functions (live in hidden checks, at golden-generation time in public ones), combined the wrong way.
"""
import math
from itertools import accumulate

import torch

BOUNDARY_RTOL = 1e-9  # contract: a mass within 1e-9 (relative) of p counts as reaching p
ROUNDING = 1e-6  # how far float rounding can push an accumulated mass past p


def top_p_row_ids(probs: list[float], kept: list[bool], p: float) -> set[str]:
    """Top-p misconceptions whose answer for one row (float64 probabilities) is exactly the tokens `kept`."""
    n = sum(kept)
    kept_probs = [q for q, k in zip(probs, kept) if k]
    dropped_probs = [q for q, k in zip(probs, kept) if not k]
    if n == 0 or (dropped_probs and min(kept_probs) < max(dropped_probs)):
        return set()  # not the n most probable tokens: no known misconception keeps such a set
    ranked = sorted(probs, reverse=True)
    inclusive = list(accumulate(ranked))  # mass up to and including each ranked token
    above = [total - q for total, q in zip(inclusive, ranked)]  # mass ranked strictly above each token
    threshold = p * (1 - BOUNDARY_RTOL)
    ids = set()
    if n >= 2 and above[n - 2] < threshold <= above[n - 1] <= p * (1 + ROUNDING):
        ids.add("top_p_boundary_accumulation")  # the extra token's mass above lands on p, up to rounding
    crossing_dropped = {max(1, sum(c < threshold for c in inclusive)), max(1, sum(c <= p for c in inclusive))}
    if n in crossing_dropped:
        ids.add("top_p_drops_crossing_token")
    vocab = len(probs)
    if n in {math.floor(p * vocab), math.ceil(p * vocab), round(p * vocab)}:
        ids.add("top_p_keeps_fraction_of_vocab")
    return ids


def top_k_row_ids(kept: list[bool], expected: list[bool], k: int) -> set[str]:
    """Top-k misconceptions whose answer for one row is exactly the tokens `kept`."""
    if sum(kept) == k < sum(expected) and all(e for kept_one, e in zip(kept, expected) if kept_one):
        return {"top_k_drops_ties"}
    return set()


def filtered_probs_candidates(ref, logits: torch.Tensor, temperature: float, top_k: int | None,
                              top_p: float | None) -> list[tuple[str, torch.Tensor]]:
    """(id, probabilities) that filtered_probs returns under the temperature and filter-order misconceptions.

    (`no_renormalization` depends on which tokens the answer kept: filtered_probs_problem builds it.)
    """
    x = logits.to(torch.float64)
    scaled = ref.apply_temperature(x, temperature)
    softmax = ref.filtered_probs  # with default arguments: a plain float64 softmax
    wrong = []
    if temperature != 1.0:
        ignored = ref.filtered_probs(x, 1.0, top_k, top_p)  # probs / T, renormalised: T cancels
        wrong += [("temperature_on_probs", ignored), ("temperature_on_probs", ignored / temperature)]
    if top_k is not None and top_p is not None:
        wrong.append(("filter_order", softmax(ref.top_k_filter(ref.top_p_filter(scaled, top_p), top_k))))
    if (top_k is not None or top_p is not None) and temperature != 1.0:
        filtered = x
        if top_k is not None:
            filtered = ref.top_k_filter(filtered, top_k)
        if top_p is not None:
            filtered = ref.top_p_filter(filtered, top_p)
        wrong.append(("filter_order", softmax(ref.apply_temperature(filtered, temperature))))
    return wrong
