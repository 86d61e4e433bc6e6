"""Hidden reference for the reasoning topic: a usage ledger over three providers' usage shapes, the exact McNemar
comparison of two prompt variants, and choosing a reasoning effort by need.

Written for clarity: each provider's usage is first turned into the same five counts (input billed at the full
price, cached input, cache writes, output, reasoning), then everything else works on those. The McNemar p-value
is computed exactly with fractions and converted to float64 once.
"""
from fractions import Fraction
from math import comb

TOTAL_KEYS = ("input", "cached_input", "cache_write", "output", "reasoning")
PRICE_KEYS = ("input", "cached_input", "cache_write", "output")
SIGNIFICANCE = 0.05
RELATIVE_SLACK = 1e-9  # an accuracy within 1e-9 (relative) of the target reaches it (contract conventions)


def required_count(usage, key):
    """A top-level count the usage must have: present, not null, >= 0."""
    if usage.get(key) is None:
        raise ValueError(f"usage has no {key!r} count")
    return token_count(usage[key], key)


def optional_count(container, key):
    """A count that may be absent or null (then 0), else >= 0."""
    if container is None or container.get(key) is None:
        return 0
    return token_count(container[key], key)


def token_count(value, key):
    """`value` as a token count, rejected with a ValueError naming `key` when negative."""
    if value < 0:
        raise ValueError(f"{key} must be >= 0, got {value}")
    return int(value)


def part_of(part, part_key, total, total_key):
    """A detail count checked against the total it is part of."""
    if part > total:
        raise ValueError(f"{part_key} = {part} is larger than {total_key} = {total}, which includes it")
    return part


def provider_of(usage):
    """Which API returned this usage object, told apart by its keys."""
    if "prompt_tokens" in usage:
        return "openai_chat"
    responses = "input_tokens_details" in usage or "output_tokens_details" in usage
    anthropic = "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage
    if responses and anthropic:
        raise ValueError("usage has both OpenAI Responses detail keys and Anthropic cache keys: unknown shape")
    if responses:
        return "openai_responses"
    if anthropic:
        return "anthropic_messages"
    raise ValueError("usage has neither prompt_tokens nor any detail key (input_tokens_details, "
                     "output_tokens_details, cache_read_input_tokens, cache_creation_input_tokens): whether "
                     "input_tokens includes cached input depends on the provider, so the shape must be known")


def normalise(usage):
    """One usage object as {input (full price), cached_input, cache_write, output, reasoning}."""
    provider = provider_of(usage)
    if provider == "openai_chat":
        prompt = required_count(usage, "prompt_tokens")
        completion = required_count(usage, "completion_tokens")
        cached = optional_count(usage.get("prompt_tokens_details"), "cached_tokens")
        reasoning = optional_count(usage.get("completion_tokens_details"), "reasoning_tokens")
        part_of(cached, "cached_tokens", prompt, "prompt_tokens")
        part_of(reasoning, "reasoning_tokens", completion, "completion_tokens")
        return {"input": prompt - cached, "cached_input": cached, "cache_write": 0,
                "output": completion, "reasoning": reasoning}
    if provider == "openai_responses":
        input_tokens = required_count(usage, "input_tokens")
        output_tokens = required_count(usage, "output_tokens")
        cached = optional_count(usage.get("input_tokens_details"), "cached_tokens")
        reasoning = optional_count(usage.get("output_tokens_details"), "reasoning_tokens")
        part_of(cached, "cached_tokens", input_tokens, "input_tokens")
        part_of(reasoning, "reasoning_tokens", output_tokens, "output_tokens")
        return {"input": input_tokens - cached, "cached_input": cached, "cache_write": 0,
                "output": output_tokens, "reasoning": reasoning}
    # Anthropic Messages: input_tokens excludes cache reads and writes; thinking is inside output_tokens
    input_tokens = required_count(usage, "input_tokens")
    output_tokens = required_count(usage, "output_tokens")
    return {"input": input_tokens,
            "cached_input": optional_count(usage, "cache_read_input_tokens"),
            "cache_write": optional_count(usage, "cache_creation_input_tokens"),
            "output": output_tokens, "reasoning": 0}


