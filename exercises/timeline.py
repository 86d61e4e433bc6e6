"""Timeline estimator: how long prefill, decode and a whole agent session take on given hardware.

`model` is a dict with `params`, `weight_bytes`, `kv_bytes_per_token`, `n_layers`, `d_model`.
`hw` is a dict with `peak_flops` (FLOP/s), `mem_bandwidth` (bytes/s) and optional `flops_efficiency` and
`bandwidth_efficiency` (fractions of the peak actually reached; default 1.0). Hardware figures are inputs: the
checks use datasheet numbers and name their source.
A pass or step takes the slower of its compute time (FLOPs / achievable FLOP/s) and its memory time (bytes it
reads / achievable bytes/s). All times are in seconds (float).
"""


def prefill_seconds(model, hw, new_tokens, cached_tokens=0):
    """Roofline time of one prefill pass.

    Args:
        model, hw: see the module docstring.
        new_tokens: tokens computed in this pass (n >= 0).
        cached_tokens: tokens already in the KV cache that the new tokens attend to (>= 0).
    Returns:
        0.0 when new_tokens is 0 (no pass runs). Otherwise the slower of:
        compute: F = 2·params·n + 2·n_layers·d_model·n·(2·cached_tokens + n) FLOPs;
        memory: the pass reads every weight once and the cached K/V of every cached token.
    Raises:
        ValueError naming `new_tokens` or `cached_tokens` when it is negative.
    """
    raise NotImplementedError("TODO: prefill_seconds — the slower of the compute time and the memory time")


def decode_step_seconds(model, hw, context_lens):
    """Roofline time of one decode step that produces one token for each sequence of a batch.

    Args:
        model, hw: see the module docstring.
        context_lens: list of ints, one per sequence (batch B = len(context_lens)): the tokens already in its
            KV cache.
    Returns:
        The slower of compute (2·params FLOPs per sequence) and memory: the step reads every weight once, shared
        by the batch, and the cached K/V of every context token of every sequence (the new token's own K/V write
        is not counted).
    Raises:
        ValueError naming `context_lens` when a length is negative.
    """
    raise NotImplementedError("TODO: decode_step_seconds — compute time vs. time to read what one step needs")


def critical_batch_size(model, hw, context_len):
    """The smallest batch at which a decode step stops being memory-bound.

    Args:
        model, hw: see the module docstring.
        context_len: tokens already cached in each sequence of the batch (>= 0).
    Returns:
        A float, not rounded: the batch B at which decode_step_seconds of B sequences of context_len tokens
        turns compute-bound (its compute time reaches its memory time). float('inf') when no batch ever gets
        there: one more sequence adds at least as much memory time as compute time (exactly as much counts).
    This times the whole step as one roofline, which is a model: kernel by kernel, the weight matmuls do turn
    compute-bound at large batches, while attention, which reads each sequence's own K/V, never does.
    Raises:
        ValueError naming `context_len` when it is negative.
    """
    raise NotImplementedError("TODO: critical_batch_size — the batch where compute time catches up with memory")


def decode_throughput(model, hw, batch, context_len):
    """Throughput of one decode step of `batch` sequences of `context_len` cached tokens each.

    Args:
        model, hw: see the module docstring.
        batch: sequences decoded together (>= 1).
        context_len: tokens already cached in each sequence (>= 0).
    Returns:
        {"step_seconds": the step's time (as decode_step_seconds),
         "tokens_per_second": tokens the whole batch produces per second,
         "tokens_per_second_per_sequence": tokens each sequence (each user) gets per second}
    Raises:
        ValueError naming `batch` when it is below 1, or `context_len` when it is negative.
    """
    raise NotImplementedError("TODO: decode_throughput — one step, seen by the server and by each user")


def session_timeline(model, hw, events, prefix_cache=True):
    """Timeline of one agent session.

    Args:
        model, hw: see the module docstring.
        events: list of dicts, handled in order:
            {"kind": "user" | "tool_result", "tokens": n}  n >= 0 tokens join the context (not yet computed);
            {"kind": "generate", "tokens": m}             m >= 1: prefill what is not computed (with a prefix
                cache only the pending tokens on top of the computed ones; without one the whole context from
                scratch); the first token arrives when that prefill ends; each token k = 2..m takes one
                batch-1 decode step whose context is every token before it; then the m tokens count as computed;
            {"kind": "tool" | "network", "seconds": s}     s >= 0: a wait;
            {"kind": "compact", "summary_tokens": k, "tokens": m}   m >= 1, k >= 0: compression. One generate of
                m tokens over the current context, as above, after which the context is replaced by the k summary
                tokens, none of them computed (the summary is a new prefix: no cache holds it yet). That is this
                exercise's model: a real compaction keeps the system prompt and tool definitions in front of the
                summary, and those still hit; the cache stops matching from the summary on.
        prefix_cache: whether computed context is kept between generate events.
    Returns:
        {"segments": [{"kind": "prefill" | "decode" | "tool" | "network" | "compact", "start", "end"}, ...] in
         order, one per prefill (also one of 0 s when nothing is pending), per decode run (only when m > 1) and
         per wait, each starting where the previous one ended; a compact's prefill and decode run are segments of
         kind "compact";
         "ttft": end of the first generate's prefill, "total": end of the session,
         "prefill", "decode", "tool", "network", "compact": the seconds spent in each kind of segment}
    Raises:
        ValueError naming the field (`tokens`, `summary_tokens`, `seconds`, `kind`) of a bad event.
    """
    raise NotImplementedError("TODO: session_timeline — walk the events and lay out prefill/decode/wait segments")
