"""Bug: max_num_batched_tokens is ignored: a step prefills every admitted prompt whole and decodes every request."""
import math


def _token_budget(max_num_batched_tokens):
    return math.inf
