"""Bigram toy models (speculative decoding's target and draft): the class the grader serves, and builds in the
child where a check reads only the outputs.

A model's next-token distribution is the row of its table for the last token (the last row for the empty prefix):
a pure function of the prefix and of a table the checks publish. Built in the child (`sub.make(ToyModel, rows)`)
it answers without a round trip to the grader, but its counts and log are the submission's to rewrite: checks
that count calls or read the log serve it from the grader (`sub.serve`) instead.
"""
import operator

import torch

MAX_TOKENS = 4096  # far past any check's prompt and output: a longer prefix is the submission's error
MAX_LOGGED = 2**16  # tokens a target's score log keeps in all (a check's runs log a few hundred): the grader's memory


def probs_after(rows: torch.Tensor, tokens) -> torch.Tensor:
    """The row of `rows` ([V + 1, V]) that follows the prefix `tokens`: [V]."""
    return rows[int(tokens[-1]) if len(tokens) else rows.shape[1]]


class ToyModel:
    """A bigram language model with `next_probs`/`score` that counts its calls and logs its scored prefixes."""

    def __init__(self, rows: torch.Tensor):
        assert rows.dim() == 2 and rows.shape[0] == rows.shape[1] + 1, "rows: [V + 1, V]"
        self.rows, self.vocab = rows, rows.shape[1]
        self.next_probs_calls = 0
        self.score_calls = 0
        self.score_log: list[tuple] = []
        self.logged = 0

    def _prefix(self, tokens) -> list[int]:
        """`tokens` (a list, tuple or LongTensor) as a list of ints in the vocabulary."""
        if len(tokens) > MAX_TOKENS:
            raise ValueError(f"a prefix of {len(tokens)} tokens is longer than any check asks for")
        tokens = [int(t) for t in (tokens.tolist() if isinstance(tokens, torch.Tensor) else tokens)]
        if any(t < 0 or t >= self.vocab for t in tokens):
            raise ValueError(f"tokens must lie in [0, {self.vocab}), got {tokens}")
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
