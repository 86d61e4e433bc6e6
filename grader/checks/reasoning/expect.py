"""How reasoning checks drive a UsageLedger, compare its answers and the comparisons, and what each misconception
would return instead.

Token counts, calls, `keep` and effort levels compare exactly. Seconds, costs and accuracies are sums and
quotients of exact decimals: only the order of float operations differs, so a relative 1e-9 is ample. P-values
also get an absolute 1e-12, so a correct exact p-value of 1e-18 computed as 1 - P(X > k) in floats still passes.
"""
from grader.engine import SubmissionRaised, fail, tr, within
from grader.engine.checks import type_name

RTOL = 1e-9
ATOL = {"seconds": 1e-12, "cost": 1e-15, "p_value": 1e-12, "accuracy": 0.0}
COUNT_KEYS = ("input", "cached_input", "cache_write", "output", "reasoning", "calls")
COMPARISON_KEYS = ("p_value", "keep", "accuracy_a", "accuracy_b", "tokens_a", "tokens_b", "median_seconds_a",
                   "median_seconds_b", "verifiable_a", "verifiable_b")
USAGE_FILE = "grader/checks/reasoning/usage.py"


def is_number(x) -> bool:
    """An int or float, bool excluded."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def close(actual, expected: float, kind: str) -> bool:
    """Whether `actual` is a number within the tolerance of `expected` for its kind of quantity."""
    return is_number(actual) and within(actual, expected, atol=ATOL[kind], rtol=RTOL)


# ---------------------------------------------------------------- the ledger

def record_all(ledger, calls: list) -> None:
    """Record (call_id, usage, seconds) calls in order."""
    for call_id, usage, seconds in calls:
        ledger.record(call_id, usage, seconds)


def calls_text(calls: list, label: str | None = None) -> str:
    """The recording calls as written when short, else where to read them."""
    if label is not None and len(calls) > 3:
        return tr("<{label}: {count} record(...) calls, see {file}>", label=label, count=len(calls), file=USAGE_FILE)
    return "; ".join(f"ledger.record({call_id!r}, {usage!r}, {seconds!r})" for call_id, usage, seconds in calls)


def keys_difference(actual, keys: tuple) -> str | None:
    """None when `actual` is a dict with all of `keys`; otherwise what it lacks, in words."""
    if not isinstance(actual, dict):
        return tr("returned {type}, expected a dict", type=type_name(actual))
    missing = [key for key in keys if key not in actual]
    return tr("the result has no {keys}", keys=", ".join(map(repr, missing))) if missing else None


def differs(key: str, actual: dict, expected: dict) -> str:
    """`key`'s value in `actual` against the one in `expected`, in words."""
    return tr("{key!r} = {actual!r}, expected {expected!r}", key=key, actual=actual[key], expected=expected[key])


def totals_difference(actual, expected: dict) -> str | None:
    """None when `actual` has `expected`'s counts and seconds; otherwise the first difference, in words."""
    if (problem := keys_difference(actual, COUNT_KEYS + ("seconds",))) is not None:
        return problem
    for key in COUNT_KEYS:
        if not is_number(actual[key]) or actual[key] != expected[key]:
            return differs(key, actual, expected)
    if not close(actual["seconds"], expected["seconds"], "seconds"):
        return differs("seconds", actual, expected)
    return None


def gemini_thoughts(calls: list) -> int:
    """The thought tokens the Gemini usages among `calls` report (absent or null: 0), in either spelling."""
    return sum(usage.get("thoughts_token_count") or usage.get("thoughtsTokenCount") or 0 for _, usage, _ in calls
               if "prompt_token_count" in usage or "promptTokenCount" in usage)


