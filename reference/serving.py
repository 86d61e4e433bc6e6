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
STATUSES = ("ok", "cancelled", "timeout", "rejected")
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


def validated_limits(kv_blocks, block_size, max_num_batched_tokens, max_model_len):
    """A ValueError naming the first resource limit that is given and below 1."""
    for name, value in (("kv_blocks", kv_blocks), ("block_size", block_size),
                        ("max_num_batched_tokens", max_num_batched_tokens), ("max_model_len", max_model_len)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")


class Engine:
    """One engine run: the waiting queue, the running batch (in admission order) and each request's cache.

    A running request's `pending` is the prompt (or recompute) tokens it still has to process in this residency
    (0 once it decodes) and `cached` the tokens its cache holds. `victim` and `resume` are the two decisions of
    recompute preemption; grader/checks/serving/misconceptions.py overrides them to predict the misconceptions.
    """

    def __init__(self, requests, policy, max_num_seqs, cost, kv_blocks, block_size, max_num_batched_tokens,
                 max_model_len):
        self.requests, self.policy, self.max_num_seqs, self.cost = requests, policy, max_num_seqs, cost
        self.kv_blocks, self.block_size = kv_blocks, block_size
        self.budget = math.inf if max_num_batched_tokens is None else max_num_batched_tokens
        self.max_model_len = max_model_len
        self.records = [{"id": r["id"], "arrival": r["arrival"], "first_token": None, "token_times": [],
                         "finish": None, "status": None, "prompt_tokens": r["prompt_tokens"], "output_tokens": 0,
                         "preemptions": 0} for r in requests]
        self.pending = [0] * len(requests)
        self.cached = [0] * len(requests)
        self.waiting = deque()  # arrived, not running: preempted ones first (admission order), then arrival order
        self.running = []       # in admission order
        self.ended = 0
        self.t = 0.0

    def blocks(self, tokens):
        """Cache blocks that hold `tokens` tokens."""
        return -(-tokens // self.block_size)

    def rejected(self, i):
        """Whether request i is refused at its arrival: longer than max_model_len, or more than the cache holds.

        The simulator's rule, by the true output length: vLLM judges prompt + the requested max_tokens (unset, it
        stops the request at max_model_len with "length"), and instead of rejecting a request for the cache it
        refuses to start when a request of max_model_len tokens would not fit."""
        request = self.requests[i]
        tokens = request["prompt_tokens"] + request["output_tokens"]
        return ((self.max_model_len is not None and tokens > self.max_model_len)
                or (self.kv_blocks is not None and self.blocks(tokens) > self.kv_blocks))

    def end(self, i, status, t):
        """Close request i's record at time `t`, with the tokens it produced."""
        record = self.records[i]
        record["finish"], record["status"], record["output_tokens"] = t, status, len(record["token_times"])
        self.ended += 1

    def victim(self):
        """The running request recompute preemption evicts: the one admitted last (vLLM evicts the lowest priority,
        which under FCFS is the request admitted last)."""
        return self.running[-1]

    def resume(self, i):
        """Request i's state on admission: its prompt and every token it produced to (re)compute, an empty cache
        (no prefix cache: vLLM V1's default one keeps freed full blocks hashed, and a readmitted request reuses
        those not yet reallocated)."""
        self.pending[i] = self.requests[i]["prompt_tokens"] + len(self.records[i]["token_times"])
        self.cached[i] = 0

    def plan(self, batch):
        """{request: tokens it processes this step}: one decode token per decoding request, then prompt or
        recompute chunks, each in admission order, within the token budget (vLLM V0's order and V1's docs; V1's
        schedule() walks `running` in admission order, which plans the same steps because only the request
        admitted last can still be prefilling: tests/topics/test_serving.py proves it on random workloads)."""
        if self.budget == math.inf:  # no budget: every decode, every prompt whole (the order does not matter)
            return {i: self.pending[i] or 1 for i in batch}
        work, left = {}, self.budget
        for i in batch:
            if self.pending[i] == 0 and left >= 1:
                work[i], left = 1, left - 1
        for i in batch:
            if self.pending[i] > 0 and left >= 1:
                work[i] = min(self.pending[i], left)
                left -= work[i]
        return work

    def produces(self, i, tokens):
        """Whether request i gets a token at the end of a step that processes `tokens` of its tokens."""
        return tokens > 0 and (self.pending[i] == 0 or tokens == self.pending[i])

    def blocks_after(self, i, tokens):
        """The blocks request i holds after a step that processes `tokens` of its tokens."""
        grown = (tokens if self.pending[i] > 0 else 0) + self.produces(i, tokens)
        return self.blocks(self.cached[i] + grown)

    def needed(self, batch, work):
        """The blocks `batch` holds after a step that does `work`."""
        return sum(self.blocks_after(i, work.get(i, 0)) for i in batch)

    def admit(self):
        """Admit waiting requests in order into free seats (continuous: every step; static: an empty engine) while
        the budget lasts and each one's first chunk fits in the blocks the running requests leave free."""
        if self.policy == "static" and self.running:
            return []
        left = free = math.inf
        if self.budget < math.inf or self.kv_blocks is not None:  # without limits nothing needs the plan
            work = self.plan(self.running)
            left = self.budget - sum(work.values())
            free = math.inf if self.kv_blocks is None else self.kv_blocks - self.needed(self.running, work)
        admitted = []
        while self.waiting and len(self.running) + len(admitted) < self.max_num_seqs and left >= 1:
            i = self.waiting[0]
            if self.records[i]["status"] is not None:  # ended while it waited
                self.waiting.popleft()
                continue
            self.resume(i)
            chunk = min(self.pending[i], left)
            need = self.blocks_after(i, chunk)
            if need > free:
                break  # first come, first served: nobody overtakes the head of the queue
            self.waiting.popleft()
            admitted.append(i)
            left, free = left - chunk, free - need
        return admitted

    def preempt_until_the_step_fits(self):
        """Evict victims (blocks freed, tokens kept, back to the queue's front in admission order) until the
        running requests' cache after the step fits in kv_blocks; the step's work, planned anew after each."""
        work = self.plan(self.running)
        evicted = []
        while self.kv_blocks is not None and self.needed(self.running, work) > self.kv_blocks:
            i = self.victim()
            assert len(self.running) > 1, "a request that could never fit was rejected at its arrival"
            self.running.remove(i)
            self.records[i]["preemptions"] += 1
            evicted.append(i)
            work = self.plan(self.running)
        self.waiting.extendleft(evicted)  # evicted last-admitted first: the queue's front is in admission order
        return work

    def step(self, work):
        """Run one step doing `work`: price it, then hand out the tokens it produces at its end."""
        prefill = decodes = 0
        for i, tokens in work.items():
            if self.pending[i] > 0:
                prefill += tokens
            else:
                decodes += 1
        self.t += self.cost["base"] + self.cost["per_prefill_token"] * prefill + self.cost["per_decode_seq"] * decodes
        for i, tokens in work.items():
            if self.pending[i] > 0:
                self.pending[i] -= tokens
                self.cached[i] += tokens
                if self.pending[i] > 0:
                    continue  # a chunk before the last: no token yet
            self.cached[i] += 1
            record = self.records[i]
            record["token_times"].append(self.t)
            if record["first_token"] is None:
                record["first_token"] = self.t
            if len(record["token_times"]) == self.requests[i]["output_tokens"]:
                self.end(i, "ok", self.t)
        self.running = [i for i in self.running if self.records[i]["status"] is None]

    def run(self):
        """Step from t = 0 until every request has ended; the records, in input order."""
        requests = self.requests
        by_arrival = deque()
        for i in sorted(range(len(requests)), key=lambda i: (requests[i]["arrival"], i)):
            if self.rejected(i):
                self.end(i, "rejected", float(requests[i]["arrival"]))
            else:
                by_arrival.append(i)
        deadlines = [(deadline(requests[i]), i) for i in by_arrival if deadline(requests[i]) < math.inf]
        heapq.heapify(deadlines)
        while self.ended < len(requests):
            # arrivals up to now join the queue
            while by_arrival and reached(self.t, requests[by_arrival[0]]["arrival"]):
                self.waiting.append(by_arrival.popleft())
            # cancellations and timeouts are noticed at the step boundary, for waiting and running requests alike
            if deadlines and reached(self.t, deadlines[0][0]):
                while deadlines and reached(self.t, deadlines[0][0]):
                    _, i = heapq.heappop(deadlines)
                    if self.records[i]["status"] is None:  # it may have finished before its deadline
                        status = early_end(requests[i], self.t)
                        assert status is not None, "a reached deadline is a reached cancel_at or timeout"
                        self.end(i, status, self.t)
                self.running = [i for i in self.running if self.records[i]["status"] is None]
            self.running += self.admit()
            if not self.running:
                assert not any(self.records[i]["status"] is None for i in self.waiting), "the queue's head fits"
                if not by_arrival:
                    break  # nothing runs, nothing waits, nothing will arrive: every request has ended
                self.t = float(requests[by_arrival[0]]["arrival"])  # idle until the next arrival
                continue
            self.step(self.preempt_until_the_step_fits())
        return self.records


def simulate(requests, policy, max_num_seqs, cost, kv_blocks=None, block_size=16, max_num_batched_tokens=None,
             max_model_len=None):
    """Run the engine loop over `requests` and return one record per request, in input order."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if max_num_seqs < 1:
        raise ValueError(f"max_num_seqs must be >= 1, got {max_num_seqs}")
    validated_limits(kv_blocks, block_size, max_num_batched_tokens, max_model_len)
    coefficients = validated_cost(cost)
    requests = [validated_request(request, i) for i, request in enumerate(requests)]
    return Engine(requests, policy, max_num_seqs, coefficients, kv_blocks, block_size, max_num_batched_tokens,
                  max_model_len).run()


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
