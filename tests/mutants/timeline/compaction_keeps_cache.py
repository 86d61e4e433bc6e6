"""Bug: after a compaction the summary counts as already computed, as if the prefix cache still matched: the next
prefill skips it."""


def _compacted(summary_tokens):
    return summary_tokens, summary_tokens
