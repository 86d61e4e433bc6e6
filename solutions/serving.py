"""Model answer for the serving topic: a continuous-batching engine loop and the metrics a server is judged by."""
import math
from collections import deque
from itertools import pairwise

STATUSES = ("ok", "cancelled", "timeout")
SLO_KEYS = ("ttft", "tpot", "itl", "e2e")
RELATIVE = 1e-9  # a time within 1e-9 (relative) of a threshold has reached it (the contract's boundary rule)


def _reached(t, threshold):
    """t >= threshold, up to the contract's relative tolerance."""
    return t >= threshold - RELATIVE * abs(threshold)


def _check_arguments(requests, policy, max_num_seqs, cost):
    """Raise ValueError naming the first bad argument of simulate."""
    if policy not in ("continuous", "static"):
        raise ValueError(f"policy must be 'continuous' or 'static', got {policy!r}")
    if max_num_seqs < 1:
        raise ValueError(f"max_num_seqs must be >= 1, got {max_num_seqs}")
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


def _admit(waiting, running, policy, max_num_seqs):
    """The first waiting requests (arrival order) that take a free seat now: every step under continuous
    batching, only into an empty engine under static batching."""
    if policy == "static" and running:
        return []
    return waiting[:max_num_seqs - len(running)]


def _step_seconds(cost, prefill_tokens, decoding):
    """One engine step: fixed overhead, the prefill of the prompts admitted in it, one decode per earlier request."""
    return cost["base"] + cost["per_prefill_token"] * prefill_tokens + cost["per_decode_seq"] * decoding


def simulate(requests, policy, max_num_seqs, cost):
    """Step the engine from t = 0 until every request has ended; one record per request, in input order."""
    _check_arguments(requests, policy, max_num_seqs, cost)
    records = [{"id": r["id"], "arrival": r["arrival"], "first_token": None, "token_times": [], "finish": None,
                "status": None, "prompt_tokens": r["prompt_tokens"], "output_tokens": 0} for r in requests]
    pending = deque(sorted(range(len(requests)), key=lambda i: (requests[i]["arrival"], i)))  # not arrived yet
    waiting, running = [], []  # arrived and not admitted (in arrival order); admitted and not ended
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
        # 2. admission, in arrival order, while seats are free
        admitted = _admit(waiting, running, policy, max_num_seqs)
        waiting = waiting[len(admitted):]
        if not running and not admitted:
            if not pending:  # the last requests ended at this boundary
                break
            t = float(requests[pending[0]]["arrival"])  # idle: jump to the next arrival
            continue
        # 3. the step: overhead + prefill of the admitted prompts + one decode per request already running
        t += _step_seconds(cost, sum(requests[i]["prompt_tokens"] for i in admitted), len(running))
        # 4. one token for every request in the batch; the newly admitted get their first
        for i in running + admitted:
            record = records[i]
            record["token_times"].append(t)
            record["output_tokens"] += 1
            if record["first_token"] is None:
                record["first_token"] = t
            if record["output_tokens"] == requests[i]["output_tokens"]:
                finish(i, "ok")
        running = [i for i in running + admitted if records[i]["status"] is None]
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
