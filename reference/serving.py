"""Hidden reference for the serving topic: a continuous-batching engine simulator and serving metrics.

Written for clarity, in float64 Python arithmetic. The simulator walks the engine one step at a time: at a step's
start it ends what was cancelled or timed out, admits what fits, prices the step, then hands out one token per
running request. Pending deadlines wait in a heap so that a long queue costs nothing per step.
"""
import heapq
import math
from collections import deque
from itertools import pairwise

POLICIES = ("continuous", "static")
COST_KEYS = ("base", "per_prefill_token", "per_decode_seq")
STATUSES = ("ok", "cancelled", "timeout")
SLO_KEYS = ("ttft", "tpot", "itl", "e2e")
TOLERANCE = 1e-9  # the contract's floating-point boundary rule: within 1e-9 (relative) of a threshold reaches it


def reached(t, threshold):
    """Whether time `t` has reached `threshold` (inclusive, with the contract's relative tolerance)."""
    return t >= threshold - TOLERANCE * abs(threshold)


def within(value, limit):
    """Whether `value` is at most `limit` (inclusive, with the contract's relative tolerance)."""
    return value <= limit + TOLERANCE * abs(limit)


def validated_request(request, index):
    """The request itself once its fields are checked; a ValueError names the first bad one."""
    for key in ("id", "arrival", "prompt_tokens", "output_tokens"):
        if key not in request:
            raise ValueError(f"requests[{index}] has no {key!r}")
    if request["arrival"] < 0:
        raise ValueError(f"requests[{index}]['arrival'] must be >= 0, got {request['arrival']}")
    for key in ("prompt_tokens", "output_tokens"):
        if request[key] < 1:
            raise ValueError(f"requests[{index}]['{key}'] must be >= 1, got {request[key]}")
    for key in ("cancel_at", "timeout"):
        if request.get(key) is not None and request[key] < 0:
            raise ValueError(f"requests[{index}]['{key}'] must be >= 0, got {request[key]}")
    return request


def validated_cost(cost):
    """The three step-cost coefficients as floats, or a ValueError naming the missing or negative key."""
    coefficients = {}
    for key in COST_KEYS:
        if key not in cost:
            raise ValueError(f"cost has no {key!r}")
        if cost[key] < 0:
            raise ValueError(f"cost[{key!r}] must be >= 0, got {cost[key]}")
        coefficients[key] = float(cost[key])
    return coefficients


def deadline(request):
    """The earliest time at which the request may be ended early: never before it arrives."""
    candidates = [math.inf]
    if request.get("cancel_at") is not None:
        candidates.append(float(request["cancel_at"]))
    if request.get("timeout") is not None:
        candidates.append(float(request["arrival"]) + float(request["timeout"]))
    return max(float(request["arrival"]), min(candidates))


def early_end(request, t):
    """"cancelled" or "timeout" when the request must end at step start `t` (cancel first), else None."""
    if request.get("cancel_at") is not None and reached(t, request["cancel_at"]):
        return "cancelled"
    if request.get("timeout") is not None and reached(t, request["arrival"] + request["timeout"]):
        return "timeout"
    return None


def simulate(requests, policy, max_num_seqs, cost):
    """Run the engine loop over `requests` and return one record per request, in input order."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if max_num_seqs < 1:
        raise ValueError(f"max_num_seqs must be >= 1, got {max_num_seqs}")
    coefficients = validated_cost(cost)
    requests = [validated_request(request, i) for i, request in enumerate(requests)]

    records = [{"id": r["id"], "arrival": r["arrival"], "first_token": None, "token_times": [], "finish": None,
                "status": None, "prompt_tokens": r["prompt_tokens"], "output_tokens": 0} for r in requests]
    wanted = [r["output_tokens"] for r in requests]
    by_arrival = deque(sorted(range(len(requests)), key=lambda i: (requests[i]["arrival"], i)))
    deadlines = [(deadline(r), i) for i, r in enumerate(requests) if deadline(r) < math.inf]
    heapq.heapify(deadlines)
    waiting = deque()   # arrived, not admitted: in arrival order (ended ones are skipped when admitting)
    running = []        # admitted and not ended
    ended = 0
    t = 0.0

    def end(i, status):
        """Close request i's record at the current step boundary, with the tokens it produced."""
        nonlocal ended
        record = records[i]
        record["finish"], record["status"], record["output_tokens"] = t, status, len(record["token_times"])
        ended += 1

    while ended < len(requests):
        # arrivals up to now join the queue
        while by_arrival and reached(t, requests[by_arrival[0]]["arrival"]):
            waiting.append(by_arrival.popleft())
        # cancellations and timeouts are noticed at the step boundary, for waiting and running requests alike
        if deadlines and reached(t, deadlines[0][0]):
            while deadlines and reached(t, deadlines[0][0]):
                _, i = heapq.heappop(deadlines)
                if records[i]["status"] is None:  # it may have finished before its deadline
                    status = early_end(requests[i], t)
                    assert status is not None, "a reached deadline is a reached cancel_at or timeout"
                    end(i, status)
            running = [i for i in running if records[i]["status"] is None]
        # admission in arrival order: continuous fills free seats every step, static only an empty engine
        admitted = []
        if policy == "continuous" or not running:
            while waiting and len(running) + len(admitted) < max_num_seqs:
                i = waiting.popleft()
                if records[i]["status"] is None:
                    admitted.append(i)
        if not running and not admitted:
            if not by_arrival:
                break  # nothing runs, nothing waits, nothing will arrive: every request has ended
            t = float(requests[by_arrival[0]]["arrival"])  # idle until the next arrival
            continue
        # the step: fixed overhead, the prefill of every prompt admitted now, one decode per earlier request
        prefill_tokens = sum(requests[i]["prompt_tokens"] for i in admitted)
        t += (coefficients["base"] + coefficients["per_prefill_token"] * prefill_tokens
              + coefficients["per_decode_seq"] * len(running))
        # at its end: a first token for each admitted request, the next one for each earlier request
        for i in admitted:
            records[i]["first_token"] = t
        still_running = []
        for i in running + admitted:
            token_times = records[i]["token_times"]
            token_times.append(t)
            if len(token_times) == wanted[i]:
                end(i, "ok")
            else:
                still_running.append(i)
        running = still_running
    return records


