"""Model answer for the serving topic: a continuous-batching engine loop and the metrics a server is judged by."""
import math
from collections import deque
from itertools import pairwise

STATUSES = ("ok", "cancelled", "timeout", "rejected")
SLO_KEYS = ("ttft", "tpot", "itl", "e2e")
RELATIVE = 1e-9  # a time within 1e-9 (relative) of a threshold has reached it (the contract's boundary rule)


def _reached(t, threshold):
    """t >= threshold, up to the contract's relative tolerance."""
    return t >= threshold - RELATIVE * abs(threshold)


def _check_arguments(requests, policy, max_num_seqs, cost, limits):
    """Raise ValueError naming the first bad argument of simulate."""
    if policy not in ("continuous", "static"):
        raise ValueError(f"policy must be 'continuous' or 'static', got {policy!r}")
    if max_num_seqs < 1:
        raise ValueError(f"max_num_seqs must be >= 1, got {max_num_seqs}")
    for name, value in limits.items():
        if value is not None and value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    for key in ("base", "per_prefill_token", "per_decode_seq"):
        if key not in cost:
            raise ValueError(f"cost is missing {key!r}")
        if cost[key] < 0:
            raise ValueError(f"cost[{key!r}] must be >= 0, got {cost[key]}")
    for i, r in enumerate(requests):
        if r["arrival"] < 0:
            raise ValueError(f"requests[{i}]['arrival'] must be >= 0, got {r['arrival']}")
        for key in ("prompt_tokens", "output_tokens"):
            if r[key] < 1:
                raise ValueError(f"requests[{i}]['{key}'] must be >= 1, got {r[key]}")
        for key in ("cancel_at", "timeout"):
            if r.get(key) is not None and r[key] < 0:
                raise ValueError(f"requests[{i}]['{key}'] must be >= 0, got {r[key]}")


def _early_end(request, t):
    """"cancelled" or "timeout" if the request is to end at step boundary t (cancel wins), else None."""
    if request.get("cancel_at") is not None and _reached(t, request["cancel_at"]):
        return "cancelled"
    if request.get("timeout") is not None and _reached(t, request["arrival"] + request["timeout"]):
        return "timeout"
    return None


def _rejected(request, kv_blocks, block_size, max_model_len):
    """Whether a request is refused at arrival: longer than max_model_len, or more blocks than the cache has (the
    simulator's rule, by the true output length; vLLM judges the requested max_tokens, and refuses to start rather
    than reject a request for the cache)."""
    tokens = request["prompt_tokens"] + request["output_tokens"]
    too_long = max_model_len is not None and tokens > max_model_len
    return too_long or (kv_blocks is not None and math.ceil(tokens / block_size) > kv_blocks)


def _token_budget(max_num_batched_tokens):
    """The tokens one step may process: unlimited without chunked prefill."""
    return math.inf if max_num_batched_tokens is None else max_num_batched_tokens


def _seats(running, policy, max_num_seqs):
    """How many waiting requests may take a seat now: every step under continuous batching, only in an empty
    engine under static batching."""
    if policy == "static" and running:
        return 0
    return max_num_seqs - len(running)


def _resume(state, request, record):
    """A request's state on admission: its prompt and every token it already produced to (re)compute, no cache
    (no prefix cache here: vLLM V1's would still hold its freed full blocks until they are reused)."""
    state["todo"], state["cached"] = request["prompt_tokens"] + record["output_tokens"], 0


def _victim(running):
    """The running request recompute preemption evicts: the one admitted last (vLLM's lowest priority under
    first come, first served)."""
    return running[-1]


def _plan(running, states, budget):
    """{request: tokens it processes this step}: decodes first, then prompt chunks, each in admission order (V1
    walks `running` in admission order instead: the same plan, since only the last admitted can be prefilling)."""
    work, left = {}, budget
    for i in running:
        if states[i]["todo"] == 0 and left >= 1:
            work[i], left = 1, left - 1
    for i in running:
        if states[i]["todo"] > 0 and left >= 1:
            work[i] = min(states[i]["todo"], left)
            left -= work[i]
    return work


