"""Random decoding cases drawn from a check's seed: models, prompts, stop sequences, beam settings, logits to
penalise and model answers cut at random points."""
import itertools
import math
import random

import torch

from grader.checks.decoding.corpus import (
    AFTERWORDS,
    FENCE,
    OPENERS,
    PREAMBLES,
    PROGRAMS,
)
from grader.checks.decoding.models import EagerEosModel, PrefixModel, ScriptModel

BEAM_GAP = 1e-4  # every two partial sums (and final scores) of an exhaustive case differ by more than this
# Natural ends (OpenAI/vLLM/TGI, Anthropic, Gemini, OpenAI Responses) and each one's token-limit word (Anthropic has
# two: its output limit and the model's context window).
FINISH_REASONS = ["stop", "stop", "eos", "end_turn", "STOP", "completed", "length", "length", "max_tokens",
                  "model_context_window_exceeded", "MAX_TOKENS", "max_output_tokens"]


def ngram_spec(r: random.Random, vocab=(3, 9), order=(1, 3)) -> tuple[int, int, int]:
    """(vocab, order, seed) of a random n-gram model."""
    return r.randint(*vocab), r.randint(*order), r.randrange(2**31)


def prompt_for(r: random.Random, vocab: int) -> list[int]:
    """A prompt of 0 to 3 token ids."""
    return [r.randrange(vocab) for _ in range(r.randint(0, 3))]


def stops_from(r: random.Random, tokens: list[int], vocab: int) -> tuple:
    """0 to 3 stop sequences: pieces of the free-running output (they may span steps, overlap or only partly
    match once shortened) and random ones."""
    stops = []
    for _ in range(r.randint(0, 3)):
        if tokens and r.random() < 0.75:
            start = r.randrange(len(tokens))
            piece = tokens[start:start + r.randint(1, 3)]
            if r.random() < 0.3:                           # a partial match: change the last token
                piece = piece[:-1] + [(piece[-1] + 1) % vocab]
            stops.append(tuple(piece))
        else:
            stops.append(tuple(r.randrange(vocab) for _ in range(r.randint(1, 3))))
    return tuple(stops)


def eos_for(r: random.Random, tokens: list[int], vocab: int):
    """None, a token of the free-running output, or any token."""
    choice = r.random()
    if choice < 0.25:
        return None
    if choice < 0.7 and tokens:
        return r.choice(tokens)
    return r.randrange(vocab)


def script_case(r: random.Random) -> dict:
    """A one-hot model's script with its prompt, limit, eos and stops."""
    vocab = r.randint(3, 8)
    script = [r.randrange(vocab) for _ in range(r.randint(1, 12))]
    prompt = prompt_for(r, vocab)
    return {"vocab": vocab, "prompt": prompt, "script": script, "max_new_tokens": r.randint(1, 14),
            "eos_id": eos_for(r, script, vocab), "stop": stops_from(r, script, vocab)}


def script_model(case: dict) -> ScriptModel:
    """A fresh one-hot model for a script case."""
    return ScriptModel(case["vocab"], case["prompt"], case["script"])


def eager_case(r: random.Random) -> dict:
    """An EagerEosModel's eos, script, prompt and limit, with stop sequences and a min_new_tokens in [0, limit]."""
    vocab = r.randint(3, 8)
    eos = r.randrange(vocab)
    others = [v for v in range(vocab) if v != eos]
    script = [r.choice(others) for _ in range(r.randint(1, 12))]
    n = r.randint(1, 14)
    return {"vocab": vocab, "eos": eos, "prompt": prompt_for(r, vocab), "script": script, "max_new_tokens": n,
            "stop": stops_from(r, script, vocab) if r.random() < 0.4 else (),
            "min_new_tokens": r.choice([0, r.randint(0, n), r.randint(0, n), n])}


def eager_model(case: dict) -> EagerEosModel:
    """A fresh model for an eager case: its eos is the likeliest token at every step."""
    return EagerEosModel(case["vocab"], case["prompt"], case["script"], case["eos"])


def filters(r: random.Random) -> dict:
    """Random temperature, top_k and top_p (each filter present or not)."""
    return {"temperature": round(r.uniform(0.3, 3.0), 3), "top_k": r.choice([None, r.randint(1, 5)]),
            "top_p": r.choice([None, round(r.uniform(0.05, 1.0), 3)])}


