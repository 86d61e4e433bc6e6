"""How speculative checks build small cases, word calls in failure messages, and compare what came back."""
import re
from typing import NamedTuple

import torch

from grader.checks.speculative import models
from grader.checks.speculative.misconceptions import verify_predictions
from grader.checks.speculative.models import ToyModel, V
from grader.engine import expect_length, expect_raises, fail, golden, reference, tr
from grader.engine.checks import type_name

STATS = ("iterations", "proposed", "accepted", "target_calls", "draft_calls")


def sixteenths(rows, dtype=torch.float64) -> torch.Tensor:
    """A tensor from entries given in sixteenths (exact in float32 and float64)."""
    return torch.tensor(rows, dtype=torch.float64).div(16).to(dtype)


def _text(t: torch.Tensor) -> str:
    """Small tensors in sixteenths when they are exact multiples of 1/16, else their values."""
    t = t.to(torch.float64)
    if t.numel() and torch.equal(t * 16, (t * 16).round()) and bool(torch.isfinite(t).all()):
        return f"{(t * 16).round().long().tolist()}/16"
    return str([round(v, 4) for v in t.flatten().tolist()] if t.dim() <= 1 else
               [[round(v, 4) for v in row] for row in t.tolist()])


def verify_text(draft_tokens, q, p, u, noise) -> str:
    """How a verify call reads in a failure message."""
    return (f"verify(draft_tokens={list(draft_tokens)}, q={_text(q)}, p={_text(p)}, u={_text(u)}, "
            f"noise={_text(noise)})")


def is_token_list(value) -> bool:
    """Whether `value` is a list of Python ints, as verify must return."""
    return isinstance(value, list) and all(type(t) is int for t in value)


def expect_tokens(actual, expected: list, what: str, predictions=(), allowed=()) -> None:
    """Fail unless verify returned `expected` (or a tie-equivalent answer in `allowed`), naming a matching bug."""
    if not is_token_list(actual):
        fail(tr("{what} returned {type} {value!r:.80}, expected a list of ints", what=what, type=type_name(actual),
                value=actual))
    if actual == expected or actual in allowed:
        return
    wanted = (tr("one of {answers}", answers=sorted(map(list, {tuple(expected), *map(tuple, allowed)}))) if allowed
              else str(expected))
    found = next((mid for mid, tokens in predictions if tokens == actual), None)
    fail(tr("{what}: expected {expected}, got {got}", what=what, expected=wanted, got=actual), found)


def stored_verify(key: str, draft_tokens, q, p, u, noise) -> dict:
    """The golden answer of verify on these inputs, and what each misconception returns instead."""
    def compute() -> dict:
        ref = reference("speculative")
        return {"expected": ref.verify(draft_tokens, q, p, u, noise),
                "wrong": verify_predictions(ref, draft_tokens, q, p, u, noise)}
    return golden(key, compute)


def expect_verify(sub, key: str, draft_tokens, q, p, u, noise, allowed=()) -> None:
    """Call the submission's verify and compare it with the golden `key`."""
    case = stored_verify(key, draft_tokens, q, p, u, noise)
    actual = sub.verify(list(draft_tokens), q, p, u, noise)
    expect_tokens(actual, case["expected"], verify_text(draft_tokens, q, p, u, noise),
                  [tuple(w) for w in case["wrong"]], allowed)


def tie_answers(ref, draft_tokens, q, p, u, noise) -> list:
    """Every answer of the reference when one noise entry is nudged either way: all tie-breaks of the race."""
    answers = set()
    for v in range(noise.shape[0]):
        for factor in (1 - 1e-9, 1 + 1e-9):
            nudged = noise.clone()
            nudged[v] *= factor
            answers.add(tuple(ref.verify(draft_tokens, q, p, u, nudged)))
    return sorted(answers)


def expect_names(argument: str, what: str, fn, *args) -> None:
    """`fn(*args)` must raise a ValueError whose message names `argument` (as a word)."""
    message = expect_raises(ValueError, fn, *args)
    if not re.search(rf"\b{re.escape(argument)}\b", message):
        fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}", call=what, message=message,
                name=argument))


def new_tokens(value, count: int, what: str) -> list[int]:
    """The generated tokens as a list of ints, after checking that there are `count` of them in the vocabulary."""
    if isinstance(value, torch.Tensor) and value.dim() == 1 and not value.is_floating_point():
        expect_length(value, tr("{what}: its tokens", what=what), count=count)  # before converting them
        value = value.tolist()
    if not (isinstance(value, (list, tuple)) and all(type(t) is int for t in value)):
        fail(tr("{what} returned tokens {type} {value!r:.80}, expected a list of ints", what=what,
                type=type_name(value), value=value))
    if len(value) != count or not all(0 <= t < V for t in value):
        fail(tr("{what} returned {size} tokens {tokens}, expected exactly {count} token ids in [0, {vocab})",
                what=what, size=len(value), tokens=list(value)[:20], count=count, vocab=V))
    return list(value)


def generate_result(result, count: int, what: str) -> tuple[list[int], dict]:
    """(tokens, stats) from what speculative_generate returned, after checking their form."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        not_a_pair(result, what)
    tokens, stats = new_tokens(result[0], count, what), result[1]
    if not isinstance(stats, dict):
        fail(tr("{what} returned stats {type}, expected a dict with keys {keys}", what=what, type=type_name(stats),
                keys=list(STATS)))
    missing = [key for key in STATS if key not in stats]
    if missing:
        fail(tr("{what} returned stats without {missing}: {stats}", what=what, missing=missing, stats=stats))
    wrong = {key: stats[key] for key in STATS if type(stats[key]) is not int or stats[key] < 0}
    if wrong:
        fail(tr("{what} returned stats {wrong}: every stat must be a non-negative int", what=what, wrong=wrong))
    return tokens, stats


def generated_tokens(result, count: int, what: str) -> list[int]:
    """The tokens of what speculative_generate returned, after checking that it is a pair starting with them."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        not_a_pair(result, what)
    return new_tokens(result[0], count, what)


