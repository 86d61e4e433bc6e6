"""Toy language models for the decoding checks, served to the submission by the grader (`sub.serve`).

A model is called as `model(tokens)` with the prompt followed by the tokens generated so far and returns the
next-token logits: a [V] float64 tensor. Each model checks what it is given (a list of ints in its vocabulary, at
most MAX_TOKENS long), counts the calls it accepted and logs their prefixes, all here in the grader (the checked,
counted call and `BigramModel`, the model a check may build in the child instead, are in grader/toys/logits.py):
- `NGramModel`: seeded random logits that depend on the last `order - 1` tokens;
- `PrefixModel`: seeded random logits for every whole prefix (beam search: sums never tie exactly);
- `ScriptModel`: after the prompt and k new tokens, a scripted k-th token (one-hot when `low` is very negative);
- `EagerEosModel`: eos is the likeliest token at every step, a scripted token the only other one (min_new_tokens);
- `LOOP_WORDS` / `loop_model()`: a word bigram whose most probable continuation repeats itself;
- `CODE_PIECES` / `code_model()`: a model that writes a fenced Python function, then eos.
"""
import math

import torch

from grader.engine import tr
from grader.toys.logits import MAX_TOKENS, BigramModel, LogitsModel  # noqa: F401 - the checks' too

ONE_HOT_LOW = -1e4      # exp(-1e4 / T) is exactly 0 in float32 and float64 for every temperature a check uses
EAGER_SECOND = -200.0   # EagerEosModel's second choice: at T <= 3, exp(-200 / T) <= 1e-29 against eos


class NGramModel(LogitsModel):
    """Seeded random logits (standard normal times `scale`) for each context of the last order - 1 tokens.

    Contexts shorter than order - 1 are padded on the left with a start symbol (index V).
    """

    def __init__(self, vocab: int, order: int, seed: int, scale: float = 2.0):
        self.vocab, self.order = vocab, order
        rng = torch.Generator().manual_seed(seed)
        contexts = (vocab + 1) ** (order - 1)
        self.table = torch.randn(contexts, vocab, generator=rng, dtype=torch.float64) * scale  # [contexts, V]

    def logits_after(self, tokens: list[int]) -> torch.Tensor:
        context = ([self.vocab] * (self.order - 1) + tokens)[len(tokens):] if self.order > 1 else []
        row = 0
        for t in context:
            row = row * (self.vocab + 1) + t
        return self.table[row]


class PrefixModel(LogitsModel):
    """Seeded random logits (standard normal times `scale`) for every whole prefix: no two different sequences
    share their steps' log-probabilities, so their sums never tie exactly."""

    def __init__(self, vocab: int, seed: int, scale: float = 2.0):
        self.vocab, self.seed, self.scale = vocab, seed, scale

    def logits_after(self, tokens: list[int]) -> torch.Tensor:
        key = self.seed
        for t in tokens:
            key = (key * (self.vocab + 1) + t + 1) % (2**61 - 1)
        rng = torch.Generator().manual_seed(key)
        return torch.randn(self.vocab, generator=rng, dtype=torch.float64) * self.scale


class ScriptModel(LogitsModel):
    """After the prompt and k new tokens, logit 0 for script[k] (the last script token once past its end) and
    `low` for every other token. The model must be given the prompt first: anything else is a ValueError."""

    def __init__(self, vocab: int, prompt: list[int], script: list[int], low: float = ONE_HOT_LOW):
        self.vocab, self.prompt, self.script, self.low = vocab, list(prompt), list(script), low

    def logits_after(self, tokens: list[int]) -> torch.Tensor:
        if tokens[:len(self.prompt)] != self.prompt:
            raise ValueError(tr("model(tokens) must get the prompt {prompt} followed by the new tokens, got {tokens}",
                                prompt=self.prompt, tokens=tokens[:40]))
        k = min(len(tokens) - len(self.prompt), len(self.script) - 1)
        logits = torch.full((self.vocab,), self.low, dtype=torch.float64)
        logits[self.script[k]] = 0.0
        return logits


