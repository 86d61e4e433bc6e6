"""Model answer for the reasoning topic: usage accounting across providers, paired prompt comparison, effort choice."""
from math import comb
from statistics import median

# (total input key, total output key, input details key, output details key) of the two OpenAI APIs
OPENAI_SHAPES = {
    "chat": ("prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"),
    "responses": ("input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"),
}
ANTHROPIC_CACHE_KEYS = ("cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation")
GEMINI_CAMEL = {"promptTokenCount": "prompt_token_count", "candidatesTokenCount": "candidates_token_count",
                "thoughtsTokenCount": "thoughts_token_count", "cachedContentTokenCount": "cached_content_token_count",
                "toolUsePromptTokenCount": "tool_use_prompt_token_count"}  # Gemini's REST spelling
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


def _detail(container, key):
    """A count inside a detail object; an absent or null object or count is 0."""
    return _count((container or {}).get(key), key)


def _within(part, part_name, total, total_name):
    """`part`, rejected when it exceeds the total that includes it."""
    if part > total:
        raise ValueError(f"{part_name} ({part}) exceeds {total_name} ({total}), which includes it")
    return part


def _shape(usage):
    """"chat", "gemini", "anthropic" or "responses", from the keys of the usage object.

    Anthropic (a cache key, or the thinking count only it reports) is looked at before the Responses detail keys:
    its SDK emits output_tokens_details too.
    """
    if "prompt_tokens" in usage:
        return "chat"
    if "prompt_token_count" in usage or any(key in usage for key in GEMINI_CAMEL):
        return "gemini"
    thinking = "thinking_tokens" in (usage.get("output_tokens_details") or {})
    if thinking or any(key in usage for key in ANTHROPIC_CACHE_KEYS):
        return "anthropic"
    if any(key in usage for key in ("input_tokens_details", "output_tokens_details")):
        return "responses"
    raise ValueError("usage: cannot tell whether input_tokens includes cached input (expected prompt_tokens, "
                     "prompt_token_count, Anthropic cache keys or thinking_tokens, or OpenAI Responses detail keys)")


def _anthropic_counts(usage):
    """Cache reads and writes are outside input_tokens; thinking is inside output_tokens."""
    output = _required(usage, "output_tokens")
    written = usage.get("cache_creation_input_tokens")
    if written is None:  # the per-retention breakdown, when the total is absent or null
        breakdown = usage.get("cache_creation")
        written = sum(_detail(breakdown, key) for key in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"))
    thinking = _detail(usage.get("output_tokens_details"), "thinking_tokens")
    return (_required(usage, "input_tokens"), _count(usage.get("cache_read_input_tokens"), "cache_read_input_tokens"),
            _count(written, "cache_creation_input_tokens"), output,
            _within(thinking, "thinking_tokens", output, "output_tokens"))


def _gemini_counts(usage):
    """Cached content is inside the prompt count; thoughts are billed as output beside the candidates."""
    usage = {GEMINI_CAMEL.get(key, key): value for key, value in usage.items()}
    prompt, candidates = _required(usage, "prompt_token_count"), _required(usage, "candidates_token_count")
    cached = _within(_count(usage.get("cached_content_token_count"), "cached_content_token_count"),
                     "cached_content_token_count", prompt, "prompt_token_count")
    thoughts = _count(usage.get("thoughts_token_count"), "thoughts_token_count")
    tool_prompt = _count(usage.get("tool_use_prompt_token_count"), "tool_use_prompt_token_count")
    return prompt - cached + tool_prompt, cached, 0, candidates + thoughts, thoughts


def _openai_counts(usage, shape):
    """Cached input inside the input total, reasoning inside the output total; cache writes assumed inside the
    input total apart from the cached tokens (undocumented), so full-price input never goes below 0."""
    input_key, output_key, input_details_key, output_details_key = OPENAI_SHAPES[shape]
    total_in, total_out = _required(usage, input_key), _required(usage, output_key)
    input_details = usage.get(input_details_key)
    cached = _within(_detail(input_details, "cached_tokens"), "cached_tokens", total_in, input_key)
    written = _detail(input_details, "cache_write_tokens")
    reasoning = _within(_detail(usage.get(output_details_key), "reasoning_tokens"), "reasoning_tokens", total_out,
                        output_key)
    return max(0, total_in - cached - written), cached, written, total_out, reasoning


def _counts(usage):
    """(input at full price, cached input, cache writes, output, reasoning) of one usage object."""
    if not isinstance(usage, dict):
        raise ValueError(f"usage must be a dict, got {type(usage).__name__}")
    shape = _shape(usage)
    if shape == "anthropic":
        return _anthropic_counts(usage)
    if shape == "gemini":
        return _gemini_counts(usage)
    return _openai_counts(usage, shape)


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
            "tokens_a": tokens_a, "tokens_b": tokens_b,
            "median_seconds_a": float(median(x["seconds"] for x in a)),
            "median_seconds_b": float(median(y["seconds"] for y in b)),
            "verifiable_a": _verifiable_share(a), "verifiable_b": _verifiable_share(b)}


def _verifiable_share(results):
    """The share of results marked verifiable (unmarked ones are not), or None when none says either way."""
    if all("verifiable" not in r for r in results):
        return None
    return sum(bool(r.get("verifiable")) for r in results) / len(results)


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
