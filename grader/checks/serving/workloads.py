"""Random workloads for the hidden simulate checks, and the mixed chat/code workload of the public lesson.

Every time and cost coefficient is a whole number of TICKs (2**-16 s, about 15 us). Sums and products of such
numbers stay exact in float64 (times below 2**20 s need at most 36 bits of mantissa), so every time the engine
computes is exact whatever the order of its additions, and every comparison of a step boundary with an arrival,
a cancel_at or a timeout is decided by exact arithmetic, never by rounding. Two different times differ by at
least one TICK, which at the largest times of these workloads (under 10,000 s) is more than 1e-9 relative: the
contract's tolerance at a threshold cannot merge two different times either.
"""
import random

TICK = 2.0 ** -16


def ticks(seconds: float) -> float:
    """`seconds` rounded to a whole number of TICKs."""
    return round(seconds / TICK) * TICK


def random_cost(r: random.Random) -> dict:
    """Step-cost coefficients of a small GPU engine: a few ms per step, tens of us per prompt token."""
    return {"base": ticks(r.uniform(0.002, 0.02)), "per_prefill_token": ticks(r.uniform(0.00002, 0.0002)),
            "per_decode_seq": ticks(r.choice([0.0, r.uniform(0.0002, 0.003)]))}


def random_requests(r: random.Random, count: int, deadlines: bool) -> list:
    """`count` requests in bursts with equal arrival times and idle gaps, some with cancel_at or timeout.

    The list is shuffled, so that input order and arrival order differ.
    """
    requests, clock = [], 0.0
    while len(requests) < count:
        clock += ticks(r.choice([0.0, r.expovariate(1 / 0.05), r.uniform(1.0, 5.0)]))  # ties, load, idle gaps
        for _ in range(min(r.choice([1, 1, 2, 4]), count - len(requests))):
            request = {"id": f"r{len(requests)}", "arrival": clock, "prompt_tokens": r.choice(
                [r.randint(1, 64), r.randint(64, 2000)]), "output_tokens": r.choice([1, r.randint(2, 40),
                                                                                     r.randint(2, 200)])}
            requests.append(with_deadlines(r, request, clock) if deadlines else request)
    r.shuffle(requests)
    return requests


def with_deadlines(r: random.Random, request: dict, clock: float) -> dict:
    """`request` (arriving at `clock`), cancelled a little after its arrival and given a timeout, each one time in
    four."""
    if r.random() < 0.25:
        request["cancel_at"] = ticks(clock + r.uniform(0.0, 0.8))
    if r.random() < 0.25:
        request["timeout"] = ticks(r.uniform(0.0, 1.0))
    return request


def random_case(r: random.Random, deadlines: bool) -> tuple:
    """(requests, max_num_seqs, cost) of one random engine run."""
    return random_requests(r, r.randint(1, 30), deadlines), r.randint(1, 8), random_cost(r)


def crowd_requests(r: random.Random, count: int, deadlines: bool) -> list:
    """`count` requests of comparable size (prompts up to 300 tokens, answers up to 120) in bursts of up to 8:
    many run at once and all grow, so that a KV cache a little short of them preempts."""
    requests, clock = [], 0.0
    while len(requests) < count:
        clock += ticks(r.choice([0.0, 0.0, r.expovariate(1 / 0.05), r.uniform(1.0, 5.0)]))
        for _ in range(min(r.choice([1, 2, 4, 8]), count - len(requests))):
            request = {"id": f"r{len(requests)}", "arrival": clock, "prompt_tokens": r.randint(1, 300),
                       "output_tokens": r.randint(1, 120)}
            requests.append(with_deadlines(r, request, clock) if deadlines else request)
    r.shuffle(requests)
    return requests


def limited_case(r: random.Random, deadlines: bool, kv: bool, chunked: bool, max_len: bool) -> tuple:
    """(requests, max_num_seqs, cost, limits) of one engine run under resource limits.

    The KV cache holds from the largest request to half of what the max_num_seqs largest hold together (one
    case in ten is smaller, so that some requests never fit); the token budget ranges from a handful of tokens
    to thousands; max_model_len refuses some requests.
    """
    requests = crowd_requests(r, r.randint(2, 30), deadlines)
    max_num_seqs, limits = r.randint(2, 12), {}
    totals = [request["prompt_tokens"] + request["output_tokens"] for request in requests]
    if kv:
        limits["block_size"] = r.choice([1, 4, 16])
        blocks = sorted((-(-total // limits["block_size"]) for total in totals), reverse=True)
        low = blocks[0] // 2 if r.random() < 0.1 else blocks[0]
        limits["kv_blocks"] = r.randint(max(1, low), max(blocks[0], sum(blocks[:max_num_seqs]) // 2))
    if chunked:
        limits["max_num_batched_tokens"] = r.choice([r.randint(2, 16), r.randint(16, 256), r.randint(256, 4096)])
    if max_len:
        limits["max_model_len"] = r.randint(min(totals), max(totals))
    return requests, max_num_seqs, random_cost(r), limits
