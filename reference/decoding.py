"""Hidden reference for the decoding exercise (CONTRACTS.md section 2): the oracle the checks compare against.

Generation loops call the model once per new token with the whole prefix (prompt + new tokens) and work in
float64 Python numbers, so each rule of the contract reads off the code. Sampling draws from the reference
sampling's `filtered_probs` with `torch.multinomial` on the given generator. `completion_status` scans the code
with a small lexer (brackets, strings, comments, continuations) and asks `codeop` (Python's REPL test) before it
asks `compile`.
"""
import codeop
import math
import re
import warnings

import torch

from reference import sampling

FINISH_REASONS = ("eos", "stop", "length")
BRACKETS = {"(": ")", "[": "]", "{": "}"}
STRING_PREFIX = set("rRbBuUfF")
# Each provider's word for "the output hit the token limit": OpenAI Chat, vLLM and Hugging Face's TGI and Inference
# API ("length"; transformers' generate returns no finish reason); Anthropic's stop_reason, for its output limit and
# for the model's context window; Gemini's finish_reason; OpenAI Responses' incomplete_details.reason.
LIMIT_REASONS = frozenset({"length", "max_tokens", "model_context_window_exceeded", "MAX_TOKENS", "max_output_tokens"})
FENCE = re.compile(r" {0,3}```")  # CommonMark: a fence may be indented by at most three spaces


# --- arguments ---------------------------------------------------------------------------------------------

