"""Model answer for the decoding exercise: greedy and sampled generation with eos and stop sequences, beam search
with the slot rule and length normalisation, the repetition penalty, and whether returned code is complete.

The filter pipeline (temperature, top-k, top-p) is written inline, so this module does not need sampling.py.
"""
import codeop
import re
import warnings

import torch

BOUNDARY_RTOL = 1e-9  # a mass within 1e-9 (relative) of top_p counts as reaching it (contract)
OPENERS, CLOSERS = "([{", ")]}"
# Every provider's word for "cut by the token limit": OpenAI Chat / vLLM / TGI, Anthropic (its output limit and its
# context window), Gemini, OpenAI Responses.
LIMIT_REASONS = frozenset({"length", "max_tokens", "model_context_window_exceeded", "MAX_TOKENS", "max_output_tokens"})
FENCE = re.compile(r" {0,3}```")  # CommonMark: at most three spaces before a fence
COMPILE_ERRORS = (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError)


def _require_count(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


def _stop_tuples(stop) -> list[tuple[int, ...]]:
    stops = [tuple(int(t) for t in s) for s in stop]
    if not all(stops):
        raise ValueError(f"stop must hold non-empty sequences of token ids, got {stop!r}")
    return stops


def _matched_stop(new: list[int], stops: list[tuple[int, ...]]) -> int:
    """Length of the longest stop sequence the new tokens end with; 0 if none."""
    ends = [len(s) for s in stops if len(s) <= len(new) and tuple(new[-len(s):]) == s]
    return max(ends, default=0)


def _drop_stop(new: list[int], length: int) -> list[int]:
    """The new tokens without the stop sequence of `length` tokens that ends them."""
    return new[:-length]


def _require_min_new_tokens(min_new_tokens, max_new_tokens: int) -> None:
    if isinstance(min_new_tokens, bool) or not isinstance(min_new_tokens, int) or \
            not 0 <= min_new_tokens <= max_new_tokens:
        raise ValueError(f"min_new_tokens must be an int in [0, max_new_tokens = {max_new_tokens}], "
                         f"got {min_new_tokens!r}")


def _block_eos(logits: torch.Tensor, eos_id, produced: int, min_new_tokens: int) -> torch.Tensor:
    """The logits with eos at -inf while fewer than min_new_tokens new tokens exist (Hugging Face's
    MinNewTokensLengthLogitsProcessor; stop sequences still apply)."""
    if eos_id is None or produced >= min_new_tokens or not 0 <= eos_id < logits.numel():
        return logits
    return logits.index_fill(0, torch.tensor([eos_id]), float("-inf"))   # [V]


def _decode(model, prompt, max_new_tokens, eos_id, stop, pick, min_new_tokens=0) -> tuple[list[int], str]:
    """One token per step from pick(logits), until eos, a stop sequence or the length limit."""
    _require_count("max_new_tokens", max_new_tokens)
    _require_min_new_tokens(min_new_tokens, max_new_tokens)
    stops, prompt, new = _stop_tuples(stop), [int(t) for t in prompt], []
    for _ in range(max_new_tokens):
        logits = torch.as_tensor(model(prompt + new)).double()          # logits: [V]
        new.append(pick(_block_eos(logits, eos_id, len(new), min_new_tokens)))
        if eos_id is not None and new[-1] == eos_id:
            return new, "eos"
        length = _matched_stop(new, stops)
        if length:
            return _drop_stop(new, length), "stop"
    return new, "length"


def greedy_decode(model, prompt, max_new_tokens, eos_id=None, stop=(), min_new_tokens=0):
    """Append the most likely next token (lowest id on ties) until eos, a stop sequence or the length limit."""
    return _decode(model, prompt, max_new_tokens, eos_id, stop, lambda logits: int(torch.argmax(logits)),
                   min_new_tokens)


def _filtered_probs(logits: torch.Tensor, temperature, top_k, top_p) -> torch.Tensor:
    """Temperature, then top-k (ties kept), then top-p (the crossing token kept), then softmax: [V] float64."""
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.numel():
        scaled = scaled.masked_fill(scaled < torch.topk(scaled, top_k).values[-1], float("-inf"))
    if top_p is not None:
        probs = torch.softmax(scaled, -1)
        ranked, order = probs.sort(descending=True)
        above = ranked.cumsum(-1) - ranked                             # mass ranked strictly above each token
        drop = torch.zeros_like(probs, dtype=torch.bool)
        drop[order] = above >= top_p * (1 - BOUNDARY_RTOL)
        scaled = scaled.masked_fill(drop, float("-inf"))
    return torch.softmax(scaled, -1)


def sample_decode(model, prompt, max_new_tokens, generator, temperature=1.0, top_k=None, top_p=None, eos_id=None,
                  stop=(), min_new_tokens=0):
    """Draw each token from the filtered distribution with `generator` until eos, a stop sequence or the limit."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be None or an int >= 1, got {top_k!r}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p must be None or in (0, 1], got {top_p!r}")

    def draw(logits: torch.Tensor) -> int:
        probs = _filtered_probs(logits, temperature, top_k, top_p)
        return int(torch.multinomial(probs, 1, generator=generator))

    return _decode(model, prompt, max_new_tokens, eos_id, stop, draw, min_new_tokens)


def _beam_score(total_logp: float, length: int, length_penalty: float) -> float:
    """The summed log-probability normalised by length ** length_penalty."""
    return total_logp / length ** length_penalty


def beam_search(model, prompt, num_beams, max_new_tokens, eos_id=None, length_penalty=1.0):
    """Keep the num_beams - len(finished) best extensions each step; [(new tokens, score)] best first."""
    _require_count("num_beams", num_beams)
    _require_count("max_new_tokens", max_new_tokens)
    prompt = [int(t) for t in prompt]
    beams, finished = [([], 0.0)], []
    for _ in range(max_new_tokens):
        slots = num_beams - len(finished)
        if slots == 0 or not beams:
            break
        extended = []
        for b, (tokens, total) in enumerate(beams):
            logp = torch.log_softmax(torch.as_tensor(model(prompt + tokens)).double(), -1)   # logp: [V]
            extended += [(total + lp, b, v) for v, lp in enumerate(logp.tolist())]
        best = sorted(extended, key=lambda c: (-c[0], c[1], c[2]))[:slots]
        previous, beams = beams, []
        for total, b, v in best:
            (finished if v == eos_id else beams).append((previous[b][0] + [v], total))
    finished += beams
    scored = [(tokens, _beam_score(total, len(tokens), length_penalty)) for tokens, total in finished]
    return sorted(scored, key=lambda beam: beam[1], reverse=True)


def apply_repetition_penalty(logits: torch.Tensor, seen_tokens, penalty: float) -> torch.Tensor:
    """Make every seen token less likely: negative logits times penalty, positive ones divided by it."""
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty}")
    if logits.dim() not in (1, 2):
        raise ValueError(f"logits must be [V] or [B, V], got shape {list(logits.shape)}")
    batch = logits.reshape(-1, logits.shape[-1]).clone()                           # batch: [B, V]
    per_row = [seen_tokens] if logits.dim() == 1 else list(seen_tokens)
    if len(per_row) != batch.shape[0]:
        raise ValueError(f"seen_tokens must hold one sequence per row of logits, got {len(per_row)}")
    for row, seen in zip(batch, per_row):
        ids = torch.as_tensor(seen, dtype=torch.long).flatten().unique()
        if ids.numel() and (ids.min() < 0 or ids.max() >= batch.shape[-1]):
            raise ValueError(f"seen_tokens must be ids in [0, {batch.shape[-1]}), got {ids.tolist()}")
        picked = row[ids]
        row[ids] = torch.where(picked < 0, picked * penalty, picked / penalty)
    return batch.reshape(logits.shape)


def _extract_code(text: str) -> str | None:
    """The last fenced block's body, the whole text when there are no fences, None when a fence is left open."""
    lines = text.splitlines()
    fences = [i for i, line in enumerate(lines) if FENCE.match(line)]
    if len(fences) % 2 == 1:
        return None
    return "\n".join(lines[fences[-2] + 1:fences[-1]]) if fences else text


def _repl_says_unfinished(code: str) -> bool:
    """Python's REPL test: codeop returns None for code that needs more lines (a try with no except)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return codeop.compile_command(code, "<answer>", "exec") is None
        except COMPILE_ERRORS:
            return False                               # an error, not unfinished: compile decides later


def _ends_unfinished(code: str) -> bool:
    """Whether the code stops inside a bracket or string, after a backslash, after a block opener's colon, or
    where Python's REPL would ask for more."""
    depth, last, i, n = 0, "", 0, len(code)
    while i < n:
        c = code[i]
        if c == "#":                                   # a comment runs to the end of its line
            while i < n and code[i] != "\n":
                i += 1
        elif c in "'\"":
            quote = code[i:i + 3] if code[i:i + 3] in ('"""', "'''") else c
            i += len(quote)
            while i < n and not code.startswith(quote, i):
                if code[i] == "\n" and len(quote) == 1:
                    break                              # a one-line string left open at its newline
                i += 2 if code[i] == "\\" else 1
            if i >= n or not code.startswith(quote, i):
                if not code[i:].strip():
                    return True                        # the code ends inside the string
            else:
                i += len(quote)
            last = c
        else:
            if c in OPENERS:
                depth += 1
            elif c in CLOSERS and depth:
                depth -= 1
            if not c.isspace():
                last = c
            i += 1
    return depth > 0 or last in ("\\", ":") or _repl_says_unfinished(code)


def completion_status(text: str, finish_reason: str) -> str:
    """"truncated" (cut by the length limit or visibly unfinished), "invalid" (not Python) or "complete"."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if not isinstance(finish_reason, str):
        raise ValueError(f"finish_reason must be a str, got {type(finish_reason).__name__}")
    code = _extract_code(text)
    if finish_reason in LIMIT_REASONS or code is None or _ends_unfinished(code):
        return "truncated"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(code, "<completion>", "exec", dont_inherit=True)
        except COMPILE_ERRORS:
            return "invalid"
    return "complete"
