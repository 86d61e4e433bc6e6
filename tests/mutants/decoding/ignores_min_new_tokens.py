"""Bug: min_new_tokens is accepted and checked but never applied: eos may end the output at any step."""


def _block_eos(logits, eos_id, produced, min_new_tokens):
    return logits
