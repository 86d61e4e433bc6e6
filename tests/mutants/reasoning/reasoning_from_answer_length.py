"""Bug: output counts only the visible answer's tokens: the reasoning is taken out of the output total."""
_solution_counts = _counts


def _counts(usage):
    input_full, cached, cache_write, output, reasoning = _solution_counts(usage)
    return input_full, cached, cache_write, output - reasoning, reasoning
