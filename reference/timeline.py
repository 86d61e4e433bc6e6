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


def checked_tokens(event, index, key, minimum):
    """The event's token count under `key`, rejected with a ValueError naming it when below `minimum`."""
    tokens = event[key]
    if tokens < minimum:
        raise ValueError(f"events[{index}]: {key} must be >= {minimum}, got {tokens}")
    return tokens


def session_timeline(model, hw, events, prefix_cache=True):
    """Lay out one agent session's prefills, decode runs, compactions and waits back to back, with per-kind
    totals."""
    clock = 0.0
    context = 0    # tokens in the conversation so far
    computed = 0   # how many of them already have KV entries (a prefix cache keeps them)
    segments = []
    spent = {"prefill": 0.0, "decode": 0.0, "tool": 0.0, "network": 0.0, "compact": 0.0}
    ttft = None

    def add_segment(kind, seconds):
        """One segment of `seconds` from the clock on, counted in its kind's total."""
        nonlocal clock
        segments.append({"kind": kind, "start": clock, "end": clock + seconds})
        clock += seconds
        spent[kind] += seconds

    def generate_tokens(tokens, prefill_kind, decode_kind):
        """Prefill what is pending, then decode tokens 2..m, each over every token before it."""
        if prefix_cache:
            prefill = prefill_seconds(model, hw, context - computed, computed)
        else:
            prefill = prefill_seconds(model, hw, context, 0)
        add_segment(prefill_kind, prefill)
        prefill_end = clock
        if tokens > 1:
            decode = 0.0
            for k in range(2, tokens + 1):
                tokens_before_k = context + (k - 1)
                decode += decode_step_seconds(model, hw, [tokens_before_k])
            add_segment(decode_kind, decode)
        return prefill_end

    for index, event in enumerate(events):
        kind = event.get("kind")
        if kind in CONTEXT_KINDS:
            context += checked_tokens(event, index, "tokens", 0)
        elif kind == "generate":
            tokens = checked_tokens(event, index, "tokens", 1)
            prefill_end = generate_tokens(tokens, "prefill", "decode")
            if ttft is None:
                ttft = prefill_end
            context += tokens
            computed = context
        elif kind == "compact":
            # one call writes the summary over the whole current context; then the summary replaces the context,
            # and since the prefix changed no cache matches it: none of it is computed
            tokens = checked_tokens(event, index, "tokens", 1)
            summary_tokens = checked_tokens(event, index, "summary_tokens", 0)
            generate_tokens(tokens, "compact", "compact")
            context = summary_tokens
            computed = 0
        elif kind in WAIT_KINDS:
            seconds = float(event["seconds"])
            if seconds < 0:
                raise ValueError(f"events[{index}]: seconds must be >= 0, got {seconds}")
            add_segment(kind, seconds)
        else:
            raise ValueError(f"events[{index}]: unknown event kind {kind!r}")

    return {"segments": segments, "ttft": ttft, "total": clock, **spent}