class EagerEosModel(ScriptModel):
    """eos wants to end the output at once: after the prompt and k new tokens, logit 0 for `eos`, EAGER_SECOND for
    script[k] and ONE_HOT_LOW for every other token. Greedy and sampled decoding (any filter a check uses) both
    write eos at the first step eos is allowed, and script[k] while eos is held back: at every temperature a check
    uses (<= 3) a sampler takes script[k] instead of eos with probability < exp(-200 / 3) = 1e-29, and another
    token instead of script[k] with probability < exp(-9800 / 3) = 0 in float64."""

    def __init__(self, vocab: int, prompt: list[int], script: list[int], eos: int):
        assert eos not in script, "the script is what comes when eos is held back"
        super().__init__(vocab, prompt, script)
        self.eos = eos

    def logits_after(self, tokens: list[int]) -> torch.Tensor:
        logits = super().logits_after(tokens)                       # [V]: 0 for the script's token, low elsewhere
        logits[logits == 0.0] = EAGER_SECOND
        logits[self.eos] = 0.0
        return logits


# --- the loop ------------------------------------------------------------------------------------------------

LOOP_WORDS = ["<eos>", "I", "think", "that", "the", "answer", "is", "42", "."]
# Next-word probabilities after each word (the rest of the row shares what is left equally). "I think that I
# think that ..." is the likeliest way on: each round of three words has probability 0.5 * 0.95 * 0.95 = 0.451,
# 0.767 per word, while the answer "the answer is 42 . <eos>" has 0.35 * 0.8**5 = 0.115, 0.697 per word. The
# logits are the log-probabilities: all negative, as a log_softmax gives them.
LOOP_NEXT = {
    "<eos>": {"I": 0.9},
    "I": {"think": 0.95},
    "think": {"that": 0.95},
    "that": {"I": 0.5, "the": 0.35},
    "the": {"answer": 0.8},
    "answer": {"is": 0.8},
    "is": {"42": 0.8},
    "42": {".": 0.8},
    ".": {"<eos>": 0.8},
}


def loop_table() -> torch.Tensor:
    """[V + 1, V] logits of the loop model (row V: the empty prefix, like after <eos>)."""
    vocab = len(LOOP_WORDS)
    rows = []
    for word in LOOP_WORDS + ["<eos>"]:
        named = LOOP_NEXT[word]
        rest = (1 - sum(named.values())) / (vocab - len(named))
        probs = [named.get(w, rest) for w in LOOP_WORDS]
        rows.append([math.log(p) for p in probs])
    return torch.tensor(rows, dtype=torch.float64)


def loop_model() -> BigramModel:
    """A fresh loop model."""
    return BigramModel(loop_table())


def words(tokens: list[int]) -> str:
    """Loop-model tokens as words."""
    return " ".join(LOOP_WORDS[t] for t in tokens)


# --- the code writer -------------------------------------------------------------------------------------

CODE_PIECES = ["<eos>", "Sure, here is the function:\n\n", "```python\n", "def", " mean", "(", "values", ")", ":",
               "\n", "    ", '"""', "Average of a list.", "if", " not", " values", "return", " 0.0", " sum",
               " /", " len", "```", "\n\nIt returns 0.0 for an empty list.", "        "]
# The answer the code model writes, piece by piece (greedy follows it; the other pieces share little mass).
CODE_SCRIPT = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 11, 9, 10, 13, 14, 15, 8, 9, 23, 16, 17, 9, 10, 16, 18,
               5, 6, 7, 19, 20, 5, 6, 7, 9, 21, 22, 0]


def code_model(prompt: list[int]) -> ScriptModel:
    """A fresh code model after `prompt`: the script's piece has logit 0, every other piece -6."""
    return ScriptModel(len(CODE_PIECES), prompt, CODE_SCRIPT, low=-6.0)


def code_text(tokens: list[int]) -> str:
    """Code-model tokens as text (eos shows as nothing)."""
    return "".join(CODE_PIECES[t] for t in tokens if t != 0)
