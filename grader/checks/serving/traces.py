"""The hand-worked engine traces of the public simulate checks, each derived step by step below.

All traces use COST: a step lasts 1 s, plus 0.25 s per prompt token admitted in it, plus 0.5 s per request that
was already running. Every number is a multiple of 1/4, so float64 holds every time exactly whatever the order of
the additions, and a tie (a cancel at a step boundary) is a true tie. `HAND` holds the derived outcome of each
trace as {id: (status, token_times, finish)}; the project tests prove the reference reproduces it. `LIMITS`
holds the resource limits (kv_blocks, max_num_batched_tokens, max_model_len) of the traces that have them.
"""

COST = {"base": 1.0, "per_prefill_token": 0.25, "per_decode_seq": 0.5}


def request(rid, arrival, prompt_tokens, output_tokens, **deadlines):
    """A request dict; `deadlines` may hold cancel_at (absolute) and timeout (seconds after arrival)."""
    return {"id": rid, "arrival": arrival, "prompt_tokens": prompt_tokens, "output_tokens": output_tokens,
            **deadlines}


# Admission limit, continuous, max_num_seqs = 2.
# t=0    a, b, c waiting; admit a, b (2 seats); step 1 + 0.25*8 = 3          -> t=3: a, b first token
# t=3    c waits (no seat); step 1 + 0.5*2 = 2                              -> t=5: a, b 2nd; b ok at 5
# t=5    admit c; step 1 + 0.25*8 + 0.5*1 = 3.5                             -> t=8.5: a 3rd, ok; c first
# t=8.5  step 1 + 0.5*1 = 1.5                                              -> t=10: c 2nd, ok
ADMISSION = [request("a", 0.0, 4, 3), request("b", 0.0, 4, 2), request("c", 0.0, 8, 2)]
ADMISSION_HAND = {"a": ("ok", [3.0, 5.0, 8.5], 8.5), "b": ("ok", [3.0, 5.0], 5.0),
                  "c": ("ok", [8.5, 10.0], 10.0)}

# Static against continuous, max_num_seqs = 2; c arrives at t=1 while a and b run.
# continuous:
# t=0    admit a, b; step 1 + 0.25*8 = 3                                    -> t=3: a first; b first, ok (1 token)
# t=3    c has arrived; admit c next to a; step 1 + 0.25*4 + 0.5*1 = 2.5    -> t=5.5: a 2nd; c first
# t=5.5  step 1 + 0.5*2 = 2                                                -> t=7.5: a 3rd; c 2nd, ok
# t=7.5  step 1.5                                                          -> t=9: a 4th, ok
# static: a new batch starts only when the engine is empty
# t=0    admit a, b; step 3                                                 -> t=3: a first; b ok
# t=3    a runs alone, c may not join; steps of 1.5                        -> t=4.5, 6, 7.5: a ok at 7.5
# t=7.5  admit c; step 1 + 0.25*4 = 2                                       -> t=9.5: c first
# t=9.5  step 1.5                                                          -> t=11: c 2nd, ok
BATCHING = [request("a", 0.0, 4, 4), request("b", 0.0, 4, 1), request("c", 1.0, 4, 2)]
BATCHING_HAND = {
    "continuous": {"a": ("ok", [3.0, 5.5, 7.5, 9.0], 9.0), "b": ("ok", [3.0], 3.0),
                   "c": ("ok", [5.5, 7.5], 7.5)},
    "static": {"a": ("ok", [3.0, 4.5, 6.0, 7.5], 7.5), "b": ("ok", [3.0], 3.0), "c": ("ok", [9.5, 11.0], 11.0)},
}

# One output token, continuous, max_num_seqs = 4: the first token is the last; it ends at its admission step.
# t=0    admit a, b (c arrives at 2); step 1 + 0.25*12 = 4                   -> t=4: a first, ok; b first
# t=4    admit c next to b; step 1 + 0.25*4 + 0.5*1 = 2.5                   -> t=6.5: b 2nd; c first, ok
# t=6.5  step 1.5                                                          -> t=8: b 3rd, ok
ONE_TOKEN = [request("a", 0.0, 4, 1), request("b", 0.0, 8, 3), request("c", 2.0, 4, 1)]
ONE_TOKEN_HAND = {"a": ("ok", [4.0], 4.0), "b": ("ok", [4.0, 6.5, 8.0], 8.0), "c": ("ok", [6.5], 6.5)}

