"""Usage objects in the shapes the four APIs return, and the public ledgers built from them.

Field names follow each provider's reference and Python SDK (checked 2026-12 against openai 3.57, anthropic 2.16,
google-genai 3.6): OpenAI Chat Completions `usage` (CompletionUsage: prompt_tokens, completion_tokens,
total_tokens, prompt_tokens_details {cached_tokens, cache_write_tokens, ...}, completion_tokens_details
{reasoning_tokens, ...}) and Responses `usage` (ResponseUsage: input_tokens, input_tokens_details {cached_tokens,
cache_write_tokens}, output_tokens, output_tokens_details.reasoning_tokens, total_tokens); Anthropic Messages
`usage` (input_tokens, cache_creation_input_tokens, cache_read_input_tokens, cache_creation {ephemeral_5m_...,
ephemeral_1h_input_tokens}, output_tokens, output_tokens_details.thinking_tokens, server_tool_use,
service_tier); Gemini `usage_metadata` (GenerateContentResponseUsageMetadata: prompt_token_count,
cached_content_token_count, candidates_token_count, thoughts_token_count, tool_use_prompt_token_count,
total_token_count; camelCase in the REST API and in model_dump(by_alias=True): promptTokenCount, ...). OpenAI counts
cached input inside the input total and reasoning inside the output total; whether its cache writes are inside the
input total, apart from the cached tokens, is undocumented: the ledger assumes so (exercises/reasoning.py).
Anthropic counts cache reads and writes outside input_tokens and thinking inside output_tokens; Gemini counts
cached content inside the prompt count and thoughts outside the candidates count.
"""


