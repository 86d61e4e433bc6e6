"""Reasoning budgets: what a model call really consumed, whether a prompt change helped, which effort to pay for.

A reasoning model thinks in tokens you never see: a two-word answer can cost thousands of output tokens. The
only trustworthy account of a call is the usage object its API returns, and each provider shapes it differently.

Per-task results (for `compare_variants` and `pick_effort`) are dicts
{"correct": bool, "tokens": int (all tokens the task consumed), "seconds": float}, optionally with
"verifiable": bool (the answer came with something a reader can check: a test run, a cited line).
"""


class UsageLedger:
    """Adds up the token consumption and wall time of model calls from the usage objects their APIs return."""

    def __init__(self):
        """An empty ledger: no calls, every total 0."""
        raise NotImplementedError("TODO: keep what each recorded call consumed, by call id")

    def record(self, call_id, usage, seconds) -> None:
        """Record one call: its id, its usage object exactly as the API returned it (a dict), its wall time.

        The shape is told apart by the keys of `usage`, in this order:
        - OpenAI Chat Completions (has "prompt_tokens"): "prompt_tokens", "completion_tokens", and optional
          "prompt_tokens_details": {"cached_tokens", "cache_write_tokens"}, "completion_tokens_details":
          {"reasoning_tokens"}. prompt_tokens INCLUDES the cached tokens; completion_tokens INCLUDES the reasoning
          tokens.
        - Google Gemini (has "prompt_token_count", or one of the camelCase keys of Gemini's REST API and of the
          SDK's `model_dump(by_alias=True)`: "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount",
          "cachedContentTokenCount", "toolUsePromptTokenCount", which mean the same as their snake_case names):
          "prompt_token_count" INCLUDES "cached_content_token_count"; "thoughts_token_count" is NOT inside
          "candidates_token_count" and is billed as output beside it (reasoning = the thoughts);
          "tool_use_prompt_token_count" is billed as input.
        - Anthropic Messages (has a "cache_read_input_tokens", "cache_creation_input_tokens" or "cache_creation"
          key, even with a null value, or "output_tokens_details": {"thinking_tokens"}, a count only Anthropic
          reports; looked at before the next rule, because Anthropic's SDK also returns "output_tokens_details"):
          "input_tokens" EXCLUDES both cache counts (they are billed apart: reads cheaper, writes dearer);
          "cache_creation": {"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"} breaks the writes down and
          gives them when "cache_creation_input_tokens" is absent or null; "output_tokens" includes any thinking,
          which newer responses report as "output_tokens_details": {"thinking_tokens"} (older ones do not: their
          reasoning counts 0).
        - OpenAI Responses (has "input_tokens_details" or "output_tokens_details"): "input_tokens",
          "output_tokens", "input_tokens_details": {"cached_tokens", "cache_write_tokens"},
          "output_tokens_details": {"reasoning_tokens"}. input_tokens INCLUDES cached_tokens; output_tokens
          INCLUDES reasoning_tokens.
        OpenAI's cache_write_tokens are input written to the cache: they count as cache writes, not as input.
        Whether OpenAI's input total holds them, apart from cached_tokens, is not documented: this ledger ASSUMES
        it does, so the input billed at the full price is the total less the cached tokens and the writes, and 0
        when those two exceed the total (another reading allows such counts, so they are not rejected).
        Other keys ("total_tokens", "audio_tokens", "service_tier", ...) are ignored. A detail object or a
        detail count that is absent or null counts 0. The dict may come from `.model_dump()` (null fields
        kept), `.model_dump(exclude_none=True)`, `.model_dump(by_alias=True)`, `.to_dict()`, `.to_json_dict()` or
        parsed JSON: any of them is accepted while a key above tells the shape.

        Raises ValueError:
        - naming `call_id` when that id is already recorded (a retried call is recorded under its own id);
        - naming `usage` when no key above tells the shape (say "input_tokens" and "output_tokens" alone): whether
          input_tokens includes cached input depends on the provider, so the shape must be known;
        - naming the count when a required top-level count (the input and output totals; for Gemini
          prompt_token_count and candidates_token_count, in either spelling) is missing, null or negative; where
          the missing or null count is the one that tells the shape (Gemini's prompt_token_count), naming `usage`
          is right too;
        - naming the detail (`cached_tokens`, `reasoning_tokens`, `thinking_tokens`, `cached_content_token_count`)
          when it is larger than the total it is part of, and any count when it is negative;
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
             "tokens_a", "tokens_b": total tokens of each variant (int);
             "median_seconds_a", "median_seconds_b": the median of each variant's seconds (float; with an even
                 count, the mean of the two middle values);
             "verifiable_a", "verifiable_b": the fraction of each variant's results marked "verifiable": True
                 (a result without the key counts as not verifiable), or None when no result of that variant has
                 the key}.
    A p-value of 0.05 or more does not show that the variants are equally good: it says these tasks cannot tell
    them apart, so the cheaper one is kept until more evidence says otherwise.
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
