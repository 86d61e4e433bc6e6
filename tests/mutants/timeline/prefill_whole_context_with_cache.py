"""Bug: even with a prefix cache, every generate prefills the whole context from scratch."""


def _prefill_tokens(context, computed, prefix_cache):
    return context, 0