def totals_misconceptions(right: dict, thoughts: int = 0) -> list:
    """[(misconception id, the totals it predicts)] for the ids that change these totals.

    `thoughts` is what the ledger's Gemini usages report as thoughts_token_count: taking them as inside
    candidates_token_count leaves them out of `output`. Listed first: on a ledger whose only reasoning is Gemini's
    it predicts what reasoning_from_answer_length does, and the Gemini-specific explanation is the likelier one.
    Reasoning read off the visible answer leaves only the answer's tokens in `output`; reasoning added on top
    counts it twice; cached input left in `input` bills it at the full price (with or without `cached_input`).
    """
    wrong = [("gemini_thoughts_inside_candidates", {**right, "output": right["output"] - thoughts}),
             ("reasoning_from_answer_length", {**right, "output": right["output"] - right["reasoning"]}),
             ("double_counts_reasoning", {**right, "output": right["output"] + right["reasoning"]}),
             ("cached_at_full_price", {**right, "input": right["input"] + right["cached_input"], "cached_input": 0}),
             ("cached_at_full_price", {**right, "input": right["input"] + right["cached_input"]})]
    return [(mid, totals) for mid, totals in wrong if totals != right]


def expect_totals(actual, expected: dict, what: str, thoughts: int = 0) -> None:
    """Fail unless `actual` equals the totals `expected`, naming the misconception whose totals it equals
    (`thoughts`: the Gemini thought tokens among the recorded calls)."""
    problem = totals_difference(actual, expected)
    if problem is not None:
        found = next((mid for mid, totals in totals_misconceptions(expected, thoughts)
                      if totals_difference(actual, totals) is None), None)
        fail(tr("{what}: {problem}; all expected totals: {expected}", what=what, problem=problem, expected=expected),
             found)


def priced(totals: dict, prices: dict) -> float:
    """What `totals` cost at `prices`."""
    return sum(totals[key] * prices[key] for key in ("input", "cached_input", "cache_write", "output"))


def cost_misconceptions(totals: dict, prices: dict, thoughts: int = 0) -> list:
    """[(misconception id, the cost it predicts)] for the ids that change this cost (`thoughts` as in
    totals_misconceptions)."""
    right = priced(totals, prices)
    reasoning_cost = totals["reasoning"] * prices["output"]
    wrong = [("gemini_thoughts_inside_candidates", right - thoughts * prices["output"]),
             ("cached_at_full_price", right + totals["cached_input"] * (prices["input"] - prices["cached_input"])),
             ("cached_at_full_price", right + totals["cached_input"] * prices["input"]),
             ("reasoning_from_answer_length", right - reasoning_cost),
             ("double_counts_reasoning", right + reasoning_cost)]
    return [(mid, cost) for mid, cost in wrong if not close(cost, right, "cost")]


def expect_cost(actual, expected: float, totals: dict, prices: dict, what: str, thoughts: int = 0) -> None:
    """Fail unless `actual` is the cost `expected`, naming the misconception whose cost it equals."""
    if not close(actual, expected, "cost"):
        found = next((mid for mid, cost in cost_misconceptions(totals, prices, thoughts)
                      if close(actual, cost, "cost")), None)
        fail(tr("{what} returned {got!r}, expected {expected!r} (relative tolerance {rtol:g}); the ledger's totals are "
                "{totals}", what=what, got=actual, expected=expected, rtol=RTOL, totals=totals), found)


def expect_value_error(fn, args: tuple, argument: str | tuple, what: str) -> None:
    """`what` (the call `fn(*args)`, with its setup) must raise ValueError with a message naming `argument`, or
    one of them when it is a tuple (two documented rules that both apply, two spellings of one count)."""
    names = (argument,) if isinstance(argument, str) else tuple(argument)
    named = repr(names[0]) if len(names) == 1 else tr("one of {names}", names=", ".join(map(repr, names)))
    try:
        result = fn(*args)
    except SubmissionRaised as raised:
        if "ValueError" not in raised.type_names:
            fail(tr("{what} raised {type}: {message}; expected a ValueError naming {named}", what=what,
                    type=raised.type_name, message=raised.message, named=named))
        if not any(name in raised.message for name in names):
            fail(tr("{what} raised ValueError({message!r}); the message should name {names}", what=what,
                    message=raised.message, names=named))
        return
    fail(tr("{what} returned {result!r}; expected a ValueError naming {named}", what=what, result=result, named=named))


