"""Bug: a big enough batch always makes decode compute-bound: the critical batch is the weights' read time over
one sequence's compute time (the FLOP:byte ratio), as if each sequence's K/V read did not grow with the batch."""


def critical_batch_size(model, hw, context_len):
    _at_least_zero("context_len", context_len)
    flops, bandwidth = _rates(hw)
    return model["weight_bytes"] / bandwidth / (2 * model["params"] / flops)
