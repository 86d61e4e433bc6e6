"""Model answer for the timeline topic: roofline prefill/decode times and the timeline of one agent session."""


def _rates(hw):
    """Sustained (FLOP/s, bytes/s): the peaks scaled by the optional efficiency factors."""
    return (hw["peak_flops"] * hw.get("flops_efficiency", 1.0),
            hw["mem_bandwidth"] * hw.get("bandwidth_efficiency", 1.0))


def prefill_seconds(model, hw, new_tokens, cached_tokens=0):
    """Prefill time: compute-bound for long inputs, bound by one read of the weights for short ones."""
    if new_tokens < 0:
        raise ValueError(f"new_tokens must be >= 0, got {new_tokens}")
    if cached_tokens < 0:
        raise ValueError(f"cached_tokens must be >= 0, got {cached_tokens}")
    flops, bandwidth = _rates(hw)
    n = new_tokens
    # 2 FLOPs per parameter per token, plus QK^T and PV of n queries over the cached and (causal) new keys
    work = 2 * model["params"] * n + 2 * model["n_layers"] * model["d_model"] * n * (2 * cached_tokens + n)
    return max(work / flops, model["weight_bytes"] / bandwidth)


def decode_step_seconds(model, hw, context_lens):
    """One decode step of a batch: compute grows with the batch, traffic is the weights plus every KV cache."""
    if any(length < 0 for length in context_lens):
        raise ValueError(f"context_lens must all be >= 0, got {list(context_lens)}")
    flops, bandwidth = _rates(hw)
    compute = 2 * model["params"] * len(context_lens) / flops
    memory = (model["weight_bytes"] + sum(context_lens) * model["kv_bytes_per_token"]) / bandwidth
    return max(compute, memory)


def _prefill_tokens(context, computed, prefix_cache):
    """(new_tokens, cached_tokens) of a prefill: a prefix cache keeps what is computed, else recompute it all."""
    return (context - computed, computed) if prefix_cache else (context, 0)


def _field(event, index, key, minimum):
    """The event's `key` value, rejected with a ValueError naming it when below `minimum`."""
    value = event[key]
    if value < minimum:
        raise ValueError(f"events[{index}]['{key}'] must be >= {minimum}, got {value}")
    return value


def session_timeline(model, hw, events, prefix_cache=True):
    """Walk the session's events and lay out prefill, decode and wait segments back to back."""
    segments = []
    spent = dict.fromkeys(("prefill", "decode", "tool", "network"), 0.0)
    context = computed = 0  # tokens in the conversation / tokens whose KV entries exist

    def advance(kind, seconds):
        """Append a segment of `seconds` that starts where the previous one ended."""
        start = segments[-1]["end"] if segments else 0.0
        segments.append({"kind": kind, "start": start, "end": start + seconds})
        spent[kind] += seconds

    for index, event in enumerate(events):
        kind = event["kind"]
        if kind in ("user", "tool_result"):
            context += _field(event, index, "tokens", 0)
        elif kind == "generate":
            m = _field(event, index, "tokens", 1)
            advance("prefill", prefill_seconds(model, hw, *_prefill_tokens(context, computed, prefix_cache)))
            if m > 1:  # token k = 2..m attends to the context plus the k - 1 tokens generated before it
                advance("decode", sum(decode_step_seconds(model, hw, [context + k]) for k in range(1, m)))
            context = computed = context + m
        elif kind in ("tool", "network"):
            advance(kind, float(_field(event, index, "seconds", 0)))
        else:
            raise ValueError(f"events[{index}]: unknown event kind {kind!r}")

    assert all(a["end"] == b["start"] for a, b in zip(segments, segments[1:])), "segments must be back to back"
    ttft = next((s["end"] for s in segments if s["kind"] == "prefill"), None)
    return {"segments": segments, "ttft": ttft, "total": segments[-1]["end"] if segments else 0.0, **spent}