def _blocks_after(state, tokens, block_size):
    """The blocks a request holds after a step that processes `tokens` of its tokens (a new token included)."""
    if state["todo"] == 0:
        return math.ceil((state["cached"] + (tokens > 0)) / block_size)
    return math.ceil((state["cached"] + tokens + (tokens == state["todo"])) / block_size)


def _blocks_needed(running, states, work, block_size):
    """The blocks the running requests hold after the planned step."""
    return sum(_blocks_after(states[i], work.get(i, 0), block_size) for i in running)


def _step_seconds(cost, prefill_tokens, decoding):
    """One engine step: fixed overhead, the prompt or recompute tokens it processes, one decode per request."""
    return cost["base"] + cost["per_prefill_token"] * prefill_tokens + cost["per_decode_seq"] * decoding


def simulate(requests, policy, max_num_seqs, cost, kv_blocks=None, block_size=16, max_num_batched_tokens=None,
             max_model_len=None):
    """Step the engine from t = 0 until every request has ended; one record per request, in input order."""
    _check_arguments(requests, policy, max_num_seqs, cost, {
        "kv_blocks": kv_blocks, "block_size": block_size, "max_num_batched_tokens": max_num_batched_tokens,
        "max_model_len": max_model_len})
    budget = _token_budget(max_num_batched_tokens)
    capacity = math.inf if kv_blocks is None else kv_blocks
    records = [{"id": r["id"], "arrival": r["arrival"], "first_token": None, "token_times": [], "finish": None,
                "status": None, "prompt_tokens": r["prompt_tokens"], "output_tokens": 0, "preemptions": 0}
               for r in requests]
    states = [{"todo": 0, "cached": 0} for _ in requests]  # tokens left to prefill; tokens in the cache
    pending = deque()  # not arrived yet, in arrival order
    for i in sorted(range(len(requests)), key=lambda i: (requests[i]["arrival"], i)):
        if _rejected(requests[i], kv_blocks, block_size, max_model_len):
            records[i]["finish"], records[i]["status"] = requests[i]["arrival"], "rejected"
        else:
            pending.append(i)
    waiting, running = [], []  # arrived and not running (queue order); running, in admission order
    t = 0.0

    def finish(i, status):
        """End request i at the current time."""
        records[i]["finish"], records[i]["status"] = t, status

    while pending or waiting or running:
        while pending and _reached(t, requests[pending[0]]["arrival"]):
            waiting.append(pending.popleft())
        # 1. ends noticed at the step boundary: waiting and running requests alike
        for i in waiting + running:
            status = _early_end(requests[i], t)
            if status is not None:
                finish(i, status)
        waiting = [i for i in waiting if records[i]["status"] is None]
        running = [i for i in running if records[i]["status"] is None]
        # 2. admission in queue order, into free seats, while the budget lasts and the first chunk fits
        work = _plan(running, states, budget)
        left = budget - sum(work.values())
        free = capacity - _blocks_needed(running, states, work, block_size)
        for _ in range(_seats(running, policy, max_num_seqs)):
            if not waiting or left < 1:
                break
            i = waiting[0]
            _resume(states[i], requests[i], records[i])
            chunk = min(states[i]["todo"], left)
            need = _blocks_after(states[i], chunk, block_size)
            if need > free:
                break  # first come, first served: nobody overtakes the head of the queue
            running.append(waiting.pop(0))
            left, free = left - chunk, free - need
        if not running:
            if not pending:  # the last requests ended at this boundary
                break
            t = float(requests[pending[0]]["arrival"])  # idle: jump to the next arrival
            continue
        # 3. preemption: evict until the step's cache fits; the evicted recompute when admitted again
        work = _plan(running, states, budget)
        evicted = []
        while _blocks_needed(running, states, work, block_size) > capacity:
            i = _victim(running)
            running.remove(i)
            records[i]["preemptions"] += 1
            evicted.append(i)
            work = _plan(running, states, budget)
        waiting = evicted[::-1] + waiting  # the evicted go first, in admission order
        # 4. the step: overhead + every prompt or recompute token it processes + one decode per decoding request
        prefill = sum(tokens for i, tokens in work.items() if states[i]["todo"] > 0)
        t += _step_seconds(cost, prefill, sum(states[i]["todo"] == 0 for i in work))
        # 5. a token for each decode and for each request whose prompt is now all processed
        for i, tokens in work.items():
            state, record = states[i], records[i]
            if state["todo"] > 0:
                state["todo"] -= tokens
                state["cached"] += tokens
                if state["todo"] > 0:
                    continue
            state["cached"] += 1
            record["token_times"].append(t)
            record["output_tokens"] += 1
            if record["first_token"] is None:
                record["first_token"] = t
            if record["output_tokens"] == requests[i]["output_tokens"]:
                finish(i, "ok")
        running = [i for i in running if records[i]["status"] is None]
    return records


