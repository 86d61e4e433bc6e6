"""Bug: prefill and decode read the weights but not the cached K/V their attention needs."""


def prefill_seconds(model, hw, new_tokens, cached_tokens=0):
    n = _at_least_zero("new_tokens", new_tokens)
    cached = _at_least_zero("cached_tokens", cached_tokens)
    if n == 0:
        return 0.0
    flops, bandwidth = _rates(hw)
    work = 2 * model["params"] * n + 2 * model["n_layers"] * model["d_model"] * n * (2 * cached + n)
    return max(work / flops, model["weight_bytes"] / bandwidth)


def decode_step_seconds(model, hw, context_lens):
    if any(length < 0 for length in context_lens):
        raise ValueError(f"context_lens must all be >= 0, got {list(context_lens)}")
    flops, bandwidth = _rates(hw)
    return max(2 * model["params"] * len(context_lens) / flops, model["weight_bytes"] / bandwidth)