def _check_count(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


def _stop_sequences(stop) -> list[tuple[int, ...]]:
    """The stop sequences as tuples of ints; an empty one is refused (it would end every output at once)."""
    sequences = [tuple(int(t) for t in s) for s in stop]
    if any(len(s) == 0 for s in sequences):
        raise ValueError(f"stop must hold non-empty sequences of token ids, got {stop!r}")
    return sequences


def _logits(model, tokens: list[int]) -> list[float]:
    """The model's next-token logits after `tokens`, as Python floats."""
    return torch.as_tensor(model(list(tokens))).to(torch.float64).flatten().tolist()


# --- the generation loop -----------------------------------------------------------------------------------

def _stop_length(new: list[int], stops: list[tuple[int, ...]]) -> int:
    """The length of the longest stop sequence that the new tokens now end with (0 when none does)."""
    return max((len(s) for s in stops if len(s) <= len(new) and tuple(new[len(new) - len(s):]) == s), default=0)


def _check_min_new_tokens(min_new_tokens, max_new_tokens: int) -> None:
    if isinstance(min_new_tokens, bool) or not isinstance(min_new_tokens, int) or \
            not 0 <= min_new_tokens <= max_new_tokens:
        raise ValueError(f"min_new_tokens must be an int in [0, max_new_tokens = {max_new_tokens}], "
                         f"got {min_new_tokens!r}")


def _without_eos(logits: list[float], eos_id) -> list[float]:
    """The logits with eos_id's set to -inf (Hugging Face's MinNewTokensLengthLogitsProcessor; vLLM's min_tokens
    also holds back its stop_token_ids and stop strings, which this exercise does not)."""
    if eos_id is None or not 0 <= eos_id < len(logits):
        return logits
    return [-math.inf if v == eos_id else x for v, x in enumerate(logits)]


def _generate(model, prompt, max_new_tokens: int, eos_id, stop, choose, min_new_tokens=0) -> tuple[list[int], str]:
    """The loop shared by greedy and sampled decoding: `choose(logits)` picks each new token; eos cannot be chosen
    until `min_new_tokens` new tokens exist."""
    _check_count("max_new_tokens", max_new_tokens)
    _check_min_new_tokens(min_new_tokens, max_new_tokens)
    stops = _stop_sequences(stop)
    prompt, new = [int(t) for t in prompt], []
    for _ in range(max_new_tokens):
        logits = _logits(model, prompt + new)
        token = choose(_without_eos(logits, eos_id) if len(new) < min_new_tokens else logits)
        new.append(token)
        if eos_id is not None and token == eos_id:      # eos first: it stays in the output
            return new, "eos"
        cut = _stop_length(new, stops)                   # then stop: its tokens leave the output
        if cut:
            return new[:len(new) - cut], "stop"
    return new, "length"


def _first_max(values: list[float]) -> int:
    """The index of the largest value, the lowest such index on ties."""
    best = max(values)
    return values.index(best)


def greedy_decode(model, prompt, max_new_tokens, eos_id=None, stop=(), min_new_tokens=0):
    """The most probable token at each step; (new tokens, "eos" | "stop" | "length")."""
    return _generate(model, prompt, max_new_tokens, eos_id, stop, _first_max, min_new_tokens)


def _check_filters(temperature, top_k, top_p) -> None:
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be None or an int >= 1, got {top_k!r}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p must be None or in (0, 1], got {top_p!r}")


def filtered_law(logits: list[float], temperature=1.0, top_k=None, top_p=None) -> torch.Tensor:
    """The distribution sample_decode draws each token from: [V] float64 (sampling.py's pipeline)."""
    _check_filters(temperature, top_k, top_p)
    return sampling.filtered_probs(torch.tensor(logits, dtype=torch.float64), temperature, top_k, top_p)


def sample_decode(model, prompt, max_new_tokens, generator, temperature=1.0, top_k=None, top_p=None, eos_id=None,
                  stop=(), min_new_tokens=0):
    """Each token drawn from the filtered distribution with `generator`; (new tokens, finish reason)."""
    _check_filters(temperature, top_k, top_p)

    def draw(logits: list[float]) -> int:
        law = filtered_law(logits, temperature, top_k, top_p)
        return int(torch.multinomial(law, 1, generator=generator))

    return _generate(model, prompt, max_new_tokens, eos_id, stop, draw, min_new_tokens)


# --- beam search -------------------------------------------------------------------------------------------

def _log_softmax(logits: list[float]) -> list[float]:
    """log p(v) for each token of one row of logits."""
    top = max(logits)
    log_total = top + math.log(math.fsum(math.exp(v - top) for v in logits))
    return [v - log_total for v in logits]


def beam_search(model, prompt, num_beams, max_new_tokens, eos_id=None, length_penalty=1.0):
    """Beam search with the contract's slot rule; [(new tokens, score)] best score first."""
    _check_count("num_beams", num_beams)
    _check_count("max_new_tokens", max_new_tokens)
    prompt = [int(t) for t in prompt]
    live: list[tuple[list[int], float]] = [([], 0.0)]     # (new tokens, summed log-probability)
    finished: list[tuple[list[int], float]] = []          # in the order they finished
    for _ in range(max_new_tokens):
        slots = num_beams - len(finished)                  # finished beams keep their slots
        if slots == 0 or not live:
            break
        candidates = []                                    # (summed log-probability, live beam, token)
        for b, (tokens, total) in enumerate(live):
            for v, logp in enumerate(_log_softmax(_logits(model, prompt + tokens))):
                candidates.append((total + logp, b, v))
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        parents, live = live, []
        for total, b, v in candidates[:slots]:
            beam = (parents[b][0] + [v], total)
            (finished if v == eos_id else live).append(beam)
    finished += live                                       # the length limit finishes the live beams
    scored = [(tokens, total / len(tokens) ** length_penalty) for tokens, total in finished]
    return sorted(scored, key=lambda beam: -beam[1])       # stable: ties keep the order they finished in


# --- repetition penalty ------------------------------------------------------------------------------------

def _seen_rows(seen_tokens, rows: int, vocab: int) -> list[set[int]]:
    """The distinct seen ids of each row: one sequence for a single row, one sequence per row for a batch."""
    if isinstance(seen_tokens, torch.Tensor):
        seen_tokens = seen_tokens.tolist()
    per_row = [seen_tokens] if rows == 0 else list(seen_tokens)
    if rows and len(per_row) != rows:
        raise ValueError(f"seen_tokens must hold one sequence per row of logits ({rows}), got {len(per_row)}")
    out = []
    for sequence in per_row:
        ids = {int(t) for t in sequence}
        if any(t < 0 or t >= vocab for t in ids):
            raise ValueError(f"seen_tokens must be ids in [0, {vocab}), got {sorted(ids)}")
        out.append(ids)
    return out


def apply_repetition_penalty(logits: torch.Tensor, seen_tokens, penalty: float) -> torch.Tensor:
    """Each distinct seen token's logit: multiplied by `penalty` when negative, divided by it when positive."""
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty}")
    if logits.dim() not in (1, 2):
        raise ValueError(f"logits must be [V] or [B, V], got shape {list(logits.shape)}")
    rows = 0 if logits.dim() == 1 else logits.shape[0]
    out = logits.detach().to(torch.float64).clone().reshape(-1, logits.shape[-1])     # out: [rows, V]
    for r, ids in enumerate(_seen_rows(seen_tokens, rows, logits.shape[-1])):
        for t in ids:
            x = out[r, t].item()
            out[r, t] = x * penalty if x < 0 else x / penalty      # zero stays zero
    return out.reshape(logits.shape)


