"""Toy target and draft models for the speculative topic, and drivers that run many generations in the child.

A toy model is a bigram table: its next-token distribution is the row of the last token (row V for the empty
prefix), so it is a deterministic function of the prefix. Every row is a multiple of 1/16, exact in float32 and
float64. The models count their calls; the target also logs the tokens of each `score` call. Tables come in
pairs (target, draft), built in the child with `sub.make(model, name, "target")`.
"""
import functools
import random

import numpy as np
import torch

V = 4

# Rows are indexed by the last token; the last row is the empty prefix. Entries are sixteenths.
MISMATCH_TARGET = [[8, 4, 4, 0], [0, 8, 4, 4], [4, 0, 8, 4], [4, 4, 0, 8], [4, 4, 4, 4]]
TABLES = {
    # An overconfident draft: it puts 14/16 on a token the target gives 8/16, so half of its drafts are
    # rejected and the replacement (never that token) matters; it gives no mass to tokens the target likes
    # (only the residual can produce them) and some to a token the target forbids (always to be rejected).
    # Rows 1-3 are row 0 shifted by one token each, so every prompt token makes an equally hard case.
    "mismatch": {
        "target": MISMATCH_TARGET,
        "draft": [[14, 0, 0, 2], [2, 14, 0, 0], [0, 2, 14, 0], [0, 0, 2, 14], [16, 0, 0, 0]],
    },
    # A perfect draft: every draft token must be accepted.
    "identical": {"target": MISMATCH_TARGET, "draft": MISMATCH_TARGET},
    # Draft = target with 4/16 of the mass moved from one token to another in every row, so that
    # sum_x min(p(x), q(x)) = 3/4 after every prefix: the acceptance rate alpha is 0.75 wherever it is measured.
    "alpha75": {
        "target": [[8, 4, 2, 2], [2, 8, 4, 2], [5, 3, 4, 4], [4, 2, 2, 8], [4, 4, 4, 4]],
        "draft": [[4, 8, 2, 2], [2, 4, 4, 6], [5, 3, 0, 8], [8, 2, 2, 4], [8, 0, 4, 4]],
    },
}


@functools.cache
def table(name: str, role: str) -> torch.Tensor:
    """The float64 probabilities of one toy model: [V + 1, V], row t after last token t, row V for no tokens.

    Cached and shared: models hand out clones of its rows, never the table itself.
    """
    rows = torch.tensor(TABLES[name][role], dtype=torch.float64) / 16    # rows: [V + 1, V]
    assert rows.shape == (V + 1, V) and torch.all(rows.sum(-1) == 1)
    return rows


def probs_after(rows: torch.Tensor, tokens) -> torch.Tensor:
    """The row of `rows` that follows the prefix `tokens`: [V]."""
    return rows[int(tokens[-1]) if len(tokens) else V]


class ToyModel:
    """A bigram language model with `next_probs`/`score` that counts its calls."""

    def __init__(self, rows: torch.Tensor):
        self.rows = rows
        self.next_probs_calls = 0
        self.score_calls = 0
        self.score_log: list[tuple] = []

    def _prefix(self, tokens) -> list[int]:
        """`tokens` (a list, tuple or LongTensor) as a list of ints in the vocabulary."""
        tokens = [int(t) for t in (tokens.tolist() if isinstance(tokens, torch.Tensor) else tokens)]
        if any(t < 0 or t >= V for t in tokens):
            raise ValueError(f"tokens must lie in [0, {V}), got {tokens}")
        return tokens

    def next_probs(self, tokens) -> torch.Tensor:
        """The next-token distribution after `tokens`: [V] float64."""
        self.next_probs_calls += 1
        return probs_after(self.rows, self._prefix(tokens)).clone()

    def score(self, tokens, n: int) -> torch.Tensor:
        """The next-token distributions after each of the last n prefixes of `tokens`: [n, V] float64."""
        self.score_calls += 1
        tokens = self._prefix(tokens)
        self.score_log.append(tuple(tokens))
        if not 1 <= int(n) <= len(tokens) + 1:
            raise ValueError(f"n must be in [1, len(tokens) + 1] = [1, {len(tokens) + 1}], got {n}")
        start = len(tokens) - int(n) + 1
        return torch.stack([probs_after(self.rows, tokens[:end]) for end in range(start, len(tokens) + 1)])

    @property
    def calls(self) -> int:
        """All forward passes of this model, single-position or scoring."""
        return self.next_probs_calls + self.score_calls


