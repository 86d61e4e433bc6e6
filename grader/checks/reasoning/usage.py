"""Usage objects in the shapes the three APIs return, and the public ledgers built from them.

Field names follow each provider's reference (checked 2026-11): the OpenAI API reference, Chat Completions
`usage` (CompletionUsage: prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details,
completion_tokens_details) and Responses `usage` (ResponseUsage: input_tokens, input_tokens_details.cached_tokens,
output_tokens, output_tokens_details.reasoning_tokens, total_tokens); the Anthropic Messages API reference,
`usage` (input_tokens, cache_creation_input_tokens, cache_read_input_tokens, cache_creation, output_tokens,
server_tool_use, service_tier). OpenAI counts cached input inside the input total and reasoning inside the
output total; Anthropic counts cache reads and writes outside input_tokens and thinking inside output_tokens.
"""


def chat_usage(prompt, completion, cached=0, reasoning=0, details=True) -> dict:
    """An OpenAI Chat Completions usage; details=False leaves the detail objects out (older models)."""
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if details:
        usage["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
    return usage


def responses_usage(input_tokens, output_tokens, cached=0, reasoning=0) -> dict:
    """An OpenAI Responses usage."""
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": input_tokens + output_tokens}


def anthropic_usage(input_tokens, output_tokens, cache_read=0, cache_write=0) -> dict:
    """An Anthropic Messages usage; cache writes here all go to the 5-minute cache."""
    return {"input_tokens": input_tokens, "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read, "output_tokens": output_tokens,
            "cache_creation": {"ephemeral_5m_input_tokens": cache_write, "ephemeral_1h_input_tokens": 0},
            "server_tool_use": None, "service_tier": "standard"}


# Each ledger: (call_id, usage, seconds) in recording order.
LEDGERS = {
    "OpenAI Chat Completions": [
        # a reasoning model on a long, mostly cached prompt: cached in prompt_tokens, reasoning in completion
        ("chat-1", chat_usage(1486, 651, cached=1408, reasoning=512), 6.8),
        # an older model: no detail objects at all
        ("chat-2", chat_usage(19, 10, details=False), 0.4),
        # details returned as null, and a null count inside a detail object
        ("chat-3", {**chat_usage(2048, 300, details=False), "prompt_tokens_details": None,
                    "completion_tokens_details": {"reasoning_tokens": None, "audio_tokens": 0}}, 2.1),
    ],
    "OpenAI Responses": [
        ("resp-1", responses_usage(5200, 2311, cached=4864, reasoning=2304), 31.5),
        ("resp-2", responses_usage(36, 87), 1.2),
        # input_tokens_details left out: only the output detail key tells the shape
        ("resp-3", {"input_tokens": 900, "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 940}, 0.9),
    ],
    "Anthropic Messages": [
        # extended thinking: the thinking is inside output_tokens and not reported apart
        ("msg-1", anthropic_usage(25, 1450, cache_write=3900), 18.0),
        ("msg-2", anthropic_usage(60, 820, cache_read=3900), 9.5),
        # the cache counts returned as null
        ("msg-3", {**anthropic_usage(400, 95), "cache_creation_input_tokens": None,
                   "cache_read_input_tokens": None, "cache_creation": None}, 1.7),
    ],
}
LEDGERS["all three providers in one ledger"] = [call for calls in list(LEDGERS.values()) for call in calls]

# A hard question with a short visible answer: the answer is 7 tokens, the call billed 2,311 output tokens.
SHORT_ANSWER = "The answer is 42."
SHORT_ANSWER_TOKENS = 7
SHORT_ANSWER_CALL = ("puzzle-1", responses_usage(182, 2311, reasoning=2304), 38.2)

# Per-token prices with their sources: OpenAI API pricing page, GPT-5 (2025-08): $1.25 / 1M input, $0.125 / 1M
# cached input, $10 / 1M output, no cache-write charge; Anthropic pricing page, Claude Sonnet 4 (2025-05):
# $3 / 1M input, $3.75 / 1M 5-minute cache write, $0.30 / 1M cache read, $15 / 1M output.
GPT5_PRICES = {"input": 1.25e-6, "cached_input": 1.25e-7, "cache_write": 0.0, "output": 1e-5}
SONNET4_PRICES = {"input": 3e-6, "cached_input": 3e-7, "cache_write": 3.75e-6, "output": 1.5e-5}

# An agent loop on a 40,000-token repository context: after the first call, almost all input is cached.
AGENT_CALLS = {
    "GPT-5 on OpenAI Chat Completions": (GPT5_PRICES, [
        (f"step-{i}", chat_usage(40_000 + 700 * i, 900, cached=0 if i == 0 else 39_936 + 640 * (i - 1),
                                 reasoning=640), 7.5) for i in range(6)]),
    "Claude Sonnet 4 on Anthropic Messages": (SONNET4_PRICES, [
        (f"step-{i}", anthropic_usage(700, 900, cache_read=0 if i == 0 else 40_000 + 700 * (i - 1),
                                      cache_write=40_000 if i == 0 else 700), 8.0) for i in range(6)]),
}

# A call that timed out on the client after the server had done the work, then its retry: both consumed tokens.
RETRY_FIRST = ("review-7", chat_usage(12_400, 3100, cached=0, reasoning=2900), 60.0)
RETRY_SECOND = chat_usage(12_400, 2700, cached=12_288, reasoning=2500)
RETRY_ID = "review-7-retry-1"
