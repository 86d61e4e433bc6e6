"""Bug: a decode step's memory time counts the weights but not the KV cache every sequence has to read."""


def decode_step_seconds(model, hw, context_lens):
    if any(length < 0 for length in context_lens):
        raise ValueError(f"context_lens must all be >= 0, got {list(context_lens)}")
    flops, bandwidth = _rates(hw)
    return max(2 * model["params"] * len(context_lens) / flops, model["weight_bytes"] / bandwidth)
