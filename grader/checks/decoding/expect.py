"""How decoding checks offer models, read back what the submission returned, compare it with the expected answer
and name the misconception a wrong answer shows."""
import math

import torch

from grader.checks.speculative.expect import expect_names  # noqa: F401 - re-exported for the decoding checks
from grader.checks.decoding.models import MAX_TOKENS
from grader.engine import expect_close, expect_length, fail, tr, within
from grader.engine.checks import type_name

FINISH_REASONS = ("eos", "stop", "length")
STATUSES = ("complete", "truncated", "invalid")
# Beam scores: a submission may compute log-probabilities in float32 (about 1e-7 relative per token).
SCORE_ATOL, SCORE_RTOL = 1e-5, 1e-5


def offer(sub, model):
    """The model as the submission receives it: a proxy whose calls run here, in the grader."""
    return sub.serve(model, ("__call__",), "model")


def token_list(value, what: str) -> list[int]:
    """`value` as a list of ints (a 1-D integer tensor is accepted), or the check fails."""
    if isinstance(value, torch.Tensor) and value.dim() == 1 and not value.is_floating_point():
        expect_length(value, tr("{what}: its tokens", what=what), at_most=MAX_TOKENS)  # before converting them
        value = value.tolist()
    if not (isinstance(value, (list, tuple)) and all(type(t) is int for t in value)):
        fail(tr("{what} returned tokens {type} {value!r:.80}, expected a list of ints", what=what,
                type=type_name(value), value=value))
    return list(value)


def decoded(value, what: str) -> tuple[list[int], str]:
    """(tokens, finish_reason) from what a decode function returned, after checking their form."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        fail(tr("{what} returned {type} {value!r:.80}, expected a (tokens, finish_reason) pair", what=what,
                type=type_name(value), value=value))
    tokens, reason = token_list(value[0], what), value[1]
    if reason not in FINISH_REASONS:
        fail(tr("{what} returned finish_reason {reason!r}, expected one of {reasons}", what=what,
                reason=str(reason)[:40], reasons=list(FINISH_REASONS)))
    return tokens, reason


def expect_decoded(value, expected: tuple, what: str, stop=(), without_min: tuple | None = None) -> None:
    """The submission's (tokens, finish_reason) must equal the expected pair; stop tokens left in are named, and so
    is an answer equal to `without_min`, the answer with min_new_tokens=0."""
    tokens, reason = decoded(value, what)
    want_tokens, want_reason = list(expected[0]), expected[1]
    if (tokens, reason) == (want_tokens, want_reason):
        return
    kept_stop = want_reason == "stop" and any(tokens == want_tokens + list(s) for s in stop)
    early = without_min is not None and (tokens, reason) == (list(without_min[0]), without_min[1])
    said = dict(what=what, tokens=want_tokens, reason=want_reason, got=tokens, got_reason=reason)
    if early:
        fail(tr("{what}: expected ({tokens}, {reason!r}), got ({got}, {got_reason!r}): eos ended the output before "
                "min_new_tokens new tokens existed (its logit is -inf until then)", **said), "ignores_min_new_tokens")
    if kept_stop:
        fail(tr("{what}: expected ({tokens}, {reason!r}), got ({got}, {got_reason!r}): the stop sequence's tokens are "
                "still in the output", **said), "stop_tokens_in_output")
    fail(tr("{what}: expected ({tokens}, {reason!r}), got ({got}, {got_reason!r})", **said))


def beams(value, what: str) -> list[tuple[list[int], float]]:
    """[(tokens, score)] from what beam_search returned, after checking their form."""
    if not isinstance(value, (list, tuple)):
        fail(tr("{what} returned {type}, expected a list of (tokens, score) pairs", what=what, type=type_name(value)))
    out = []
    for i, beam in enumerate(value):
        if not (isinstance(beam, (tuple, list)) and len(beam) == 2):
            fail(tr("{what} returned {type} {beam!r:.60} at position {position}, expected (tokens, score)", what=what,
                    type=type_name(beam), beam=beam, position=i))
        score = beam[1].item() if isinstance(beam[1], torch.Tensor) and beam[1].numel() == 1 else beam[1]
        if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
            fail(tr("{what} returned score {score!r:.40} at position {position}, expected a float", what=what,
                    score=beam[1], position=i))
        out.append((token_list(beam[0], tr("{what} at position {position}", what=what, position=i)), float(score)))
    return out


def beam_text(found: list) -> str:
    """Beams as `[tokens] score` lines for a message (at most 6)."""
    lines = [f"{tokens} {score:.6f}" for tokens, score in found[:6]]
    return "; ".join(lines) + (tr("; ... ({count} in all)", count=len(found)) if len(found) > 6 else "")


def same_beams(found: list, expected: list) -> bool:
    """The same sequences in the same order with scores within the tolerance."""
    return len(found) == len(expected) and all(
        t == list(te) and within(s, se, atol=SCORE_ATOL, rtol=SCORE_RTOL)
        for (t, s), (te, se) in zip(found, expected))


def expect_beams(value, expected: list, what: str, unnormalised: list | None = None) -> None:
    """beam_search's answer must equal `expected`; `unnormalised` is the answer without length normalisation."""
    found = beams(value, what)
    if same_beams(found, expected):
        return
    said = dict(what=what, expected=beam_text(expected), got=beam_text(found))
    if unnormalised is not None and same_beams(found, unnormalised):
        fail(tr("{what}: expected [{expected}], got [{got}] (the scores are summed log-probabilities, not divided by "
                "length ** length_penalty)", **said), "beam_no_length_norm")
    fail(tr("{what}: expected [{expected}], got [{got}]", **said))