def chat_usage(prompt, completion, cached=0, reasoning=0, details=True, written=None) -> dict:
    """An OpenAI Chat Completions usage; details=False leaves the detail objects out (older models); `written`
    adds prompt_tokens_details.cache_write_tokens."""
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if details:
        usage["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
        if written is not None:
            usage["prompt_tokens_details"]["cache_write_tokens"] = written
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
    return usage


def responses_usage(input_tokens, output_tokens, cached=0, reasoning=0, written=None) -> dict:
    """An OpenAI Responses usage; `written` adds input_tokens_details.cache_write_tokens."""
    usage = {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
             "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning},
             "total_tokens": input_tokens + output_tokens}
    if written is not None:
        usage["input_tokens_details"]["cache_write_tokens"] = written
    return usage


def anthropic_usage(input_tokens, output_tokens, cache_read=0, cache_write=0, thinking=None) -> dict:
    """An Anthropic Messages usage as its SDK dumps it; cache writes here all go to the 5-minute cache; `thinking`
    reports output_tokens_details.thinking_tokens (newer responses), None leaves the details null (older ones)."""
    return {"input_tokens": input_tokens, "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read, "output_tokens": output_tokens,
            "cache_creation": {"ephemeral_5m_input_tokens": cache_write, "ephemeral_1h_input_tokens": 0},
            "output_tokens_details": None if thinking is None else {"thinking_tokens": thinking},
            "server_tool_use": None, "service_tier": "standard"}


def gemini_usage(prompt, candidates, thoughts=None, cached=None, tool_prompt=None) -> dict:
    """A Gemini usage_metadata as its SDK's to_json_dict() gives it: counts the response left out are absent."""
    usage = {"prompt_token_count": prompt, "candidates_token_count": candidates,
             "total_token_count": prompt + candidates + (thoughts or 0) + (tool_prompt or 0)}
    for key, value in (("thoughts_token_count", thoughts), ("cached_content_token_count", cached),
                       ("tool_use_prompt_token_count", tool_prompt)):
        if value is not None:
            usage[key] = value
    return usage


def camel_case(usage: dict) -> dict:
    """A Gemini usage_metadata as the REST API returns it, and model_dump(by_alias=True) gives it: camelCase keys."""
    return {"".join(word.capitalize() if i else word for i, word in enumerate(key.split("_"))): value
            for key, value in usage.items()}


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
        # extended thinking on an older response: the thinking is inside output_tokens and not reported apart
        ("msg-1", anthropic_usage(25, 1450, cache_write=3900), 18.0),
        # a newer response reports its thinking inside output_tokens: output_tokens_details.thinking_tokens
        ("msg-2", anthropic_usage(60, 820, cache_read=3900, thinking=700), 9.5),
        # the cache counts returned as null (output_tokens_details null too, as SDK 2.x dumps it)
        ("msg-3", {**anthropic_usage(400, 95), "cache_creation_input_tokens": None,
                   "cache_read_input_tokens": None, "cache_creation": None}, 1.7),
        # the write total null, its per-retention breakdown given: the writes are the breakdown's sum
        ("msg-4", {**anthropic_usage(30, 210, cache_write=0), "cache_creation_input_tokens": None,
                   "cache_creation": {"ephemeral_5m_input_tokens": 1200, "ephemeral_1h_input_tokens": 800}}, 3.3),
        # no cache used, dumped with exclude_none (or to_dict() of unset fields): no cache key is left, and only
        # the thinking count, which no other provider reports, says this is Anthropic: 400 of the 480 are thinking
        ("msg-5", {"input_tokens": 52, "output_tokens": 480, "output_tokens_details": {"thinking_tokens": 400},
                   "service_tier": "standard"}, 5.1),
    ],
    "Google Gemini": [
        # a thinking model: 1,900 thought tokens billed as output beside the 120 candidate tokens
        ("gem-1", gemini_usage(2400, 120, thoughts=1900), 12.0),
        # an explicit context cache inside the prompt count, and a tool-use prompt billed as input
        ("gem-2", gemini_usage(33_000, 410, thoughts=620, cached=32_768, tool_prompt=150), 6.4),
        # no thinking: the thoughts count left out
        ("gem-3", gemini_usage(80, 35), 0.6),
        # the REST API's camelCase keys (model_dump(by_alias=True) gives the same): the same counts as snake_case
        ("gem-4", camel_case(gemini_usage(4100, 260, thoughts=1500, cached=2048)), 7.2),
    ],
    "OpenAI cache writes": [
        # cache_write_tokens are input written to the cache: inside the input total, billed as cache writes
        ("cw-1", chat_usage(9000, 300, cached=0, written=8960), 3.0),
        ("cw-2", responses_usage(9100, 280, cached=8960, written=128, reasoning=192), 2.5),
        # cached and written tokens together beyond the input total: the ledger's assumption (writes inside the
        # total, apart from the cached tokens) cannot hold here, but another reading allows it: nothing is billed
        # at the full input price
        ("cw-3", chat_usage(6000, 150, cached=5888, written=640), 1.4),
    ],
}
LEDGERS["every provider in one ledger"] = [call for calls in list(LEDGERS.values()) for call in calls]

# A hard question with a short visible answer: the answer is 7 tokens, the call billed 2,311 output tokens.
SHORT_ANSWER = "The answer is 42."
SHORT_ANSWER_TOKENS = 7
SHORT_ANSWER_CALL = ("puzzle-1", responses_usage(182, 2311, reasoning=2304), 38.2)

# Per-token prices with their sources: OpenAI API pricing page, GPT-5 (2025-08): $1.25 / 1M input, $0.125 / 1M
# cached input, $10 / 1M output, no cache-write premium (a written token costs the input price); Anthropic
# pricing page, Claude Sonnet 4 (2025-05): $3 / 1M input, $3.75 / 1M 5-minute cache write, $0.30 / 1M cache read,
# $15 / 1M output.
GPT5_PRICES = {"input": 1.25e-6, "cached_input": 1.25e-7, "cache_write": 1.25e-6, "output": 1e-5}
SONNET4_PRICES = {"input": 3e-6, "cached_input": 3e-7, "cache_write": 3.75e-6, "output": 1.5e-5}
# Google AI for Developers pricing page, Gemini 2.5 Flash (2025-06): $0.30 / 1M input, $0.075 / 1M cached input
# (context caching; its hourly storage charge is not a per-token price and is left out), $2.50 / 1M output,
# "including thinking tokens".
GEMINI_FLASH_PRICES = {"input": 3e-7, "cached_input": 7.5e-8, "cache_write": 0.0, "output": 2.5e-6}

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
