"""Prompt-caching rules of two hosted APIs, as inputs to session_cost; each names its source and date.

They are product rules, not laws: prices, write surcharges, minimum lengths and cache granularity change by
provider, model and version (and retention, which session_cost leaves out, by product too). The checks pass them
in; a submission must never build them in.

- Anthropic, Claude Sonnet 4 (pricing page and prompt-caching guide, 2025-05): $3 / 1M input tokens, $3.75 / 1M
  for a 5-minute cache write (1.25x input), $0.30 / 1M for a cache read (0.1x), $15 / 1M output; a prompt is
  cached only from 1,024 tokens on. Anthropic caches at the breakpoints a request marks and publishes no block
  size: the checks model a server that caches whole 16-token blocks (vLLM's default KV block size).
- OpenAI, GPT-5 (pricing page, 2025-08; prompt-caching guide): $1.25 / 1M input, $0.125 / 1M cached input (0.1x),
  no charge for writing the cache, $10 / 1M output; automatic caching from 1,024 tokens on, hits in increments of
  128 tokens.
"""
from grader.engine import tr

SONNET4 = {
    "label": "Anthropic Claude Sonnet 4, 5-minute cache (2025-05)",
    "prices": {"input": 3e-6, "cache_write": 3.75e-6, "cache_read": 3e-7, "output": 1.5e-5},
    "block_size": 16,
    "min_tokens": 1024,
}
GPT5 = {
    "label": "OpenAI GPT-5 (2025-08)",
    "prices": {"input": 1.25e-6, "cache_write": 1.25e-6, "cache_read": 1.25e-7, "output": 1e-5},
    "block_size": 128,
    "min_tokens": 1024,
}
PROVIDERS = {"sonnet4": SONNET4, "gpt5": GPT5}

# Anthropic's 5-minute-cache ratios (2025-05) in units of the input price, for small hand-checked cases.
UNIT_PRICES = {"input": 1.0, "cache_write": 1.25, "cache_read": 0.1, "output": 5.0}


def label(provider: dict) -> str:
    """Whose rules `provider` holds, in the run's language (its "label" is the English)."""
    return {SONNET4["label"]: tr("Anthropic Claude Sonnet 4, 5-minute cache (2025-05)"),
            GPT5["label"]: tr("OpenAI GPT-5 (2025-08)")}[provider["label"]]
