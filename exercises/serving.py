"""Serving: simulate a continuous-batching engine under real resource limits, then judge it as a server is judged.

One request's tokens per second says little about a server. Its users feel the tail (p99), which a mean hides, and
a tail measured over completed requests alone flatters a server that drops requests: read p99 with the counts and
goodput beside it. Seats, the KV cache, the token budget of a step and the model's length limit are managed
together. Here you build a small engine loop that produces a server log, then compute the metrics that log supports.

A request: {"id", "arrival", "prompt_tokens", "output_tokens"} plus optional "cancel_at" (an absolute time) and
"timeout" (seconds after arrival). A record (one per request, what a server logs):
{"id", "arrival", "first_token" (None if no token came), "token_times" (list), "finish",
 "status": "ok" | "cancelled" | "timeout" | "rejected", "prompt_tokens", "output_tokens" (tokens actually
 produced), "preemptions" (int)}.
Times are in seconds (float).
"""


def simulate(requests, policy, max_num_seqs, cost, kv_blocks=None, block_size=16, max_num_batched_tokens=None,
             max_model_len=None):
    """Run an engine loop from t = 0 and return one record per request, in input order.

    Rejection: a request with prompt_tokens + output_tokens > max_model_len, or one needing more than kv_blocks
    blocks at its end (ceil((prompt_tokens + output_tokens) / block_size)), ends "rejected" at its arrival:
    finish = arrival, no token. Only the limits given apply. These rules are the simulator's: it knows each
    request's true output length. vLLM refuses a request whose prompt plus *requested* max_tokens exceeds
    max_model_len; with max_tokens unset it serves the request and stops it at max_model_len (finish reason
    "length"). Nor does vLLM reject one request for the KV cache: it refuses to start when a request of
    max_model_len tokens would not fit in the cache.

    Each step, at its start (time t):
      1. a request that has arrived (waiting or running) ends "cancelled" if cancel_at <= t, otherwise "timeout"
         if arrival + timeout <= t; its finish is t (ends are noticed only at step boundaries), and the tokens it
         already produced stay in its record;
      2. the step's work for the running requests, in admission order: one decode token for each request that is
         past its prefill, then prompt (or recompute) tokens for the others, each taking what is left of
         max_num_batched_tokens (no budget: every decode, every prompt whole). This decodes-first order is vLLM
         V0's and V1's documented one; V1's scheduler walks the running requests in admission order instead, and
         with step 3's admission rule the two plan the same steps (only the request admitted last can still be
         prefilling);
      3. admission from the front of the waiting queue (arrival order, equal arrivals in list order, preempted
         requests first) while fewer than max_num_seqs run, under "continuous" at every step, under "static"
         only when nothing runs; while budget is left, and only if the blocks the request will hold after this
         step fit in the blocks the running requests leave free: the first that does not fit stops admission;
      4. preemption, with kv_blocks: a request's cache holds ceil(tokens / block_size) blocks, tokens = prompt
         (or recompute) tokens processed since its admission + tokens it produced since. While the running
         requests' blocks after the step exceed kv_blocks, the one admitted last is preempted (vLLM evicts the
         lowest priority, which under first come, first served is the request admitted last): its blocks are
         freed, its preemptions count rises, it keeps its tokens, and it goes back to the front of the waiting
         queue (several in one step: in admission order); the work is planned again. Readmitted, it prefills its
         prompt plus every token it produced before decoding on. That is recompute preemption without a prefix
         cache; vLLM V1's default prefix caching keeps the freed full blocks hashed, and a readmitted request
         reuses those not yet given to another;
      5. the step lasts cost["base"] + cost["per_prefill_token"] * (prompt and recompute tokens it processes)
         + cost["per_decode_seq"] * (decode tokens it processes);
      6. at its end each decode gives its request the next token, and a request whose prompt (or recompute)
         is now all processed gets a token; a request with all its output_tokens ends "ok" then.
    When nothing runs and nothing waits, t jumps to the next arrival. Stop when every request has ended.
    My reading where the contract is silent: a cancel_at before the arrival cancels the request at the first
    step boundary at or after its arrival; a time within 1e-9 (relative) of a threshold has reached it.

    Args:
        requests: list of request dicts (see the module docstring).
        policy: "continuous" or "static".
        max_num_seqs: the most requests that may run at once (>= 1).
        cost: {"base", "per_prefill_token", "per_decode_seq"} in seconds, each >= 0.
        kv_blocks: KV-cache blocks in all (>= 1), or None for no cache limit.
        block_size: tokens per block (>= 1).
        max_num_batched_tokens: tokens one step may process (>= 1), or None: no chunked prefill.
        max_model_len: the most prompt + output tokens a request may have (>= 1), or None.
    Returns:
        list of records, one per request, in the order of `requests`.
    Raises:
        ValueError naming the argument or field: an unknown policy, max_num_seqs < 1, a limit below 1, a missing
        or negative cost key, a negative arrival, timeout or cancel_at, prompt_tokens or output_tokens below 1.
    """
    raise NotImplementedError("TODO: simulate — step the engine: end, plan, admit, preempt, price, hand out tokens")


def serving_metrics(records, duration, slo=None, percentiles=(50, 90, 99)):
    """Latency statistics, throughput, goodput and counts of a server log.

    Only "ok" records enter the latency statistics (cancelled, timed-out and rejected ones are only counted):
      ttft = first_token - arrival;  tpot = (finish - first_token) / (output_tokens - 1), one-token requests left
      out;  itl = every gap between two consecutive token times, all requests pooled;  e2e = finish - arrival.
    Each is {"mean", "p<q>" for each q in percentiles} ("p50", "p99.9"), percentiles interpolated linearly
    between order statistics as numpy.percentile does by default; mean and percentiles are None when there
    are no values.

    Args:
        records: list of records as simulate returns them.
        duration: seconds of the measurement window (> 0); rates are per second of it.
        slo: optional {"ttft" | "tpot" | "itl" | "e2e": seconds}; for "itl" a request's largest gap is judged.
        percentiles: the percentiles to report, each in [0, 100].
    Returns:
        {"ttft", "tpot", "itl", "e2e": statistics as above,
         "request_throughput": completed requests / duration,
         "output_throughput": their output tokens / duration,
         "goodput": completed requests meeting every SLO given (value <= limit; a one-token request meets a
                    tpot or itl SLO) / duration,
         "counts": {"ok": n, "cancelled": n, "timeout": n, "rejected": n}} (0 where none).
    Raises:
        ValueError naming the argument: duration <= 0, an SLO key other than the four, a negative SLO, a
        percentile outside [0, 100].
    """
    raise NotImplementedError("TODO: serving_metrics — keep completed requests, collect each latency, summarise")