# --- completion status -------------------------------------------------------------------------------------

def _fences(lines: list[str]) -> list[int]:
    """Indices of the fence lines: those that start, after at most three spaces, with three backticks."""
    return [i for i, line in enumerate(lines) if FENCE.match(line)]


def _code(text: str) -> str | None:
    """The code the text holds: the last fenced block's body, or the whole text without fences; None when the
    last fence is left open."""
    lines = text.splitlines()
    fences = _fences(lines)
    if len(fences) % 2:
        return None
    if not fences:
        return text
    start, end = fences[-2], fences[-1]
    return "\n".join(lines[start + 1:end])


def _string_end(code: str, i: int) -> tuple[int, bool]:
    """(index after the string that starts at code[i], whether it closed). A one-line string left open at a
    newline ends there unclosed; a backslash escapes the next character in every kind of string."""
    quote = code[i:i + 3] if code[i:i + 3] in ('"""', "'''") else code[i]
    j = i + len(quote)
    while j < len(code):
        if code[j] == "\\":
            j += 2
        elif code.startswith(quote, j):
            return j + len(quote), True
        elif code[j] == "\n" and len(quote) == 1:
            return j, False
        else:
            j += 1
    return len(code), False


def _cut_short(code: str) -> bool:
    """Whether the code ends inside a bracket or a string, after a line continuation, or with a block opener."""
    depth, last, i = 0, "", 0        # open brackets, last significant character outside comments
    while i < len(code):
        c = code[i]
        if c == "#":
            end = code.find("\n", i)
            i = len(code) if end < 0 else end
            continue
        if c in "'\"":
            i, closed = _string_end(code, i)
            if not closed and not code[i:].strip():
                return True                                   # the code ends inside a string
            last = c
            continue
        if c in BRACKETS:
            depth += 1
        elif c in BRACKETS.values():
            depth = max(depth - 1, 0)                          # a stray closer is left for compile to reject
        if not c.isspace():
            last = c
        i += 1
    return depth > 0 or last in ("\\", ":")


COMPILE_ERRORS = (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError)


def _repl_unfinished(code: str) -> bool:
    """Python's own REPL test: codeop calls the code unfinished (a `try` with no `except`, a decorator with no
    `def`). An error means it is not unfinished: compile judges it next."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return codeop.compile_command(code, "<answer>", "exec") is None
        except COMPILE_ERRORS:
            return False


def _compiles(code: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(code, "<completion>", "exec", dont_inherit=True)
        except COMPILE_ERRORS:
            return False
    return True


def completion_status(text: str, finish_reason: str) -> str:
    """"truncated", "invalid" or "complete" for a model's answer that should be (or hold) a Python program."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if not isinstance(finish_reason, str):
        raise ValueError(f"finish_reason must be a str, got {type(finish_reason).__name__}")
    code = _code(text)
    if finish_reason in LIMIT_REASONS or code is None or _cut_short(code) or _repl_unfinished(code):
        return "truncated"
    return "complete" if _compiles(code) else "invalid"
