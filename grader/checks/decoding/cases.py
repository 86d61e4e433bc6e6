"""Fixed decoding cases: scripted outputs for the stop logic, a hand-worked beam-search table, and the law the
sampling check draws from."""
import math

import torch

from grader.checks.decoding.models import BigramModel, EagerEosModel, ScriptModel

VOCAB, EOS = 8, 7

# (what the case shows, prompt, script of new tokens, max_new_tokens, eos_id, stop sequences)
STOP_CASES = [
    ("eos at the third step is kept", [1, 2], [3, 4, 7, 5, 6], 10, EOS, ()),
    ("eos at the first step", [1], [7, 3], 5, EOS, ()),
    ("no eos_id: the eos token is an ordinary token", [1], [3, 7, 4, 5], 4, None, ()),
    ("the length limit", [0], [1, 2, 3, 4, 5, 6], 4, EOS, ((6,),)),
    ("a stop sequence spanning two steps", [1, 2], [3, 4, 5, 6], 10, EOS, ((4, 5),)),
    ("a partial match, then the whole stop sequence", [0], [4, 1, 4, 5, 2], 10, EOS, ((4, 5),)),
    ("a partial match that never completes", [0], [4, 1, 2, 4, 6, 3], 6, EOS, ((4, 5),)),
    ("two stop sequences end together: the longest is removed", [0], [3, 4, 5, 6], 10, EOS, ((5,), (4, 5))),
    ("a stop sequence that spans the prompt does not count", [5, 4], [5, 1, 2], 3, EOS, ((4, 5),)),
    ("a stop sequence on the last allowed token: stop, not length", [0], [1, 2, 3, 4], 3, EOS, ((2, 3),)),
    ("eos that also ends a stop sequence: eos first", [0], [3, 7, 1], 5, EOS, ((3, 7),)),
    ("a stop sequence that is the whole output", [6], [2, 2, 2], 5, EOS, ((2, 2),)),
]


# min_new_tokens on a model whose eos is the likeliest token at every step (EagerEosModel, eos = 0):
# (what the case shows, prompt, script of tokens while eos is held back, max_new_tokens, eos_id, stop, min_new_tokens)
MIN_CASES = [
    ("min_new_tokens=0: eos ends the output at once", [1], [2, 3, 4, 5], 6, 0, (), 0),
    ("eos held back for three new tokens", [1], [2, 3, 4, 5, 2, 3], 8, 0, (), 3),
    ("min_new_tokens=1", [4], [3, 3, 3], 5, 0, (), 1),
    ("only new tokens count, however long the prompt", [1, 2, 3, 4, 5], [3, 2, 4], 6, 0, (), 2),
    ("min_new_tokens = max_new_tokens: eos is never allowed", [1], [2, 3, 4], 3, 0, (), 3),
    ("a stop sequence still ends the output before min_new_tokens", [1], [2, 3, 4, 5], 8, 0, ((3, 4),), 4),
    ("eos_id None: token 0 is ordinary and min_new_tokens changes nothing", [1], [2, 3, 4], 4, None, (), 2),
]


def eager_eos_model(prompt: list, script: list) -> EagerEosModel:
    """A fresh model whose eos (token 0) is the likeliest token at every step, `script` the only other choice."""
    return EagerEosModel(VOCAB, prompt, script, 0)


def script_model(prompt: list, script: list) -> ScriptModel:
    """A fresh one-hot model that writes `script` after `prompt`."""
    return ScriptModel(VOCAB, prompt, script)


def case_text(fn: str, prompt, max_new_tokens, eos_id, stop, extra: str = "", min_new_tokens=None) -> str:
    """How a decode call on a scripted model reads in a message."""
    return (f"{fn}(model, prompt={prompt}, max_new_tokens={max_new_tokens}{extra}, eos_id={eos_id}, "
            f"stop={tuple(stop)}" + ("" if min_new_tokens is None else f", min_new_tokens={min_new_tokens}") + ")")


# Hand-worked beam search: tokens 0 = eos, 1 = a, 2 = b; rows are next-token probabilities after the last token
# (the last row: the empty prefix). tests/topics/test_decoding.py works the answers out by hand.
BEAM_PROBS = [
    [0.2, 0.3, 0.5],            # after eos (reached only when eos_id is None)
    [0.6, 0.1, 0.3],            # after a
    [0.05, 0.55, 0.4],          # after b
    [0.1, 0.5, 0.4],            # at the start
]
# (num_beams, max_new_tokens, eos_id, length_penalty)
BEAM_CASES = [(2, 3, 0, 1.0), (2, 3, 0, 0.0), (2, 3, 0, 2.0), (3, 4, 0, 1.0), (2, 3, None, 1.0), (1, 3, 0, 1.0)]


def beam_model() -> BigramModel:
    """A fresh hand-worked beam model: logits are the log-probabilities."""
    return BigramModel(torch.tensor(BEAM_PROBS, dtype=torch.float64).log())


# The sampling law: the first token is drawn from these logits with temperature 0.6, top_k 4, top_p 0.85, whatever
# the prompt (every row of the model is the same). See distribution.py for the sizing.
SAMPLE_LOGITS = [1.2, 1.0, 0.7, 0.6, 0.0, -1.0]
SAMPLE_SETTINGS = {"temperature": 0.6, "top_k": 4, "top_p": 0.85}


def constant_model(logits: list) -> BigramModel:
    """A fresh model whose next-token logits are `logits` after any prefix."""
    row = torch.tensor(logits, dtype=torch.float64)
    return BigramModel(row.expand(len(logits) + 1, -1).clone())


def log_prob(probs: list) -> float:
    """The summed log-probability of a path's step probabilities."""
    return math.fsum(math.log(p) for p in probs)
