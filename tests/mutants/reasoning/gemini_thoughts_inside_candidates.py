"""Bug: Gemini's thoughts_token_count is taken as part of candidates_token_count, as OpenAI's reasoning is part of
its output total, so the thought tokens drop out of the output."""
_solution_counts = _counts


def _counts(usage):
    input_full, cached, cache_write, output, reasoning = _solution_counts(usage)
    if _shape(usage) == "gemini":
        output -= reasoning
    return input_full, cached, cache_write, output, reasoning