# Cancellations, continuous, max_num_seqs = 1: b is cancelled while it waits, a while it runs.
# t=0    nothing due; admit a; step 1 + 0.25*4 = 2                          -> t=2: a first
# t=2    b's cancel_at 2 <= 2: cancelled at 2 with no token; step 1.5       -> t=3.5: a 2nd
# t=3.5  a's cancel_at 4 > 3.5; step 1.5                                   -> t=5: a 3rd
# t=5    a's cancel_at 4 <= 5: cancelled at 5 (noticed at the boundary) with its 3 tokens; admit c; step 2
#                                                                          -> t=7: c first, ok
CANCELS = [request("a", 0.0, 4, 4, cancel_at=4.0), request("b", 0.0, 4, 2, cancel_at=2.0),
           request("c", 0.0, 4, 1)]
CANCELS_HAND = {"a": ("cancelled", [2.0, 3.5, 5.0], 5.0), "b": ("cancelled", [], 2.0), "c": ("ok", [7.0], 7.0)}

# Timeouts, continuous, max_num_seqs = 1: b times out while it waits, c while it runs.
# t=0    a alone has arrived; admit a; step 2                               -> t=2: a first
# t=2    b (due 0.5 + 3 = 3.5) and c (due 1 + 6.5 = 7.5) wait; step 1.5     -> t=3.5: a 2nd
# t=3.5  b is due: timeout at 3.5; step 1.5                                -> t=5: a 3rd, ok
# t=5    admit c; step 2                                                    -> t=7: c first
# t=7    c not yet due; step 1.5                                           -> t=8.5: c 2nd
# t=8.5  c is due (7.5 <= 8.5): timeout at 8.5 with 2 of its 3 tokens
TIMEOUTS = [request("a", 0.0, 4, 3), request("b", 0.5, 4, 2, timeout=3.0), request("c", 1.0, 4, 3, timeout=6.5)]
TIMEOUTS_HAND = {"a": ("ok", [2.0, 3.5, 5.0], 5.0), "b": ("timeout", [], 3.5), "c": ("timeout", [7.0, 8.5], 8.5)}

# Idle gaps, continuous, max_num_seqs = 2: the clock jumps to the next arrival when the engine is empty.
# t=0    nothing has arrived: jump to 0.5; admit a; step 2                  -> t=2.5: a first
# t=2.5  step 1.5                                                          -> t=4: a 2nd, ok
# t=4    empty: jump to 10; admit b (c arrives at 10.25); step 2            -> t=12: b first, ok
# t=12   admit c; step 1 + 0.25*8 = 3                                       -> t=15: c first
# t=15   step 1.5                                                          -> t=16.5: c 2nd, ok
IDLE = [request("a", 0.5, 4, 2), request("b", 10.0, 4, 1), request("c", 10.25, 8, 2)]
IDLE_HAND = {"a": ("ok", [2.5, 4.0], 4.0), "b": ("ok", [12.0], 12.0), "c": ("ok", [15.0, 16.5], 16.5)}

# Equal arrival times, continuous, max_num_seqs = 1; the list is not in arrival order.
# Admission order: y, z (both at 1, list order), then x, w (both at 2, list order).
# t=0    nothing has arrived: jump to 1; admit y; step 2                    -> t=3: y ok
# t=3    admit z; step 1 + 0.25*8 = 3                                       -> t=6: z ok
# t=6    admit x; step 2                                                    -> t=8: x ok
# t=8    admit w; step 2                                                    -> t=10: w ok
TIES = [request("x", 2.0, 4, 1), request("y", 1.0, 4, 1), request("z", 1.0, 8, 1), request("w", 2.0, 4, 1)]
TIES_HAND = {"x": ("ok", [8.0], 8.0), "y": ("ok", [3.0], 3.0), "z": ("ok", [6.0], 6.0), "w": ("ok", [10.0], 10.0)}