def not_a_pair(result, what: str):
    """Fail: speculative_generate returned something other than a (tokens, stats) pair."""
    fail(tr("{what} returned {type} {value!r:.80}, expected a (tokens, stats) pair", what=what,
            type=type_name(result), value=result))


def generate_many(sub, pair: str, prompt: list, max_new_tokens: int, gamma: int, runs: int, seed: int,
                  served_target: bool = False) -> list[tuple]:
    """[(what speculative_generate returned, the target it was given if served here, else None)] for `runs` calls.

    One generator seeded from `seed` serves every run, as one long stream of random numbers would. Both models are
    built once in the child (`child_pair`), so no call of theirs is a round trip; with `served_target` every run
    gets a fresh target served here, whose counts and score log (the grader's own) come back beside the result.
    """
    generator, (target, draft) = sub.generator(seed), child_pair(sub, pair)
    out = []
    for _ in range(runs):
        served = None
        if served_target:
            served = models.model(pair, "target")
            target = sub.serve(served, ("next_probs", "score"), "target")
        out.append((sub.speculative_generate(target, draft, list(prompt), max_new_tokens, gamma, generator), served))
    return out


def child_pair(sub, pair: str) -> tuple:
    """Target and draft of `pair` built in the child: pure functions of the published tables, for checks that read
    only what the submission returns (their counts and logs there are the submission's to rewrite)."""
    return tuple(sub.make(ToyModel, models.table(pair, role), shown_as=role) for role in ("target", "draft"))


class Run(NamedTuple):
    """One speculative_generate call on toy models: what came back, the models, and how the call reads."""
    tokens: list
    stats: dict
    target: ToyModel
    draft: ToyModel
    max_new_tokens: int
    gamma: int
    what: str


def toy_pair(sub, pair: str) -> tuple[ToyModel, ToyModel, tuple]:
    """Fresh target and draft toy models of `pair`, and the two as offered to the submission (served here)."""
    target, draft = models.model(pair, "target"), models.model(pair, "draft")
    return target, draft, (sub.serve(target, ("next_probs", "score"), "target"),
                           sub.serve(draft, ("next_probs", "score"), "draft"))


def generate(sub, pair: str, prompt: list, max_new_tokens: int, gamma: int, seed: int) -> Run:
    """Run the submission's speculative_generate on fresh toy models with a generator seeded by `seed`."""
    target, draft, offered = toy_pair(sub, pair)
    what = tr("{call} on the toy models {pair!r}", pair=pair, call=f"speculative_generate(target, draft, "
              f"prompt={prompt}, max_new_tokens={max_new_tokens}, gamma={gamma}, generator)")
    result = sub.speculative_generate(*offered, prompt, max_new_tokens, gamma, sub.generator(seed))
    tokens, stats = generate_result(result, max_new_tokens, what)
    return Run(tokens, stats, target, draft, max_new_tokens, gamma, what)


def expect_stats_add_up(run: Run) -> None:
    """The stats agree with the models' own call counts and with the number of tokens produced."""
    stats = run.stats
    for key, model in (("target_calls", run.target), ("draft_calls", run.draft)):
        counted = model.calls
        if stats[key] != counted:
            fail(tr("{what} reported {key}={value}, but the model counted {counted} calls", what=run.what, key=key,
                    value=stats[key], counted=counted))
    it, proposed, accepted, n, gamma = (stats["iterations"], stats["proposed"], stats["accepted"],
                                        run.max_new_tokens, run.gamma)
    # each iteration yields its accepted drafts plus one token; only the last may overshoot, by at most gamma
    if not (accepted <= proposed <= gamma * it and n <= accepted + it <= n + gamma):
        fail(tr("{what} returned stats {stats}, which do not add up: expected accepted <= proposed <= gamma * "
                "iterations and max_new_tokens <= accepted + iterations <= max_new_tokens + gamma", what=run.what,
                stats=stats))


def expect_one_target_call(run: Run) -> None:
    """Exactly one target.score call per iteration and no other target calls."""
    score_calls, single_calls = run.target.score_calls, run.target.next_probs_calls
    iterations = run.stats["iterations"]
    if score_calls == iterations and not single_calls:
        return
    calls = score_calls + single_calls
    # the misconception: about one target pass per draft position rather than one per iteration
    per_token = calls > iterations and calls >= max(run.stats["proposed"], 1)
    fail(tr("{what}: {iterations} iterations made {score_calls} target.score and {single_calls} target.next_probs "
            "calls; expected exactly one target.score call per iteration and no other target calls", what=run.what,
            iterations=iterations, score_calls=score_calls, single_calls=single_calls),
         "one_target_call_per_token" if per_token else None)


def expect_all_accepted(run: Run) -> None:
    """With a draft identical to the target, p(x) / q(x) = 1 for every draft token: all must be accepted."""
    if run.stats["accepted"] != run.stats["proposed"]:
        fail(tr("{what} with draft == target accepted {accepted} of {proposed} draft tokens; p(x) / q(x) = 1 for "
                "every draft, so every draft token must be accepted", what=run.what, accepted=run.stats["accepted"],
                proposed=run.stats["proposed"]))
