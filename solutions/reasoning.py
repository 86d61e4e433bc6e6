"""Model answer for the reasoning topic: usage accounting across providers, paired prompt comparison, effort choice."""
from math import comb

# (shape, total input key, total output key, cached detail path, reasoning detail path)
OPENAI_SHAPES = {
    "chat": ("prompt_tokens", "completion_tokens", ("prompt_tokens_details", "cached_tokens"),
             ("completion_tokens_details", "reasoning_tokens")),
    "responses": ("input_tokens", "output_tokens", ("input_tokens_details", "cached_tokens"),
                  ("output_tokens_details", "reasoning_tokens")),
}
ANTHROPIC_CACHE_KEYS = ("cache_read_input_tokens", "cache_creation_input_tokens")
PRICE_KEYS = ("input", "cached_input", "cache_write", "output")


def _count(value, name):
    """A token count: None is 0; a negative one is a ValueError naming it."""
    value = 0 if value is None else value
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _required(usage, key):
    """A top-level count that must be present and not null."""
    if usage.get(key) is None:
        raise ValueError(f"usage is missing {key}")
    return _count(usage[key], key)


def _detail(usage, path, total, total_key):
    """A detail count (absent or null counts 0) that is part of `total`."""
    details = usage.get(path[0]) or {}
    value = _count(details.get(path[1]), path[1])
    if value > total:
        raise ValueError(f"{path[1]} ({value}) exceeds {total_key} ({total}), which includes it")
    return value


def _shape(usage):
    """"chat", "responses" or "anthropic", from the keys of the usage object."""
    if "prompt_tokens" in usage:
        return "chat"
    responses = any(key in usage for key in ("input_tokens_details", "output_tokens_details"))
    anthropic = any(key in usage for key in ANTHROPIC_CACHE_KEYS)
    if responses == anthropic:
        raise ValueError("usage: cannot tell whether input_tokens includes cached input "
                         "(expected OpenAI Responses detail keys or Anthropic cache keys, exactly one kind)")
    return "responses" if responses else "anthropic"


def _counts(usage):
    """(input at full price, cached input, cache writes, output, reasoning) of one usage object."""
    shape = _shape(usage)
    if shape == "anthropic":  # input_tokens excludes cache reads and writes; thinking is not reported apart
        cache_read, cache_write = (_count(usage.get(key), key) for key in ANTHROPIC_CACHE_KEYS)
        return _required(usage, "input_tokens"), cache_read, cache_write, _required(usage, "output_tokens"), 0
    input_key, output_key, cached_path, reasoning_path = OPENAI_SHAPES[shape]
    total_in, total_out = _required(usage, input_key), _required(usage, output_key)
    cached = _detail(usage, cached_path, total_in, input_key)
    reasoning = _detail(usage, reasoning_path, total_out, output_key)
    return total_in - cached, cached, 0, total_out, reasoning


class UsageLedger:
    """Token consumption and time of a set of model calls, from the usage objects the APIs return."""

    def __init__(self):
        self.records = {}

    def record(self, call_id, usage, seconds):
        """Record one call's usage and wall time; a duplicate id or a malformed usage changes nothing."""
        if call_id in self.records:
            raise ValueError(f"call_id {call_id!r} was already recorded (record a retry under its own id)")
        seconds = _count(seconds, "seconds")
        self.records[call_id] = (*_counts(usage), seconds)

    def totals(self):
        """Summed counts over the recorded calls, the number of calls and their seconds."""
        sums = [sum(column) for column in zip(*self.records.values())] or [0] * 6
        keys = ("input", "cached_input", "cache_write", "output", "reasoning")
        return {**dict(zip(keys, sums[:5])), "calls": len(self.records), "seconds": float(sums[5])}

    def cost(self, prices):
        """Each kind of token at its own per-token price; reasoning is output and is already in `output`."""
        for key in PRICE_KEYS:
            if key not in prices:
                raise ValueError(f"prices is missing {key}")
            _count(prices[key], f"prices[{key!r}]")
        totals = self.totals()
        return sum(totals[key] * prices[key] for key in PRICE_KEYS)


def _validate(results, name):
    """Reject an empty list or a result with a missing or negative field, naming it."""
    if not results:
        raise ValueError(f"{name} is empty")
    for i, result in enumerate(results):
        if "correct" not in result:
            raise ValueError(f"{name}[{i}] is missing correct")
        for key in ("tokens", "seconds"):
            if key not in result:
                raise ValueError(f"{name}[{i}] is missing {key}")
            _count(result[key], f"{name}[{i}] {key}")


def mcnemar_p_value(b, c):
    """Exact two-sided McNemar p-value for b and c discordant pairs: 2 P(X <= min(b, c)), X ~ Bin(b + c, 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2 ** n)


def compare_variants(a, b):
    """Exact McNemar test on paired results; keep the significantly better variant, else the cheaper one."""
    _validate(a, "a")
    _validate(b, "b")
    if len(a) != len(b):
        raise ValueError(f"a and b must hold paired results (len(a) = {len(a)}, len(b) = {len(b)})")
    a_only = sum(bool(x["correct"]) and not y["correct"] for x, y in zip(a, b))
    b_only = sum(bool(y["correct"]) and not x["correct"] for x, y in zip(a, b))
    p = mcnemar_p_value(a_only, b_only)
    tokens_a, tokens_b = sum(x["tokens"] for x in a), sum(y["tokens"] for y in b)
    if p < 0.05:
        keep = "a" if a_only > b_only else "b"
    else:
        keep = "a" if tokens_a <= tokens_b else "b"
    return {"p_value": p, "keep": keep,
            "accuracy_a": sum(bool(x["correct"]) for x in a) / len(a),
            "accuracy_b": sum(bool(y["correct"]) for y in b) / len(b),
            "tokens_a": tokens_a, "tokens_b": tokens_b}


def pick_effort(results, min_accuracy):
    """The effort level with the fewest total tokens among those whose accuracy reaches min_accuracy, else None."""
    if not 0 <= min_accuracy <= 1:
        raise ValueError(f"min_accuracy must be in [0, 1], got {min_accuracy}")
    if not results:
        raise ValueError("results is empty")
    feasible = []
    for order, (level, runs) in enumerate(results.items()):
        _validate(runs, f"results[{level!r}]")
        accuracy = sum(bool(r["correct"]) for r in runs) / len(runs)
        if accuracy >= min_accuracy * (1 - 1e-9):
            feasible.append((sum(r["tokens"] for r in runs), order, level))
    return min(feasible)[2] if feasible else None
