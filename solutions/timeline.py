"""Model answer for the timeline topic: roofline prefill/decode times, where batching stops paying, and the
timeline of one agent session."""
import math

BOUNDARY_RTOL = 1e-9  # a K/V read within this of the compute time counts as reaching it (CONTRACTS.md)


def _rates(hw):
    """Sustained (FLOP/s, bytes/s): the peaks scaled by the optional efficiency factors."""
    return (hw["peak_flops"] * hw.get("flops_efficiency", 1.0),
            hw["mem_bandwidth"] * hw.get("bandwidth_efficiency", 1.0))


def _at_least_zero(name, value):
    """`value`, rejected with a ValueError naming `name` when negative."""
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def prefill_seconds(model, hw, new_tokens, cached_tokens=0):
    """Prefill time: compute-bound for long inputs, bound by reading the weights and the cache for short ones."""
    n = _at_least_zero("new_tokens", new_tokens)
    cached = _at_least_zero("cached_tokens", cached_tokens)
    if n == 0:
        return 0.0
    flops, bandwidth = _rates(hw)
    # 2 FLOPs per parameter per token, plus QK^T and PV of n queries over the cached and (causal) new keys
    work = 2 * model["params"] * n + 2 * model["n_layers"] * model["d_model"] * n * (2 * cached + n)
    traffic = model["weight_bytes"] + cached * model["kv_bytes_per_token"]
    return max(work / flops, traffic / bandwidth)


def decode_step_seconds(model, hw, context_lens):
    """One decode step of a batch: compute grows with the batch, traffic is the weights plus every KV cache."""
    if any(length < 0 for length in context_lens):
        raise ValueError(f"context_lens must all be >= 0, got {list(context_lens)}")
    flops, bandwidth = _rates(hw)
    compute = 2 * model["params"] * len(context_lens) / flops
    memory = (model["weight_bytes"] + sum(context_lens) * model["kv_bytes_per_token"]) / bandwidth
    return max(compute, memory)


def critical_batch_size(model, hw, context_len):
    """The batch where a decode step's compute time catches up with its memory time; inf if it never does."""
    _at_least_zero("context_len", context_len)
    flops, bandwidth = _rates(hw)
    # each extra sequence adds its compute but also its own K/V read; only the weights are shared
    compute_per_sequence = 2 * model["params"] / flops
    gain_per_sequence = compute_per_sequence - context_len * model["kv_bytes_per_token"] / bandwidth
    if gain_per_sequence <= BOUNDARY_RTOL * compute_per_sequence:
        return math.inf
    return model["weight_bytes"] / bandwidth / gain_per_sequence


def decode_throughput(model, hw, batch, context_len):
    """Tokens per second of one decode step of `batch` equal sequences, in all and for each sequence."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    step = decode_step_seconds(model, hw, [_at_least_zero("context_len", context_len)] * batch)
    return {"step_seconds": step, "tokens_per_second": batch / step, "tokens_per_second_per_sequence": 1 / step}


def _prefill_tokens(context, computed, prefix_cache):
    """(new_tokens, cached_tokens) of a prefill: a prefix cache keeps what is computed, else recompute it all."""
    return (context - computed, computed) if prefix_cache else (context, 0)


def _field(event, index, key, minimum):
    """The event's `key` value, rejected with a ValueError naming it when below `minimum`."""
    value = event[key]
    if value < minimum:
        raise ValueError(f"events[{index}]['{key}'] must be >= {minimum}, got {value}")
    return value


def _compacted(summary_tokens):
    """(context, computed) after a compaction: the summary is a new prefix that no cache holds yet."""
    return summary_tokens, 0


def session_timeline(model, hw, events, prefix_cache=True):
    """Walk the session's events and lay out prefill, decode, compaction and wait segments back to back."""
    segments = []
    spent = dict.fromkeys(("prefill", "decode", "tool", "network", "compact"), 0.0)
    context = computed = 0  # tokens in the conversation / tokens whose KV entries exist
    ttft = None

    def advance(kind, seconds):
        """Append a segment of `seconds` that starts where the previous one ended."""
        start = segments[-1]["end"] if segments else 0.0
        segments.append({"kind": kind, "start": start, "end": start + seconds})
        spent[kind] += seconds

    def write(m, prefill_kind, decode_kind):
        """Prefill what is pending, then m - 1 batch-1 decode steps; returns when the first token is out."""
        advance(prefill_kind, prefill_seconds(model, hw, *_prefill_tokens(context, computed, prefix_cache)))
        first_token = segments[-1]["end"]
        if m > 1:  # token k = 2..m attends to the context plus the k - 1 tokens generated before it
            advance(decode_kind, sum(decode_step_seconds(model, hw, [context + k]) for k in range(1, m)))
        return first_token

    for index, event in enumerate(events):
        kind = event["kind"]
        if kind in ("user", "tool_result"):
            context += _field(event, index, "tokens", 0)
        elif kind == "generate":
            m = _field(event, index, "tokens", 1)
            first_token = write(m, "prefill", "decode")
            ttft = first_token if ttft is None else ttft
            context = computed = context + m
        elif kind == "compact":
            m, summary = _field(event, index, "tokens", 1), _field(event, index, "summary_tokens", 0)
            write(m, "compact", "compact")
            context, computed = _compacted(summary)
        elif kind in ("tool", "network"):
            advance(kind, float(_field(event, index, "seconds", 0)))
        else:
            raise ValueError(f"events[{index}]: unknown event kind {kind!r}")

    assert all(a["end"] == b["start"] for a, b in zip(segments, segments[1:])), "segments must be back to back"
    return {"segments": segments, "ttft": ttft, "total": segments[-1]["end"] if segments else 0.0, **spent}