# ---------------------------------------------------------------- compare_variants

def comparison_difference(actual, expected: dict) -> str | None:
    """None when `actual` equals the comparison `expected`; otherwise the first difference (p-value first)."""
    if (problem := keys_difference(actual, COMPARISON_KEYS)) is not None:
        return problem
    if not close(actual["p_value"], expected["p_value"], "p_value"):
        return differs("p_value", actual, expected)
    for key in ("accuracy_a", "accuracy_b"):
        if not close(actual[key], expected[key], "accuracy"):
            return differs(key, actual, expected)
    for key in ("tokens_a", "tokens_b", "keep"):
        if actual[key] != expected[key] or isinstance(actual[key], bool):
            return differs(key, actual, expected)
    for key in ("median_seconds_a", "median_seconds_b"):
        if not close(actual[key], expected[key], "seconds"):
            return differs(key, actual, expected)
    for key in ("verifiable_a", "verifiable_b"):
        if expected[key] is None and actual[key] is not None:
            return tr("{key!r} = {got!r}, expected None (no result says whether it is verifiable)", key=key,
                      got=actual[key])
        if expected[key] is not None and not close(actual[key], expected[key], "accuracy"):
            return differs(key, actual, expected)
    return None


def kept_wordier(actual, expected: dict) -> bool:
    """Whether the answer keeps the variant with more tokens where no significant difference allows it."""
    wordier = "a" if expected["tokens_a"] > expected["tokens_b"] else "b"
    return (expected["p_value"] >= 0.05 and expected["tokens_a"] != expected["tokens_b"]
            and actual.get("keep") == wordier != expected["keep"])


def expect_comparison(actual, expected: dict, what: str) -> None:
    """Fail unless `actual` equals the comparison `expected`; keeping the wordier variant without a significant
    difference is keeps_wordier_prompt."""
    problem = comparison_difference(actual, expected)
    if problem is not None:
        said = dict(what=what, problem=problem, expected=expected)
        keep_differs = keys_difference(actual, COMPARISON_KEYS) is None and problem == differs("keep", actual, expected)
        if keep_differs and kept_wordier(actual, expected):
            fail(tr("{what}: {problem}; the difference is not significant (p >= 0.05), so the variant with fewer "
                    "tokens is kept; expected {expected}", **said), "keeps_wordier_prompt")
        fail(tr("{what}: {problem}; expected {expected}", **said))


def results_text(results: list) -> str:
    """A short spelling of per-task results: the outcomes as 1/0 and the total tokens."""
    outcomes = "".join("1" if r["correct"] else "0" for r in results)
    return tr("<{count} results, correct {outcomes!r}, {tokens} tokens>", count=len(results), outcomes=outcomes,
              tokens=sum(r['tokens'] for r in results))


# ---------------------------------------------------------------- pick_effort

def most_tokens(results: dict) -> str:
    """The effort level whose tasks consumed the most tokens."""
    return max(results, key=lambda level: sum(r["tokens"] for r in results[level]))


def effort_summary(results: dict) -> str:
    """Each level's accuracy and total tokens, in words."""
    return tr(", ").join(tr("{level}: accuracy {correct}/{count}, {tokens} tokens", level=level,
                            correct=sum(bool(r['correct']) for r in runs), count=len(runs),
                            tokens=sum(r['tokens'] for r in runs)) for level, runs in results.items())


def expect_effort(actual, expected, results: dict, what: str) -> None:
    """Fail unless `actual` is the level `expected` (or None); paying for the most effort instead is
    more_effort_always."""
    if actual != expected or (actual is not None and not isinstance(actual, str)):
        dearest = most_tokens(results)
        more = actual == dearest != expected
        said = dict(what=what, got=actual, expected=expected, summary=effort_summary(results))
        fail(tr("{what} returned {got!r}, expected {expected!r}; {summary}", **said) if expected is not None else
             tr("{what} returned {got!r}, expected {expected!r} (when no level reaches the target, the evidence is "
                "missing: more effort only adds cost); {summary}", **said), "more_effort_always" if more else None)
