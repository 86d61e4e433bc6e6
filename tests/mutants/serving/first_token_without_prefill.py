"""Bug: the prompt's prefill costs nothing, so a request's first token comes as soon as its step's overhead ends."""


def _step_seconds(cost, prefill_tokens, decoding):
    return cost["base"] + cost["per_decode_seq"] * decoding
