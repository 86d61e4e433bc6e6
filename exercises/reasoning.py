"""Reasoning budgets: what a model call really consumed, whether a prompt change helped, which effort to pay for.

A reasoning model thinks in tokens you never see: a two-word answer can cost thousands of output tokens. The
only trustworthy account of a call is the usage object its API returns, and each provider shapes it differently.

Per-task results (for `compare_variants` and `pick_effort`) are dicts
{"correct": bool, "tokens": int (all tokens the task consumed), "seconds": float}.
"""


class UsageLedger:
    """Adds up the token consumption and wall time of model calls from the usage objects their APIs return."""

    def __init__(self):
        """An empty ledger: no calls, every total 0."""
        raise NotImplementedError("TODO: keep what each recorded call consumed, by call id")

    def record(self, call_id, usage, seconds) -> None:
        """Record one call: its id, its usage object exactly as the API returned it (a dict), its wall time.

        The shape is told apart by the keys of `usage`:
        - OpenAI Chat Completions (has "prompt_tokens"): "prompt_tokens", "completion_tokens", and optional
          "prompt_tokens_details": {"cached_tokens"}, "completion_tokens_details": {"reasoning_tokens"}.
          prompt_tokens INCLUDES the cached tokens; completion_tokens INCLUDES the reasoning tokens.
        - OpenAI Responses (has "input_tokens_details" or "output_tokens_details"): "input_tokens",
          "output_tokens", "input_tokens_details": {"cached_tokens"}, "output_tokens_details":
          {"reasoning_tokens"}. input_tokens INCLUDES cached_tokens; output_tokens INCLUDES reasoning_tokens.
        - Anthropic Messages (has "cache_read_input_tokens" or "cache_creation_input_tokens"): "input_tokens"
          EXCLUDES both cache counts (they are billed apart: reads cheaper, writes dearer); "output_tokens"
          includes any thinking, which this usage does not report apart (so its reasoning counts 0).
        Other keys ("total_tokens", "audio_tokens", "service_tier", ...) are ignored. A detail object or a
        detail count that is absent or null counts 0.

        Raises ValueError:
        - naming `call_id` when that id is already recorded (a retried call is recorded under its own id);
        - naming `usage` when it has "input_tokens" and "output_tokens" but neither kind of detail key: whether
          input_tokens includes cached input depends on the provider, so the shape must be known;
        - naming the count when a required top-level count is missing, null or negative;
        - naming the detail (`cached_tokens`, `reasoning_tokens`) when it is negative or larger than the total
          it is part of, or the Anthropic cache count when it is negative;
        - naming `seconds` when it is negative.
        A rejected call changes nothing: it is not counted.
        """
        raise NotImplementedError("TODO: tell the provider apart, normalise its counts, store them under call_id")

    def totals(self) -> dict:
        """What the recorded calls consumed together.

        Returns {"input": input tokens billed at the full input price (cached ones excluded),
                 "cached_input": input tokens read from a cache, "cache_write": input tokens written to a cache,
                 "output": every output token, reasoning included, "reasoning": reasoning tokens as reported
                 (0 where the provider does not report them apart), "calls": recorded calls,
                 "seconds": their summed wall time}; token counts and calls are ints.
        """
        raise NotImplementedError("TODO: sum the stored counts")

    def cost(self, prices) -> float:
        """What the recorded calls cost.

        Args:
            prices: per-token prices {"input", "cached_input", "cache_write", "output"} (all four required, >= 0;
                a missing or negative one is a ValueError naming it).
        Returns:
            input · prices["input"] + cached_input · prices["cached_input"] + cache_write · prices["cache_write"]
            + output · prices["output"], from `totals()`. Reasoning tokens are output tokens.
        """
        raise NotImplementedError("TODO: price each kind of token at its own price")


def compare_variants(a, b) -> dict:
    """Compare two prompt variants run on the same tasks: a[i] and b[i] are results of task i.

    Returns {"p_value": the exact two-sided McNemar p-value: with n01 tasks only `a` got right and n10 tasks only
                 `b` got right, 2 · P(X <= min(n01, n10)) for X ~ Binomial(n01 + n10, 1/2), at most 1, and 1 when
                 there is no discordant pair (tasks both got right, or both wrong, say nothing about which is
                 better);
             "keep": "a" or "b": when p_value < 0.05 the variant correct more often; otherwise the one with fewer
                 total tokens ("a" on a tie);
             "accuracy_a", "accuracy_b": fractions of tasks correct (float);
             "tokens_a", "tokens_b": total tokens of each variant (int)}.
    Raises:
        ValueError naming `a` or `b` when it is empty or they differ in length, and naming the field when a result
        lacks `correct`, `tokens` or `seconds`, or has negative `tokens` or `seconds`.
    """
    raise NotImplementedError("TODO: count the discordant pairs, exact binomial p-value, then decide")


def pick_effort(results, min_accuracy):
    """Choose the reasoning effort level to pay for.

    Args:
        results: {effort level (str): list of per-task results at that level}, all levels on the same tasks.
        min_accuracy: the accuracy a level must reach, in [0, 1]; an accuracy within 1e-9 (relative) of it counts
            as reaching it.
    Returns:
        The level with the fewest total tokens among those whose accuracy reaches min_accuracy (on equal totals,
        the one listed first), or None when no level reaches it.
    Raises:
        ValueError naming `min_accuracy` when it is outside [0, 1], naming `results` when it or a level's list is
        empty, and naming the field of a malformed result (as in compare_variants).
    """
    raise NotImplementedError("TODO: accuracy and total tokens per level; the cheapest level that is good enough")
