"""Timeline estimator: how long prefill, decode and a whole agent session take on given hardware.

`model` is a dict with `params`, `weight_bytes`, `kv_bytes_per_token`, `n_layers`, `d_model`.
`hw` is a dict with `peak_flops` (FLOP/s), `mem_bandwidth` (bytes/s) and optional `flops_efficiency` and
`bandwidth_efficiency` (fractions of the peak actually reached; default 1.0).
All times are in seconds (float).
"""


def prefill_seconds(model, hw, new_tokens, cached_tokens=0):
    """Roofline time of one prefill pass.

    Args:
        model, hw: see the module docstring.
        new_tokens: tokens computed in this pass (n >= 0).
        cached_tokens: tokens already in the KV cache that the new tokens attend to (>= 0).
    Returns:
        max(F / flops, weight_bytes / bandwidth) with
        F = 2·params·n + 2·n_layers·d_model·n·(2·cached_tokens + n), rates scaled by the efficiencies.
    Raises:
        ValueError naming `new_tokens` or `cached_tokens` when it is negative.
    """
    raise NotImplementedError("TODO: prefill_seconds — the slower of the compute time and the weight-read time")


def decode_step_seconds(model, hw, context_lens):
    """Roofline time of one decode step that produces one token for each sequence of a batch.

    Args:
        model, hw: see the module docstring.
        context_lens: list of ints, one per sequence (batch B = len(context_lens)): the tokens in its KV cache.
    Returns:
        The slower of the compute time (2·params FLOPs per sequence) and the memory time: everything a
        decode step has to read from memory, divided by the bandwidth.
    Raises:
        ValueError naming `context_lens` when a length is negative.
    """
    raise NotImplementedError("TODO: decode_step_seconds — compute time vs. time to read what one step needs")


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
            {"kind": "tool" | "network", "seconds": s}     s >= 0: a wait.
        prefix_cache: whether computed context is kept between generate events.
    Returns:
        {"segments": [{"kind": "prefill" | "decode" | "tool" | "network", "start", "end"}, ...] in order, one per
         prefill, per decode run (only when m > 1) and per wait, each starting where the previous one ended;
         "ttft": end of the first prefill, "total": end of the session,
         "prefill", "decode", "tool", "network": the seconds spent in each kind of segment}
    Raises:
        ValueError naming the field (`tokens`, `seconds`, `kind`) of a bad event.
    """
    raise NotImplementedError("TODO: session_timeline — walk the events and lay out prefill/decode/wait segments")
