"""Logits models (decoding's `model(tokens) -> logits`): the checked, counted call every model of the decoding
checks makes, and the bigram model, which the grader serves or builds in the child where a check reads only the
tokens returned.

Built in the child (`sub.make(BigramModel, table)`), a bigram model is a pure function of the prefix and of a table
the check chose: it answers without a round trip to the grader, but its counts and log are the submission's to
rewrite, so checks that count calls or read the log serve it from the grader (`sub.serve`) instead.
"""
import torch

MAX_TOKENS = 512        # far past any check's prompt and output: a longer prefix is the submission's error
MAX_LOG = 20_000        # prefixes kept per model


class LogitsModel:
    """The checked, counted `model(tokens) -> logits` call; subclasses say what the logits are."""

    vocab: int

    def __call__(self, tokens) -> torch.Tensor:
        """The next-token logits after `tokens`: [V] float64. A refused call is neither counted nor logged."""
        tokens = self.accepted(tokens)
        logits = self.logits_after(tokens).clone()
        self.calls = getattr(self, "calls", 0) + 1
        log = self.__dict__.setdefault("prefixes", [])
        if len(log) < MAX_LOG:
            log.append(tuple(tokens))
        return logits

    def accepted(self, tokens) -> list[int]:
        """`tokens` as a list of ints in the vocabulary; TypeError or ValueError otherwise."""
        if isinstance(tokens, torch.Tensor) and tokens.dim() == 1 and not tokens.is_floating_point():
            tokens = tokens.tolist()
        if not isinstance(tokens, (list, tuple)):
            raise TypeError(f"model(tokens) takes a list of token ids, got {type(tokens).__name__}")
        if len(tokens) > MAX_TOKENS:
            raise ValueError(f"a prefix of {len(tokens)} tokens is longer than any check asks for")
        if not all(type(t) is int for t in tokens):
            raise TypeError(f"token ids must be Python ints, got {[type(t).__name__ for t in tokens][:8]}")
        if any(not 0 <= t < self.vocab for t in tokens):
            raise ValueError(f"token ids must lie in [0, {self.vocab}), got {list(tokens)[:40]}")
        return list(tokens)

    def logits_after(self, tokens: list[int]) -> torch.Tensor:
        raise NotImplementedError


class BigramModel(LogitsModel):
    """Logits that depend on the last token only: row t of `table` after token t, row V for an empty prefix."""

    def __init__(self, table: torch.Tensor):
        self.vocab, self.table = table.shape[1], table

    def logits_after(self, tokens: list[int]) -> torch.Tensor:
        return self.table[tokens[-1] if tokens else self.vocab]