class UsageLedger:
    """Every recorded call's normalised counts and seconds, keyed by call id."""

    def __init__(self):
        self.calls = {}

    def record(self, call_id, usage, seconds):
        """Add one call; nothing changes when the call is rejected."""
        if call_id in self.calls:
            raise ValueError(f"call_id {call_id!r} is already recorded: record a retried call under its own id")
        if seconds < 0:
            raise ValueError(f"seconds must be >= 0, got {seconds}")
        counts = normalise(usage)
        self.calls[call_id] = {**counts, "seconds": float(seconds)}

    def totals(self):
        """The summed counts of every call, how many calls, and their seconds."""
        totals = {key: 0 for key in TOTAL_KEYS}
        seconds = 0.0
        for call in self.calls.values():
            for key in TOTAL_KEYS:
                totals[key] += call[key]
            seconds += call["seconds"]
        return {**totals, "calls": len(self.calls), "seconds": seconds}

    def cost(self, prices):
        """Each kind of input at its own price, all output (reasoning included) at the output price."""
        for key in PRICE_KEYS:
            if key not in prices:
                raise ValueError(f"prices has no {key!r} price")
            if prices[key] < 0:
                raise ValueError(f"prices[{key!r}] must be >= 0, got {prices[key]}")
        totals = self.totals()
        return float(sum(float(totals[key]) * float(prices[key]) for key in PRICE_KEYS))


def checked_results(results, name):
    """A non-empty list of per-task results, each with `correct`, and non-negative `tokens` and `seconds`."""
    if len(results) == 0:
        raise ValueError(f"{name} holds no results")
    for index, result in enumerate(results):
        for key in ("correct", "tokens", "seconds"):
            if key not in result:
                raise ValueError(f"{name}[{index}] has no {key!r}")
        for key in ("tokens", "seconds"):
            if result[key] < 0:
                raise ValueError(f"{name}[{index}][{key!r}] must be >= 0, got {result[key]}")
    return results


def accuracy(results):
    """The fraction of tasks answered correctly."""
    return sum(1 for result in results if result["correct"]) / len(results)


def total_tokens(results):
    """The tokens the tasks consumed together."""
    return sum(int(result["tokens"]) for result in results)


def mcnemar_exact_p(only_a, only_b):
    """Two-sided exact McNemar p-value from the discordant pairs.

    Under the null hypothesis each discordant pair is equally likely to favour either variant, so the smaller
    count is Binomial(n, 1/2) with n = only_a + only_b; the p-value doubles its lower tail, capped at 1.
    """
    n = only_a + only_b
    if n == 0:
        return 1.0
    lower_tail = sum(Fraction(comb(n, i), 2 ** n) for i in range(min(only_a, only_b) + 1))
    return float(min(Fraction(1), 2 * lower_tail))


def compare_variants(a, b):
    """Paired comparison of two prompt variants on the same tasks."""
    checked_results(a, "a")
    checked_results(b, "b")
    if len(a) != len(b):
        raise ValueError(f"a and b must be paired results of the same tasks: len(a) = {len(a)}, "
                         f"len(b) = {len(b)}")
    only_a = sum(1 for x, y in zip(a, b) if x["correct"] and not y["correct"])
    only_b = sum(1 for x, y in zip(a, b) if y["correct"] and not x["correct"])
    p_value = mcnemar_exact_p(only_a, only_b)
    tokens_a, tokens_b = total_tokens(a), total_tokens(b)
    if p_value < SIGNIFICANCE:
        keep = "a" if only_a > only_b else "b"
    else:
        keep = "a" if tokens_a <= tokens_b else "b"
    return {"p_value": p_value, "keep": keep, "accuracy_a": accuracy(a), "accuracy_b": accuracy(b),
            "tokens_a": tokens_a, "tokens_b": tokens_b}


def reaches(value, target):
    """Whether an accuracy reaches the target; within 1e-9 (relative) of it counts."""
    return value >= target - RELATIVE_SLACK * abs(target)


def pick_effort(results, min_accuracy):
    """The cheapest effort level (total tokens; ties: the first listed) whose accuracy reaches the target."""
    if not 0 <= min_accuracy <= 1:
        raise ValueError(f"min_accuracy must be in [0, 1], got {min_accuracy}")
    if len(results) == 0:
        raise ValueError("results holds no effort levels")
    best, best_tokens = None, None
    for level, level_results in results.items():
        checked_results(level_results, f"results[{level!r}]")
        if not reaches(accuracy(level_results), min_accuracy):
            continue
        tokens = total_tokens(level_results)
        if best is None or tokens < best_tokens:
            best, best_tokens = level, tokens
    return best
