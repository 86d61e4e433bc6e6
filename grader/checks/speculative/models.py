"""Toy target and draft models for the speculative topic, served to the submission by the grader.

A toy model is a bigram table: its next-token distribution is the row of the last token (row V for the empty
prefix), so it is a deterministic function of the prefix. Every row is a multiple of 1/16, exact in float32 and
float64. The models count their calls; the target also logs the tokens of each `score` call. Tables come in
pairs (target, draft). The models live in the grader (`sub.serve`): the submission calls them through a proxy,
so it cannot rewrite their counts or logs.
"""
import functools
import operator

import torch

V = 4
MAX_TOKENS = 4096  # far past any check's prompt and output: a longer prefix is the submission's error
MAX_LOGGED = 2**16  # tokens a target's score log keeps in all (a check's runs log a few hundred): the grader's memory

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
        self.logged = 0

    def _prefix(self, tokens) -> list[int]:
        """`tokens` (a list, tuple or LongTensor) as a list of ints in the vocabulary."""
        if len(tokens) > MAX_TOKENS:
            raise ValueError(f"a prefix of {len(tokens)} tokens is longer than any check asks for")
        tokens = [int(t) for t in (tokens.tolist() if isinstance(tokens, torch.Tensor) else tokens)]
        if any(t < 0 or t >= V for t in tokens):
            raise ValueError(f"tokens must lie in [0, {V}), got {tokens}")
        return tokens

    def next_probs(self, tokens) -> torch.Tensor:
        """The next-token distribution after `tokens`: [V] float64. A refused call (bad tokens) is not counted."""
        row = probs_after(self.rows, self._prefix(tokens)).clone()
        self.next_probs_calls += 1
        return row

    def score(self, tokens, n: int) -> torch.Tensor:
        """The next-token distributions after each of the last n prefixes of `tokens`: [n, V] float64.

        A refused call (bad tokens or n) is neither counted nor logged.
        """
        tokens = self._prefix(tokens)
        n = operator.index(n)  # TypeError for anything but an integer
        if not 1 <= n <= len(tokens) + 1:
            raise ValueError(f"n must be in [1, len(tokens) + 1] = [1, {len(tokens) + 1}], got {n}")
        if self.logged + len(tokens) > MAX_LOGGED:
            raise ValueError(f"this model has scored {self.logged} tokens, more than any check needs")
        self.score_calls += 1
        self.logged += len(tokens)
        self.score_log.append(tuple(tokens))
        start = len(tokens) - n + 1
        return torch.stack([probs_after(self.rows, tokens[:end]) for end in range(start, len(tokens) + 1)])

    @property
    def calls(self) -> int:
        """All forward passes of this model, single-position or scoring."""
        return self.next_probs_calls + self.score_calls


def model(name: str, role: str) -> ToyModel:
    """A fresh toy model (`role` "target" or "draft") of the table pair `name`."""
    return ToyModel(table(name, role))