def model(name: str, role: str) -> ToyModel:
    """A fresh toy model (`role` "target" or "draft") of the table pair `name`."""
    return ToyModel(table(name, role))


def _token_list(tokens) -> list[int] | None:
    """The generated tokens as ints, or None when they are not a sequence of ints in the vocabulary."""
    try:
        values = tokens.tolist() if isinstance(tokens, torch.Tensor) else list(tokens)
        out = [int(t) for t in values]
    except (TypeError, ValueError):
        return None
    return out if all(0 <= t < V and t == v for t, v in zip(out, values)) else None


def first_tokens_counts(generate, pair: str, prompt: list, k: int, max_new_tokens: int, gamma: int, runs: int,
                        seed: int) -> dict:
    """Run `generate` `runs` times from one seeded generator; count each outcome of the first k new tokens.

    Returns {"counts": [V**k ints]} indexed by the tokens read as base-V digits, or {"bad": ...} describing the
    first output that is not max_new_tokens tokens of the vocabulary.
    """
    generator = torch.Generator().manual_seed(seed)
    target, draft = model(pair, "target"), model(pair, "draft")
    counts = [0] * V ** k
    for _ in range(runs):
        tokens, _ = generate(target, draft, list(prompt), max_new_tokens, gamma, generator)
        new = _token_list(tokens)
        if new is None or len(new) != max_new_tokens:
            return {"bad": repr(tokens)[:200]}
        counts[sum(t * V ** (k - 1 - j) for j, t in enumerate(new[:k]))] += 1
    return {"counts": counts}


def first_iteration_accepted(generate, pair: str, prompt: list, gamma: int, runs: int, seed: int) -> dict:
    """Histogram of the draft tokens accepted in the first iteration of `runs` generations of gamma + 1 tokens.

    The first `target.score` call holds the prompt and the gamma draft tokens; a correct implementation accepts
    exactly the drafts its output starts with (a rejected token x has p(x) < q(x), so the residual never gives x
    back). Returns {"hist": [gamma + 1 ints]} or {"bad": ...} when a run does not fit that pattern.
    """
    generator = torch.Generator().manual_seed(seed)
    hist = [0] * (gamma + 1)
    for _ in range(runs):
        target, draft = model(pair, "target"), model(pair, "draft")
        tokens, _ = generate(target, draft, list(prompt), gamma + 1, gamma, generator)
        new = _token_list(tokens)
        if new is None or len(new) != gamma + 1:
            return {"bad": f"it returned {repr(tokens)[:200]} for max_new_tokens={gamma + 1}"}
        if not target.score_log:
            return {"bad": "it made no target.score call"}
        if target.score_log[0][:len(prompt)] != tuple(prompt) or len(target.score_log[0]) != len(prompt) + gamma:
            return {"bad": f"the first target.score call got tokens {list(target.score_log[0])}, expected the prompt "
                           f"{list(prompt)} followed by {gamma} draft tokens"}
        drafted = target.score_log[0][len(prompt):]
        accepted = next((i for i in range(gamma) if drafted[i] != new[i]), gamma)
        hist[accepted] += 1
    return {"hist": hist}


def generate_twice(generate, pair: str, prompt: list, max_new_tokens: int, gamma: int, seed: int) -> list:
    """Two generations from generators seeded alike, with torch's, numpy's and Python's global seeds changed between.

    An implementation that takes its randomness only from the given generator returns the same thing twice.
    """
    results = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        np.random.seed(global_seed)
        random.seed(global_seed)
        target, draft = model(pair, "target"), model(pair, "draft")
        results.append(generate(target, draft, list(prompt), max_new_tokens, gamma,
                                torch.Generator().manual_seed(seed)))
    return results
