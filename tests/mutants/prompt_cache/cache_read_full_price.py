"""Bug: tokens read from the cache are billed at the full input price instead of the cache-read price."""


def _turn_cost(prices, cached, written, uncached, output_tokens):
    return ((cached + uncached) * prices["input"] + written * prices["cache_write"]
            + output_tokens * prices["output"])
