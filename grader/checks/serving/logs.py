"""Random server logs, SLOs and percentile lists for the hidden serving_metrics checks.

Logs come from the reference simulator on random workloads (workloads.py), so every time is a whole TICK and
every TTFT, gap and e2e is exact. An SLO on those may sit exactly on a request's value (meeting it is
inclusive, and the comparison is exact). A TPOT is a quotient, rounded: a TPOT limit is kept at least 1e-6
(relative) away from every request's TPOT, so that computing it in another order cannot flip the verdict.
"""
import random

from grader.checks.serving.workloads import random_case

TPOT_MARGIN = 1e-6


def random_log(ref, r: random.Random) -> list:
    """The records of one random engine run (either policy, with cancellations and timeouts)."""
    requests, max_num_seqs, cost = random_case(r, deadlines=r.random() < 0.7)
    return ref.simulate(requests, r.choice(["continuous", "static"]), max_num_seqs, cost)


def random_duration(r: random.Random, records: list) -> float:
    """The measurement window: up to the last finish, or some other positive length."""
    last = max((rec["finish"] for rec in records), default=1.0)
    return r.choice([last, r.uniform(0.5, 2.0) * last]) or 1.0


def random_percentiles(r: random.Random) -> tuple:
    """A few percentiles in [0, 100]: the usual ones, the extremes, 99.9 and arbitrary ones (a fractional one is
    never a whole number, whose key would be "p42", not "p42.0")."""
    pool = [0, 25, 50, 75, 90, 95, 99, 99.9, 100, (r.randint(0, 999) + 0.5) / 10, r.randint(1, 99)]
    return tuple(sorted(set(r.sample(pool, r.randint(1, 5)))))


def exact_values(ref, records: list) -> dict:
    """Per SLO key other than tpot, the values completed requests have (exact: differences of whole TICKs)."""
    done = [rec for rec in records if rec["status"] == "ok"]
    return {"ttft": [ref.ttft(rec) for rec in done], "e2e": [ref.e2e(rec) for rec in done],
            "itl": [max(ref.gaps(rec)) for rec in done if len(rec["token_times"]) > 1]}


def tpot_limit(ref, r: random.Random, records: list) -> float | None:
    """A TPOT limit between the requests' TPOTs, never within TPOT_MARGIN of one; None when no room is found."""
    values = sorted(ref.tpot(rec) for rec in records if rec["status"] == "ok" and ref.tpot(rec) is not None)
    for _ in range(20):
        limit = r.uniform(0.5, 1.5) * r.choice(values) if values else r.uniform(0.001, 0.1)
        if all(abs(limit - v) > TPOT_MARGIN * v for v in values):
            return limit
    return None


def random_slo(ref, r: random.Random, records: list) -> dict:
    """One to four SLOs; ttft, itl and e2e limits often exactly equal to some request's value."""
    slo = {}
    for key, values in exact_values(ref, records).items():
        if r.random() < 0.6:
            slo[key] = r.choice(values) if values and r.random() < 0.7 else r.uniform(0.001, 2.0)
    if r.random() < 0.5:
        limit = tpot_limit(ref, r, records)
        if limit is not None:
            slo["tpot"] = limit
    return slo
