"""Hidden reference for the timeline topic: roofline prefill and decode times, the batch at which decode stops
being memory-bound, and one agent session's timeline.

Written for clarity, in float64 Python arithmetic: every quantity is named (FLOPs, bytes, compute seconds,
memory seconds), and a session is walked one event, and one decode step, at a time.
"""

BOUNDARY_RTOL = 1e-9  # CONTRACTS.md: a quantity within 1e-9 (relative) of its threshold counts as reaching it
WAIT_KINDS = ("tool", "network")
CONTEXT_KINDS = ("user", "tool_result")


def achievable_rates(hw):
    """FLOP/s and bytes/s the hardware sustains: the peaks times the optional efficiency factors."""
    flops_per_second = float(hw["peak_flops"]) * float(hw.get("flops_efficiency", 1.0))
    bytes_per_second = float(hw["mem_bandwidth"]) * float(hw.get("bandwidth_efficiency", 1.0))
    return flops_per_second, bytes_per_second


def prefill_seconds(model, hw, new_tokens, cached_tokens=0):
    """Roofline time of one prefill of `new_tokens` whose attention also reads `cached_tokens` earlier keys."""
    if new_tokens < 0:
        raise ValueError(f"new_tokens must be >= 0, got {new_tokens}")
    if cached_tokens < 0:
        raise ValueError(f"cached_tokens must be >= 0, got {cached_tokens}")
    if new_tokens == 0:
        return 0.0  # nothing to compute: no pass runs, nothing is read
    flops_per_second, bytes_per_second = achievable_rates(hw)
    n = float(new_tokens)
    cached = float(cached_tokens)
    matmul_flops = 2.0 * float(model["params"]) * n
    attention_flops = 2.0 * float(model["n_layers"]) * float(model["d_model"]) * n * (2.0 * cached + n)
    compute_seconds = (matmul_flops + attention_flops) / flops_per_second
    bytes_read = float(model["weight_bytes"]) + cached * float(model["kv_bytes_per_token"])
    memory_seconds = bytes_read / bytes_per_second
    return max(compute_seconds, memory_seconds)


def decode_step_seconds(model, hw, context_lens):
    """Roofline time of one decode step for a batch: all weights plus every sequence's KV cache are read."""
    kv_tokens = 0.0
    for length in context_lens:
        if length < 0:
            raise ValueError(f"context_lens must all be >= 0, got {length}")
        kv_tokens += float(length)
    flops_per_second, bytes_per_second = achievable_rates(hw)
    batch = float(len(context_lens))
    compute_seconds = 2.0 * float(model["params"]) * batch / flops_per_second
    bytes_read = float(model["weight_bytes"]) + kv_tokens * float(model["kv_bytes_per_token"])
    memory_seconds = bytes_read / bytes_per_second
    return max(compute_seconds, memory_seconds)


def critical_batch_size(model, hw, context_len):
    """Smallest batch of `context_len`-token sequences whose decode step is compute-bound; inf when none is.

    At batch B a step computes B * compute_per_sequence and reads weights + B * kv_read_per_sequence; they meet
    at B = weights / (compute_per_sequence - kv_read_per_sequence), all in seconds.
    """
    if context_len < 0:
        raise ValueError(f"context_len must be >= 0, got {context_len}")
    flops_per_second, bytes_per_second = achievable_rates(hw)
    weights_seconds = float(model["weight_bytes"]) / bytes_per_second
    compute_per_sequence = 2.0 * float(model["params"]) / flops_per_second
    kv_read_per_sequence = float(context_len) * float(model["kv_bytes_per_token"]) / bytes_per_second
    if kv_read_per_sequence >= compute_per_sequence * (1.0 - BOUNDARY_RTOL):
        return float("inf")  # every added sequence adds at least as much memory time as compute time
    return weights_seconds / (compute_per_sequence - kv_read_per_sequence)


def decode_throughput(model, hw, batch, context_len):
    """One decode step of `batch` sequences of `context_len` tokens: its time, and tokens/s in all and per user."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    if context_len < 0:
        raise ValueError(f"context_len must be >= 0, got {context_len}")
    step_seconds = decode_step_seconds(model, hw, [context_len] * batch)
    return {"step_seconds": step_seconds,
            "tokens_per_second": float(batch) / step_seconds,
            "tokens_per_second_per_sequence": 1.0 / step_seconds}


def session_timeline(model, hw, events, prefix_cache=True):
    """Lay out one agent session's prefills, decode runs and waits back to back, with per-kind totals."""
    clock = 0.0
    context = 0    # tokens in the conversation so far
    computed = 0   # how many of them already have KV entries (a prefix cache keeps them)
    segments = []
    spent = {"prefill": 0.0, "decode": 0.0, "tool": 0.0, "network": 0.0}
    ttft = None

    for index, event in enumerate(events):
        kind = event.get("kind")
        if kind in CONTEXT_KINDS:
            tokens = event["tokens"]
            if tokens < 0:
                raise ValueError(f"events[{index}]: tokens must be >= 0, got {tokens}")
            context += tokens
        elif kind == "generate":
            tokens = event["tokens"]
            if tokens < 1:
                raise ValueError(f"events[{index}]: generate tokens must be >= 1, got {tokens}")
            if prefix_cache:
                prefill = prefill_seconds(model, hw, context - computed, computed)
            else:
                prefill = prefill_seconds(model, hw, context, 0)
            segments.append({"kind": "prefill", "start": clock, "end": clock + prefill})
            clock += prefill
            spent["prefill"] += prefill
            if ttft is None:
                ttft = clock
            if tokens > 1:
                decode = 0.0
                for k in range(2, tokens + 1):
                    tokens_before_k = context + (k - 1)
                    decode += decode_step_seconds(model, hw, [tokens_before_k])
                segments.append({"kind": "decode", "start": clock, "end": clock + decode})
                clock += decode
                spent["decode"] += decode
            context += tokens
            computed = context
        elif kind in WAIT_KINDS:
            seconds = float(event["seconds"])
            if seconds < 0:
                raise ValueError(f"events[{index}]: seconds must be >= 0, got {seconds}")
            segments.append({"kind": kind, "start": clock, "end": clock + seconds})
            clock += seconds
            spent[kind] += seconds
        else:
            raise ValueError(f"events[{index}]: unknown event kind {kind!r}")

    return {"segments": segments, "ttft": ttft, "total": clock, **spent}
