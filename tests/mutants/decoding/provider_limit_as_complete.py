"""Bug: only OpenAI Chat's "length" counts as hitting the token limit; Anthropic's "max_tokens" and
"model_context_window_exceeded", Gemini's "MAX_TOKENS" and OpenAI Responses' "max_output_tokens" are taken as a
natural end."""

LIMIT_REASONS = frozenset({"length"})
