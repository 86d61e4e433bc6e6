"""Hidden reference for the reasoning topic: a usage ledger over four providers' usage shapes, the exact McNemar
comparison of two prompt variants, and choosing a reasoning effort by need.

Written for clarity: each provider's usage is first turned into the same five counts (input billed at the full
price, cached input, cache writes, output, reasoning), then everything else works on those. The McNemar p-value
is computed exactly with fractions and converted to float64 once.
"""
from fractions import Fraction
from math import comb
from statistics import median

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


ANTHROPIC_CACHE_KEYS = ("cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation")
# Gemini's REST API (and the SDK's model_dump(by_alias=True)) spells its counts in camelCase; they mean the same.
GEMINI_CAMEL_CASE = {"promptTokenCount": "prompt_token_count", "candidatesTokenCount": "candidates_token_count",
                     "thoughtsTokenCount": "thoughts_token_count",
                     "cachedContentTokenCount": "cached_content_token_count",
                     "toolUsePromptTokenCount": "tool_use_prompt_token_count"}


def reports_thinking(usage):
    """Whether the usage has output_tokens_details.thinking_tokens, a count only Anthropic reports."""
    details = usage.get("output_tokens_details")
    return isinstance(details, dict) and "thinking_tokens" in details


def provider_of(usage):
    """Which API returned this usage object, told apart by its keys (CONTRACTS.md section 11).

    Anthropic is judged by its cache keys and its thinking count before the Responses detail keys: Anthropic's SDK
    also emits `output_tokens_details`, so that key alone does not mean OpenAI Responses.
    """
    if "prompt_tokens" in usage:
        return "openai_chat"
    if "prompt_token_count" in usage or any(key in usage for key in GEMINI_CAMEL_CASE):
        return "gemini"
    if any(key in usage for key in ANTHROPIC_CACHE_KEYS) or reports_thinking(usage):
        return "anthropic_messages"
    if "input_tokens_details" in usage or "output_tokens_details" in usage:
        return "openai_responses"
    raise ValueError("usage has none of prompt_tokens, prompt_token_count (or Gemini's camelCase counts), an "
                     "Anthropic key (cache_read_input_tokens, cache_creation_input_tokens, cache_creation, "
                     "output_tokens_details.thinking_tokens) or a Responses detail key (input_tokens_details, "
                     "output_tokens_details): whether input_tokens includes cached input depends on the provider, "
                     "so the shape must be known")


def openai_counts(usage, input_key, output_key, input_details_key, output_details_key):
    """Chat Completions or Responses: cached input inside the input total, reasoning inside the output total.

    Cache writes: OpenAI does not document whether `cache_write_tokens` are inside the input total, apart from
    `cached_tokens`. The ledger assumes they are (full-price input = total - cached - written) and rejects only
    what no reading allows: a negative count, cached tokens beyond the total. Counts that rule the assumption out
    (cached + written beyond the total) are accepted, with nothing of the total left at the full price.
    """
    total_in = required_count(usage, input_key)
    total_out = required_count(usage, output_key)
    input_details = usage.get(input_details_key)
    cached = part_of(optional_count(input_details, "cached_tokens"), "cached_tokens", total_in, input_key)
    written = optional_count(input_details, "cache_write_tokens")
    reasoning = part_of(optional_count(usage.get(output_details_key), "reasoning_tokens"), "reasoning_tokens",
                        total_out, output_key)
    return {"input": max(0, total_in - cached - written), "cached_input": cached, "cache_write": written,
            "output": total_out, "reasoning": reasoning}


def anthropic_counts(usage):
    """Anthropic Messages: input_tokens excludes cache reads and writes; thinking is inside output_tokens."""
    input_tokens = required_count(usage, "input_tokens")
    output_tokens = required_count(usage, "output_tokens")
    cache_write = optional_count(usage, "cache_creation_input_tokens")
    if usage.get("cache_creation_input_tokens") is None:  # the breakdown gives the writes when the total does not
        breakdown = usage.get("cache_creation")
        cache_write = (optional_count(breakdown, "ephemeral_5m_input_tokens")
                       + optional_count(breakdown, "ephemeral_1h_input_tokens"))
    thinking = part_of(optional_count(usage.get("output_tokens_details"), "thinking_tokens"), "thinking_tokens",
                       output_tokens, "output_tokens")
    return {"input": input_tokens, "cached_input": optional_count(usage, "cache_read_input_tokens"),
            "cache_write": cache_write, "output": output_tokens, "reasoning": thinking}


def gemini_counts(usage):
    """Google Gemini: cached content inside the prompt count; thoughts billed as output beside the candidates;
    the prompts of tool use billed as input. CamelCase keys (the REST form) are read as their snake_case names."""
    usage = {GEMINI_CAMEL_CASE.get(key, key): value for key, value in usage.items()}
    prompt = required_count(usage, "prompt_token_count")
    candidates = required_count(usage, "candidates_token_count")
    cached = part_of(optional_count(usage, "cached_content_token_count"), "cached_content_token_count", prompt,
                     "prompt_token_count")
    thoughts = optional_count(usage, "thoughts_token_count")
    tool_prompt = optional_count(usage, "tool_use_prompt_token_count")
    return {"input": prompt - cached + tool_prompt, "cached_input": cached, "cache_write": 0,
            "output": candidates + thoughts, "reasoning": thoughts}


def normalise(usage):
    """One usage object as {input (full price), cached_input, cache_write, output, reasoning}."""
    if not isinstance(usage, dict):
        raise ValueError(f"usage must be a dict (the usage object as its API returns it), got {type(usage).__name__}")
    provider = provider_of(usage)
    if provider == "openai_chat":
        return openai_counts(usage, "prompt_tokens", "completion_tokens", "prompt_tokens_details",
                             "completion_tokens_details")
    if provider == "openai_responses":
        return openai_counts(usage, "input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details")
    if provider == "gemini":
        return gemini_counts(usage)
    return anthropic_counts(usage)


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


def verifiable_share(results):
    """The fraction of results marked verifiable (an unmarked one counts as not verifiable); None when no result
    says either way."""
    if not any("verifiable" in result for result in results):
        return None
    return sum(1 for result in results if result.get("verifiable")) / len(results)


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
            "tokens_a": tokens_a, "tokens_b": tokens_b,
            "median_seconds_a": float(median(float(result["seconds"]) for result in a)),
            "median_seconds_b": float(median(float(result["seconds"]) for result in b)),
            "verifiable_a": verifiable_share(a), "verifiable_b": verifiable_share(b)}


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