# KV-cache limit and recompute preemption, continuous, max_num_seqs = 2, kv_blocks = 5, block_size = 4.
# A request's cache holds ceil((prompt tokens processed + tokens produced) / 4) blocks.
# t=0    d (arrives at 1) needs ceil((20 + 1) / 4) = 6 > 5 blocks at its end: rejected at 1, no token
# t=0    admit a: after its step 4 + 1 tokens = 2 blocks (5 free -> 3); admit b: 2 blocks (3 -> 1)
#        step 1 + 0.25*8 = 3                                               -> t=3: a, b first (5 tokens each)
# t=3    a, b grow to 6 tokens (2 blocks each, 4 <= 5); step 1 + 0.5*2 = 2  -> t=5: a, b 2nd
# t=5    7 tokens each, 4 blocks; step 2                                   -> t=7: a, b 3rd
# t=7    8 tokens each, 4 blocks; step 2                                   -> t=9: a, b 4th
# t=9    9 tokens each would need 3 + 3 = 6 > 5 blocks: preempt b (admitted last; its 4 tokens stay, its
#        blocks are freed, it waits at the queue's front); a alone: 3 blocks; step 1 + 0.5 = 1.5
#                                                                          -> t=10.5: a 5th
# t=10.5 a grows to 10 tokens (3 blocks), 2 left; b would recompute 4 + 4 tokens and hold ceil(9 / 4) = 3
#        blocks after its step: it waits; step 1.5                         -> t=12: a 6th, ok
# t=12   admit b: recompute 8 tokens (3 blocks after); step 1 + 0.25*8 = 3 -> t=15: b 5th
# t=15   step 1.5                                                          -> t=16.5: b 6th, ok
PREEMPTION = [request("a", 0.0, 4, 6), request("b", 0.0, 4, 6), request("d", 1.0, 20, 1)]
PREEMPTION_HAND = {"a": ("ok", [3.0, 5.0, 7.0, 9.0, 10.5, 12.0], 12.0),
                   "b": ("ok", [3.0, 5.0, 7.0, 9.0, 15.0, 16.5], 16.5), "d": ("rejected", [], 1.0)}
PREEMPTION_COUNTS = {"a": 0, "b": 1, "d": 0}

# Chunked prefill, continuous, max_num_seqs = 2, max_num_batched_tokens = 4: decodes first, then prompt chunks
# in admission order, each taking what is left of the 4 tokens.
# t=0    admit a (chunk 2, its whole prompt; 2 left) and b (chunk 2 of 6; 0 left); step 1 + 0.25*4 = 2
#                                                                          -> t=2: a first (last prompt token)
# t=2    a decodes (1 token; 3 left); b's next chunk is 3 of its last 4; step 1 + 0.25*3 + 0.5*1 = 2.25
#                                                                          -> t=4.25: a 2nd
# t=4.25 a decodes; b's last prompt token; step 1 + 0.25 + 0.5 = 1.75       -> t=6: a 3rd, ok; b first
# t=6    step 1 + 0.5 = 1.5                                                -> t=7.5: b 2nd, ok
CHUNKED = [request("a", 0.0, 2, 3), request("b", 0.0, 6, 2)]
CHUNKED_HAND = {"a": ("ok", [2.0, 4.25, 6.0], 6.0), "b": ("ok", [6.0, 7.5], 7.5)}

# max_model_len = 8, continuous, max_num_seqs = 1: b (6 + 3 = 9 tokens) is rejected when it arrives.
# t=0    admit a (4 + 4 = 8 tokens: allowed); step 1 + 0.25*4 = 2          -> t=2: a first
# t=0.5  b arrives and is rejected: finish 0.5, no token
# t=2    c (arrived at 1) waits for the seat; steps of 1.5                 -> t=3.5, 5, 6.5: a ok at 6.5
# t=6.5  admit c; step 2                                                   -> t=8.5: c first, ok
TOO_LONG = [request("a", 0.0, 4, 4), request("b", 0.5, 6, 3), request("c", 1.0, 4, 1)]
TOO_LONG_HAND = {"a": ("ok", [2.0, 3.5, 5.0, 6.5], 6.5), "b": ("rejected", [], 0.5), "c": ("ok", [8.5], 8.5)}

# name: (requests, policy, max_num_seqs, hand-derived outcome)
TRACES = {
    "admission": (ADMISSION, "continuous", 2, ADMISSION_HAND),
    "continuous": (BATCHING, "continuous", 2, BATCHING_HAND["continuous"]),
    "static": (BATCHING, "static", 2, BATCHING_HAND["static"]),
    "one_token": (ONE_TOKEN, "continuous", 4, ONE_TOKEN_HAND),
    "cancels": (CANCELS, "continuous", 1, CANCELS_HAND),
    "timeouts": (TIMEOUTS, "continuous", 1, TIMEOUTS_HAND),
    "idle": (IDLE, "continuous", 2, IDLE_HAND),
    "ties": (TIES, "continuous", 1, TIES_HAND),
    "preemption": (PREEMPTION, "continuous", 2, PREEMPTION_HAND),
    "chunked": (CHUNKED, "continuous", 2, CHUNKED_HAND),
    "too_long": (TOO_LONG, "continuous", 1, TOO_LONG_HAND),
}
# name: simulate's resource-limit arguments for the trace (none for the others)
LIMITS = {
    "preemption": {"kv_blocks": 5, "block_size": 4},
    "chunked": {"max_num_batched_tokens": 4},
    "too_long": {"max_model_len": 8},
}
# name: {id: preemptions} where a trace has any
PREEMPTIONS = {"preemption": PREEMPTION_COUNTS}
