"""Bug: a decode step is timed by its FLOPs alone, as if decode were compute-bound like prefill."""


def decode_step_seconds(model, hw, context_lens):
    if any(length < 0 for length in context_lens):
        raise ValueError(f"context_lens must all be >= 0, got {list(context_lens)}")
    flops, _ = _rates(hw)
    return 2 * model["params"] * len(context_lens) / flops