def sums_spread(model, prompt: list[int], max_new_tokens: int, eos_id, length_penalty: float) -> bool:
    """Whether every two partial log-probability sums of all sequences, and every two final scores, differ by
    more than BEAM_GAP (so no ranking can depend on rounding)."""
    sums, scores, frontier = [], [], [([], 0.0)]
    for depth in range(1, max_new_tokens + 1):
        grown = []
        for tokens, total in frontier:
            logits = model.logits_after(prompt + tokens).tolist()
            top = max(logits)
            log_total = top + math.log(math.fsum(math.exp(v - top) for v in logits))
            for v, x in enumerate(logits):
                beam = (tokens + [v], total + x - log_total)
                sums.append(beam[1])
                if v == eos_id or depth == max_new_tokens:
                    scores.append(beam[1] / depth ** length_penalty)
                else:
                    grown.append(beam)
        frontier = grown
    return all(b - a > BEAM_GAP for values in (sums, scores) for a, b in itertools.pairwise(sorted(values)))


def exhaustive_case(r: random.Random) -> dict:
    """Beam settings with num_beams >= V ** max_new_tokens on a prefix model whose sums never nearly tie."""
    while True:
        vocab, seed = r.randint(2, 4), r.randrange(2**31)
        n = r.randint(1, {2: 5, 3: 3, 4: 3}[vocab])
        case = {"spec": (vocab, seed), "prompt": prompt_for(r, vocab), "num_beams": vocab ** n + r.randint(0, 3),
                "max_new_tokens": n, "eos_id": r.choice([None, r.randrange(vocab)]),
                "length_penalty": r.choice([0.0, 0.5, 1.0, 2.0])}
        if sums_spread(PrefixModel(*case["spec"]), case["prompt"], n, case["eos_id"], case["length_penalty"]):
            return case


def narrow_case(r: random.Random) -> dict:
    """Beam settings with fewer beams than sequences, on a larger prefix model."""
    vocab, seed = r.randint(3, 6), r.randrange(2**31)
    n = r.randint(2, 5)
    return {"spec": (vocab, seed), "prompt": prompt_for(r, vocab), "num_beams": r.randint(1, 4),
            "max_new_tokens": n, "eos_id": r.choice([None, r.randrange(vocab), r.randrange(vocab)]),
            "length_penalty": r.choice([0.0, 0.5, 1.0, 1.0, 2.0])}


def penalty_case(r: random.Random, rng: torch.Generator) -> tuple:
    """(logits, seen_tokens, penalty): [V] or [B, V], float32 or float64, zeros among the logits, repeated ids,
    seen ids as lists or a [B, T] LongTensor."""
    vocab, batch = r.randint(4, 12), r.choice([None, r.randint(1, 4)])
    shape = (vocab,) if batch is None else (batch, vocab)
    logits = torch.randn(shape, generator=rng, dtype=torch.float64) * 3
    logits[torch.rand(shape, generator=rng) < 0.15] = 0.0
    logits = logits.to(r.choice([torch.float32, torch.float64]))
    penalty = round(r.choice([r.uniform(1.05, 3.0), r.uniform(0.3, 0.95)]), 4)
    if batch is None:
        return logits, [r.randrange(vocab) for _ in range(r.randint(0, 10))], penalty
    length = r.randint(1, 8)
    rows = [[r.randrange(vocab) for _ in range(length)] for _ in range(batch)]
    return logits, (torch.tensor(rows) if r.random() < 0.5 else rows), penalty


def cut_answer(r: random.Random) -> tuple[str, str]:
    """(text, finish_reason): a real program cut at a random point, bare or in a fence between prose."""
    program = PROGRAMS[r.choice(sorted(PROGRAMS))]
    cut = program[:r.randint(0, len(program))] if r.random() < 0.85 else program
    shape = r.random()
    if shape < 0.35:
        text = cut
    elif shape < 0.7:                                       # the fence closes after the cut code
        text = r.choice(PREAMBLES) + r.choice(OPENERS) + cut + ("" if cut.endswith("\n") else "\n") + FENCE \
            + r.choice(AFTERWORDS)
    else:                                                   # the answer itself is cut: the fence stays open
        text = r.choice(PREAMBLES) + r.choice(OPENERS) + cut
    return text, r.choice(FINISH_REASONS)


def varied_answer(r: random.Random) -> tuple[str, str]:
    """(text, finish_reason): whole programs, edited into invalid ones or followed by another block."""
    program = PROGRAMS[r.choice(sorted(PROGRAMS))]
    lines = program.splitlines(keepends=True)
    edit = r.random()
    if edit < 0.3:                                          # drop a random line (often invalid)
        del lines[r.randrange(len(lines))]
    elif edit < 0.5:                                        # an operator with no right operand
        i = r.randrange(len(lines))
        lines.insert(i, lines[i][:len(lines[i]) - len(lines[i].lstrip())] + "x = 1 *\n")
    body = "".join(lines)
    if r.random() < 0.5:
        body = "```python\n" + body + FENCE + "\n"
        if r.random() < 0.4:
            body += "\nRun it:\n```bash\npython main.py\n```\n"
    return r.choice(PREAMBLES) + body, r.choice(FINISH_REASONS)