def sign_blind(logits: torch.Tensor, seen_rows: list, penalty: float) -> torch.Tensor:
    """What dividing every seen token's logit by the penalty, whatever its sign, gives (the misconception)."""
    out = logits.to(torch.float64).clone().reshape(-1, logits.shape[-1])
    for r, seen in enumerate(seen_rows):
        ids = sorted(set(seen))
        out[r, ids] = out[r, ids] / penalty
    return out.reshape(logits.shape)


def expect_penalized(actual, expected: torch.Tensor, logits: torch.Tensor, seen_rows: list, penalty: float,
                     what: str) -> None:
    """apply_repetition_penalty's answer must match the expected logits (to the input dtype's rounding)."""
    rtol = 1e-12 if logits.dtype == torch.float64 else 4 * torch.finfo(logits.dtype).eps
    expect_close(actual, expected.to(logits.dtype), what, atol=0.0, rtol=rtol,
                 misconceptions={"repetition_penalty_sign": sign_blind(logits, seen_rows, penalty)})


def status_misconception(got: str, expected: str, structural: str, reason: str) -> str | None:
    """The misconception a wrong completion_status shows; `structural` is the answer with finish_reason "stop"."""
    if expected != "truncated" or got == "truncated":
        return None
    if structural != "truncated" and got == structural:         # judged as if generation had ended naturally
        return "length_finish_as_complete" if reason == "length" else "provider_limit_as_complete"
    return "truncated_code_as_complete" if got == "complete" else None


def expect_status(actual, expected: str, structural: str, what: str, reason: str) -> None:
    """completion_status(text, reason) must return `expected`."""
    if actual not in STATUSES:
        fail(tr("{what} returned {type} {value!r}, expected one of {statuses}", what=what, type=type_name(actual),
                value=str(actual)[:40], statuses=list(STATUSES)))
    if actual != expected:
        limit = expected == "truncated" and structural != "truncated" and actual == structural and reason != "length"
        found = status_misconception(actual, expected, structural, reason)
        if limit:
            fail(tr("{what}: expected {expected!r}, got {got!r}: {reason!r} is this provider's word for hitting the "
                    "token limit, like \"length\"", what=what, expected=expected, got=actual, reason=reason), found)
        fail(tr("{what}: expected {expected}, got {got}", what=what, expected=repr(expected), got=repr(actual)), found)
