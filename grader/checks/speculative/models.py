"""Toy target and draft models for the speculative topic: their tables, and fresh models served by the grader.

A toy model is a bigram table: its next-token distribution is the row of the last token (row V for the empty
prefix), so it is a deterministic function of the prefix. Every row is a multiple of 1/16, exact in float32 and
float64. The models (grader/toys/bigram.py) count their calls and log the tokens of each `score` call. Tables come
in pairs (target, draft). Checks that count calls or read logs serve the models from the grader (`sub.serve`): the
submission calls them through a proxy, so it cannot rewrite their counts or logs. Checks that read only the outputs
build them in the child (`sub.make`), pure functions of these published tables: no round trip per call.
"""
import functools

import torch

from grader.toys.bigram import ToyModel, probs_after  # noqa: F401 - probs_after is the checks' too

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


def model(name: str, role: str) -> ToyModel:
    """A fresh toy model (`role` "target" or "draft") of the table pair `name`."""
    return ToyModel(table(name, role))