def _percentile(sorted_values, q):
    """Linear interpolation between order statistics at rank q/100 * (n - 1) (numpy's default)."""
    rank = (len(sorted_values) - 1) * q / 100
    lo = math.floor(rank)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (rank - lo) * (sorted_values[hi] - sorted_values[lo])


def _key(q):
    """'p50' for 50, 'p99.9' for 99.9."""
    return f"p{int(q)}" if q == int(q) else f"p{q}"


def _stats(values, percentiles):
    """Mean and the requested percentiles of `values`; None for each when there are no values."""
    values = sorted(values)
    out = {"mean": sum(values) / len(values) if values else None}
    out.update({_key(q): _percentile(values, q) if values else None for q in percentiles})
    return out


def _latencies(record):
    """The record's ttft, tpot (None for one token), largest inter-token gap (None for one token) and e2e."""
    times = record["token_times"]
    n = record["output_tokens"]
    return {"ttft": record["first_token"] - record["arrival"],
            "tpot": (record["finish"] - record["first_token"]) / (n - 1) if n > 1 else None,
            "itl": max((b - a for a, b in pairwise(times)), default=None),
            "e2e": record["finish"] - record["arrival"]}


def _timed(records):
    """The requests whose latencies are measured: completed ones only (a cancelled request's TTFT is no TTFT)."""
    return [r for r in records if r["status"] == "ok"]


def _output_throughput(completed, duration):
    """What the server delivered: all completed requests' tokens over the window, not a mean of per-request rates."""
    return sum(r["output_tokens"] for r in completed) / duration


def serving_metrics(records, duration, slo=None, percentiles=(50, 90, 99)):
    """Latency statistics over completed requests, throughput and goodput per second of `duration`, counts."""
    if duration <= 0:
        raise ValueError(f"duration must be > 0, got {duration}")
    slo = slo or {}
    for key, limit in slo.items():
        if key not in SLO_KEYS:
            raise ValueError(f"unknown slo key {key!r}; expected some of {SLO_KEYS}")
        if limit < 0:
            raise ValueError(f"slo[{key!r}] must be >= 0, got {limit}")
    if any(not 0 <= q <= 100 for q in percentiles):
        raise ValueError(f"percentiles must lie in [0, 100], got {list(percentiles)}")

    ok = [r for r in records if r["status"] == "ok"]
    timed = [_latencies(r) for r in _timed(records)]
    itl = [b - a for r in _timed(records) for a, b in pairwise(r["token_times"])]
    good = sum(all(lat[k] is None or _reached(limit, lat[k]) for k, limit in slo.items())
               for lat in map(_latencies, ok))
    return {"ttft": _stats([lat["ttft"] for lat in timed], percentiles),
            "tpot": _stats([lat["tpot"] for lat in timed if lat["tpot"] is not None], percentiles),
            "itl": _stats(itl, percentiles),
            "e2e": _stats([lat["e2e"] for lat in timed], percentiles),
            "request_throughput": len(ok) / duration,
            "output_throughput": _output_throughput(ok, duration),
            "goodput": good / duration,
            "counts": {status: sum(r["status"] == status for r in records) for status in STATUSES}}
