"""Bug: reasoning tokens are added on top of an output total that already includes them."""
_solution_counts = _counts


def _counts(usage):
    input_full, cached, cache_write, output, reasoning = _solution_counts(usage)
    return input_full, cached, cache_write, output + reasoning, reasoning
