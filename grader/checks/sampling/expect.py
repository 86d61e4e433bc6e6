"""How sampling checks judge an answer: the tokens a filter kept, top-k and top-p verdicts, probabilities within a
float32 tolerance, the token the exponential race must pick, and ValueErrors that name the argument."""
import re

import torch

from grader.checks.sampling.misconceptions import top_k_row_ids, top_p_row_ids
from grader.engine import expect_raises, expect_type, fail, mismatch, more_failing, outside, tolerance, tr

# Probabilities may be computed in float32 whatever the input dtype (contract): never demand more than a few
# float32 epsilons of absolute accuracy from a probability.
PROB_ATOL_FLOOR = 1e-6
# A row of at most 64 float32 probabilities sums to 1 within 64 float32 epsilons.
SUM_ATOL = 1e-5
# Race scores probs / noise that agree to float32 rounding may be ranked either way.
RACE_RTOL = 4 * torch.finfo(torch.float32).eps
# When several misconceptions fit every failing case, name the most specific.
TOP_P_IDS = ("top_p_boundary_accumulation", "top_p_drops_crossing_token", "top_p_keeps_fraction_of_vocab")
FILTERED_PROBS_IDS = ("no_renormalization", "filter_order", "temperature_on_probs")


def show(row: torch.Tensor) -> str:
    """A 1-D tensor as a list of 4-significant-digit numbers, for messages."""
    return str([float(f"{v:.4g}") for v in row.tolist()])


def row_name(flat_row: int, shape: torch.Size) -> str:
    """' in row [b, t]' for the flat row index of a [..., V] tensor ('' for a single row)."""
    if len(shape) == 1:
        return ""
    index = torch.unravel_index(torch.tensor(flat_row), tuple(shape[:-1]))
    return tr(" in row {row}", row=[int(i) for i in index])


def tokens(mask: torch.Tensor) -> list[int]:
    """Indices where a 1-D bool mask is set."""
    return mask.nonzero().flatten().tolist()


def returned(out, shape, what: str) -> torch.Tensor:
    """`out` as float64, after checking it is a tensor of the given shape."""
    expect_type(out, torch.Tensor, what)
    if tuple(out.shape) != tuple(shape):
        fail(tr("{what} returned shape {shape}, expected {expected}", what=what, shape=list(out.shape),
                expected=list(shape)))
    return out.detach().to(torch.float64)


def kept_tokens(out, logits: torch.Tensor, what: str) -> torch.Tensor:
    """Bool mask of the tokens a filter kept; every returned entry must be the input logit or -inf."""
    got = returned(out, logits.shape, what)
    x = logits.to(torch.float64)
    bad = ~((got == x) | (got == float("-inf")))
    if bad.any():
        index = tuple(torch.nonzero(bad)[0].tolist())
        fail(tr("{what} returned {got:.6g} at index {index}; a filter returns each logit unchanged ({logit:.6g}) or "
                "-inf", what=what, got=got[index].item(), index=list(index), logit=x[index].item()))
    return torch.isfinite(got)


def top_p_problem(out, logits: torch.Tensor, p: float, must: torch.Tensor, may: torch.Tensor,
                  what: str) -> tuple[str, set[str]] | None:
    """None if `out` is an accepted top-p answer; else what is wrong and the misconceptions every wrong row fits.

    `must`/`may` are the reference's `top_p_keep_bounds`: tokens that must stay, tokens that may stay.
    """
    vocab = logits.shape[-1]
    kept = kept_tokens(out, logits, what).reshape(-1, vocab)
    must, may = must.reshape(-1, vocab), may.reshape(-1, vocab)
    wrong_rows = ((must & ~kept) | (kept & ~may)).any(-1).nonzero().flatten().tolist()
    if not wrong_rows:
        return None
    probs = torch.softmax(logits.to(torch.float64), dim=-1).reshape(-1, vocab)
    ids = set.intersection(*(top_p_row_ids(probs[r].tolist(), kept[r].tolist(), p) for r in wrong_rows))
    r = wrong_rows[0]
    either = tokens(may[r] & ~must[r])
    said = dict(what=what, row=row_name(r, logits.shape), probs=show(probs[r]), kept=tokens(kept[r]),
                expected=tokens(must[r]), either=either)
    message = (tr("{what}{row}: the probabilities are {probs}; kept tokens {kept}, expected tokens {expected} and "
                  "any of {either} (a tie or a mass within rounding of p)", **said) if either else
               tr("{what}{row}: the probabilities are {probs}; kept tokens {kept}, expected tokens {expected}",
                  **said))
    return message, ids


def top_k_problem(out, logits: torch.Tensor, k: int, expected: torch.Tensor, what: str) -> tuple[str, set[str]] | None:
    """None if `out` equals the reference's top-k answer `expected`; else what is wrong and the matching ids."""
    vocab = logits.shape[-1]
    kept_tokens(out, logits, what)
    got = out.detach().to(torch.float64).reshape(-1, vocab)
    want = expected.to(torch.float64).reshape(-1, vocab)
    wrong_rows = (got != want).any(-1).nonzero().flatten().tolist()
    if not wrong_rows:
        return None
    kept, should = torch.isfinite(got), torch.isfinite(want)
    ids = set.intersection(*(top_k_row_ids(kept[r].tolist(), should[r].tolist(), k) for r in wrong_rows))
    r = wrong_rows[0]
    x = logits.to(torch.float64).reshape(-1, vocab)[r]
    return tr("{what}{row}: logits {logits}; kept tokens {kept}, expected {expected} (every logit tied with the "
              "k-th largest stays)", what=what, row=row_name(r, logits.shape), logits=show(x), kept=tokens(kept[r]),
              expected=tokens(should[r])), ids


