"""Serving: simulate a continuous-batching engine, then judge it the way a server is judged.

One request's tokens per second says little about a server. A server trades throughput against latency, and
its users feel the tail (p99), which a mean hides. Here you build a small engine loop that produces a server log,
then compute the metrics that log supports.

A request: {"id", "arrival", "prompt_tokens", "output_tokens"} plus optional "cancel_at" (an absolute time) and
"timeout" (seconds after arrival). A record (one per request, what a server logs):
{"id", "arrival", "first_token" (None if no token came), "token_times" (list), "finish",
 "status": "ok" | "cancelled" | "timeout", "prompt_tokens", "output_tokens" (tokens actually produced)}.
Times are in seconds (float).
"""


def simulate(requests, policy, max_num_seqs, cost):
    """Run an engine loop from t = 0 and return one record per request, in input order.

    Each step, at its start (time t):
      1. a request that has arrived (waiting or running) ends "cancelled" if cancel_at <= t, otherwise "timeout"
         if arrival + timeout <= t; its finish is t (ends are noticed only at step boundaries), and the tokens it
         already produced stay in its record;
      2. arrived requests are admitted in arrival order (equal arrivals: list order) while fewer than
         max_num_seqs run: under "continuous" at every step, under "static" only when nothing is running;
      3. the step lasts cost["base"] + cost["per_prefill_token"] * (prompt tokens of the requests admitted now)
         + cost["per_decode_seq"] * (requests that were running before this step and are still running);
      4. at its end every newly admitted request gets its first token and every earlier one its next token; a
         request with all its output_tokens ends "ok" then.
    When nothing runs and nothing waits, t jumps to the next arrival. Stop when every request has ended.
    My reading where the contract is silent: a cancel_at before the arrival cancels the request at the first
    step boundary at or after its arrival; a time within 1e-9 (relative) of a threshold has reached it.

    Args:
        requests: list of request dicts (see the module docstring).
        policy: "continuous" or "static".
        max_num_seqs: the most requests that may run at once (>= 1).
        cost: {"base", "per_prefill_token", "per_decode_seq"} in seconds, each >= 0.
    Returns:
        list of records, one per request, in the order of `requests`.
    Raises:
        ValueError naming the argument or field: an unknown policy, max_num_seqs < 1, a missing or negative cost
        key, a negative arrival, timeout or cancel_at, prompt_tokens or output_tokens below 1.
    """
    raise NotImplementedError("TODO: simulate — step the engine: end, admit, price the step, hand out tokens")


def serving_metrics(records, duration, slo=None, percentiles=(50, 90, 99)):
    """Latency statistics, throughput, goodput and counts of a server log.

    Only "ok" records enter the latency statistics:
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
         "counts": {"ok": n, "cancelled": n, "timeout": n}}.
    Raises:
        ValueError naming the argument: duration <= 0, an SLO key other than the four, a negative SLO, a
        percentile outside [0, 100].
    """
    raise NotImplementedError("TODO: serving_metrics — keep completed requests, collect each latency, summarise")
