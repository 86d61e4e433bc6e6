"""Toy target and draft models for the speculative topic, and a driver that runs many generations in the child.

A toy model is a bigram table: its next-token distribution is the row of the last token (row V for the empty
prefix), so it is a deterministic function of the prefix. Every row is a multiple of 1/16, exact in float32 and
float64. The models count their calls; the target also logs the tokens of each `score` call. Tables come in
pairs (target, draft), built in the child with `sub.make(model, name, "target")`.

Everything here runs in the child, where the submission may have replaced any of it at import time: the driver
only calls the submission and hands back what it returned; the checks compute every statistic in the grader.
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


def generate_runs(generate, pair: str, prompt: list, max_new_tokens: int, gamma: int, runs: int, seed: int) -> list:
    """Call `generate` `runs` times, drawing from one generator seeded by `seed`, on fresh toy models of `pair`.

    Returns [(what generate returned, the target's score log)] per run, untouched: this code runs in the child
    after the submission was imported, which may have replaced it, so it computes nothing the grader relies on.
    Every count, histogram and comparison is made by the check, in the grader, from these raw outputs.
    """
    generator = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(runs):
        target, draft = model(pair, "target"), model(pair, "draft")
        out.append((generate(target, draft, list(prompt), max_new_tokens, gamma, generator), target.score_log))
    return out


def reseed_globals(seed: int) -> None:
    """Seed torch's, numpy's and Python's global random number generators (not the generator a call is given)."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