def percentile(sorted_values, q):
    """numpy's default (linear) percentile of ascending values: interpolate between the two order statistics
    around rank q/100 · (n - 1)."""
    rank = q / 100.0 * (len(sorted_values) - 1)
    below = math.floor(rank)
    above = min(below + 1, len(sorted_values) - 1)
    fraction = rank - below
    return sorted_values[below] + fraction * (sorted_values[above] - sorted_values[below])


def percentile_key(q):
    """The result key of percentile q: "p50" for 50, "p99.9" for 99.9."""
    return f"p{int(q)}" if float(q).is_integer() else f"p{float(q)!r}"


def summary(values, percentiles):
    """{"mean", "p<q>"...} of `values`, with None everywhere when there are none."""
    ordered = sorted(float(v) for v in values)
    stats = {"mean": sum(ordered) / len(ordered) if ordered else None}
    for q in percentiles:
        stats[percentile_key(q)] = percentile(ordered, float(q)) if ordered else None
    return stats


def ttft(record):
    """Seconds from arrival to the first token."""
    return record["first_token"] - record["arrival"]


def tpot(record):
    """Mean seconds per output token after the first one; None for a one-token request."""
    if record["output_tokens"] < 2:
        return None
    return (record["finish"] - record["first_token"]) / (record["output_tokens"] - 1)


def gaps(record):
    """Every interval between two consecutive tokens of the record."""
    times = record["token_times"]
    return [later - earlier for earlier, later in pairwise(times)]


def e2e(record):
    """Seconds from arrival to the end of the request."""
    return record["finish"] - record["arrival"]


def meets(record, slo):
    """Whether a completed request meets every SLO in `slo` (inclusive); no value to judge meets the SLO."""
    values = {"ttft": ttft(record), "tpot": tpot(record), "itl": max(gaps(record), default=None),
              "e2e": e2e(record)}
    return all(values[key] is None or within(values[key], limit) for key, limit in slo.items())


def serving_metrics(records, duration, slo=None, percentiles=(50, 90, 99)):
    """Latency statistics of the completed requests, throughput, goodput and counts over `duration` seconds."""
    if duration <= 0:
        raise ValueError(f"duration must be > 0 seconds, got {duration}")
    slo = dict(slo or {})
    for key, limit in slo.items():
        if key not in SLO_KEYS:
            raise ValueError(f"slo key {key!r} is not one of {SLO_KEYS}")
        if limit < 0:
            raise ValueError(f"slo[{key!r}] must be >= 0 seconds, got {limit}")
    for q in percentiles:
        if not 0 <= q <= 100:
            raise ValueError(f"percentiles must be in [0, 100], got {q}")

    counts = {status: sum(record["status"] == status for record in records) for status in STATUSES}
    done = [record for record in records if record["status"] == "ok"]
    return {
        "ttft": summary([ttft(r) for r in done], percentiles),
        "tpot": summary([tpot(r) for r in done if tpot(r) is not None], percentiles),
        "itl": summary([gap for r in done for gap in gaps(r)], percentiles),
        "e2e": summary([e2e(r) for r in done], percentiles),
        "request_throughput": len(done) / duration,
        "output_throughput": sum(r["output_tokens"] for r in done) / duration,
        "goodput": sum(meets(r, slo) for r in done) / duration,
        "counts": counts,
    }