def fail_on(problems: list[tuple[str, set[str]]], order: tuple[str, ...]) -> None:
    """Fail with the first problem, naming a misconception only when every failing case fits it."""
    if not problems:
        return
    common = set.intersection(*(ids for _, ids in problems))
    fail(problems[0][0] + more_failing(len(problems) - 1), next((mid for mid in order if mid in common), None))


def filtered_probs_problem(out, tempered: torch.Tensor, must: torch.Tensor, may: torch.Tensor, what: str,
                           wrong: list[tuple[str, torch.Tensor]]) -> tuple[str, set[str]] | None:
    """None if `out` is an accepted filtered_probs answer; else what is wrong and the misconceptions it fits.

    `tempered` is logits / temperature (float64); `must`/`may` mark the tokens top-k then top-p must or may keep.
    The answer must put probability only on tokens it may keep, keep every token it must, and equal the softmax
    of `tempered` over the tokens it kept. `wrong` lists (misconception id, what that misconception returns).
    """
    got = returned(out, tempered.shape, what)
    if out.dtype not in (torch.float32, torch.float64):
        fail(tr("{what} returned dtype {dtype}; probabilities are computed in float32 or float64", what=what,
                dtype=out.dtype))
    if not (torch.isfinite(got).all() and (got >= 0).all()):
        index = tuple(torch.nonzero(~(torch.isfinite(got) & (got >= 0)))[0].tolist())
        fail(tr("{what} returned {got:.6g} at index {index}; probabilities are finite and >= 0", what=what,
                got=got[index].item(), index=list(index)))
    support = must | (got > 0)
    expected = torch.softmax(tempered.masked_fill(~support, float("-inf")), dim=-1)
    atol, rtol = tolerance(expected, torch.softmax(tempered.float().masked_fill(~support, float("-inf")), dim=-1),
                           PROB_ATOL_FLOOR)
    candidates = [*wrong, ("no_renormalization", torch.softmax(tempered, dim=-1) * support)]
    ids = {mid for mid, value in candidates if mismatch(got, value, atol, rtol) is None}
    sums = got.sum(dim=-1).reshape(-1)
    off = outside(sums, 1.0, atol=SUM_ATOL).nonzero().flatten().tolist()
    if off:
        return tr("{what}: a row sums to {sum:.6g}{row}; each row of probabilities sums to 1", what=what,
                  sum=sums[off[0]].item(), row=row_name(off[0], got.shape)), ids
    extra = ((got > 0) & ~may).reshape(-1, got.shape[-1])
    if extra.any():
        r, token = torch.nonzero(extra)[0].tolist()
        return tr("{what} gave probability {probability:.6g} to token {token}{row}, which the filters remove "
                  "(removed tokens have probability exactly 0)", what=what,
                  probability=got.reshape(extra.shape)[r, token].item(), token=token, row=row_name(r, got.shape)), ids
    problem = mismatch(got, expected, atol, rtol)
    return None if problem is None else (tr("{what}: {problem}", what=what, problem=problem), ids)


def expect_race(out, probs: torch.Tensor, noise: torch.Tensor, what: str) -> None:
    """`out` must hold, per row, a token with probability > 0 whose probs / noise is the largest (up to rounding)."""
    expect_type(out, torch.Tensor, what)
    if out.dtype != torch.int64:
        fail(tr("{what} returned dtype {dtype}, expected torch.int64 (a LongTensor)", what=what, dtype=out.dtype))
    if tuple(out.shape) != tuple(probs.shape[:-1]):
        fail(tr("{what} returned shape {shape}, expected {expected}", what=what, shape=list(out.shape),
                expected=list(probs.shape[:-1])))
    vocab = probs.shape[-1]
    picks = out.reshape(-1)
    if ((picks < 0) | (picks >= vocab)).any():
        fail(tr("{what} returned token {token}, outside 0..{last}", what=what,
                token=picks[(picks < 0) | (picks >= vocab)][0].item(), last=vocab - 1))
    q = probs.to(torch.float64).reshape(-1, vocab)
    chosen = picks.unsqueeze(-1)  # [rows, 1]
    e = noise.to(torch.float64).reshape(-1, vocab)
    race = q / e  # [rows, V]
    zero = (q.gather(-1, chosen).squeeze(-1) == 0).nonzero().flatten().tolist()
    if zero:
        r = zero[0]
        fail(tr("{what} chose token {token}{row}, whose probability is 0; probabilities {probs}, noise {noise}",
                what=what, token=picks[r].item(), row=row_name(r, probs.shape), probs=show(q[r]), noise=show(e[r])))
    best = race.max(dim=-1)
    losing = (race.gather(-1, chosen).squeeze(-1) < best.values * (1 - RACE_RTOL)).nonzero().flatten().tolist()
    if losing:
        r = losing[0]
        fail(tr("{what}{row}: probabilities {probs}, noise {noise}: probs / noise is largest at token {best}, got "
                "token {token}", what=what, row=row_name(r, probs.shape), probs=show(q[r]), noise=show(e[r]),
                best=best.indices[r].item(), token=picks[r].item()))


def expect_names(call, names: tuple[str, ...], what: str, *args, **kwargs) -> None:
    """`call(*args, **kwargs)` must raise ValueError with a message naming the argument (any of `names`)."""
    message = expect_raises(ValueError, call, *args, **kwargs)
    if not any(re.search(rf"\b{name}\b", message) for name in names):
        fail(tr("{what} raised ValueError({message!r}); the message should name the argument {name!r}", what=what,
                message=message, name=names[0]))
