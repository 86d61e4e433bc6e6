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
            if deadlines and r.random() < 0.25:
                request["cancel_at"] = ticks(clock + r.uniform(0.0, 0.8))
            if deadlines and r.random() < 0.25:
                request["timeout"] = ticks(r.uniform(0.0, 1.0))
            requests.append(request)
    r.shuffle(requests)
    return requests


def random_case(r: random.Random, deadlines: bool) -> tuple:
    """(requests, max_num_seqs, cost) of one random engine run."""
    return random_requests(r, r.randint(1, 30), deadlines), r.randint(1, 8), random_cost(r)
