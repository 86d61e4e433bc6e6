"""Hidden serving checks: random workloads and server logs drawn from the seed, compared record by record and
field by field with the live reference, and the engine's invariants on whatever the submission returns."""
import random

from grader.checks.serving.expect import expect_metrics, expect_records
from grader.checks.serving.invariants import expect_engine_invariants, expect_limit_invariants
from grader.checks.serving.logs import random_duration, random_log, random_percentiles, random_slo
from grader.checks.serving.misconceptions import metrics_predictions, simulate_predictions
from grader.checks.serving.records import record
from grader.checks.serving.workloads import limited_case, random_case
from grader.engine import check, reference, tr

CASES = 15
LOGS = 12


def requests_shown(requests: list) -> str:
    """The random requests of a call, as its description names them (they are too many to show)."""
    return tr("<{count} random requests>", count=len(requests))


def expect_random_runs(sub, seed: int, policies: list, deadline_share: float) -> None:
    """CASES random engine runs under `policies` must return the reference's records; `deadline_share` of the
    workloads carry cancellations and timeouts."""
    r = random.Random(seed)
    ref = reference("serving")
    for _ in range(CASES):
        requests, max_num_seqs, cost = random_case(r, deadlines=r.random() < deadline_share)
        policy = r.choice(policies)
        expect_records(sub.simulate(requests, policy, max_num_seqs, cost),
                       ref.simulate(requests, policy, max_num_seqs, cost),
                       f"simulate({requests_shown(requests)}, {policy!r}, {max_num_seqs}, {cost})",
                       lambda: simulate_predictions(ref, requests, policy, max_num_seqs, cost))


@check("random_continuous", points=7, hint="simulate",
       title="simulate under continuous batching on random workloads (bursts, equal arrivals, idle gaps)")
def test_random_continuous(sub, seed):
    expect_random_runs(sub, seed, ["continuous"], deadline_share=0.0)


@check("random_static", points=6, hint="simulate",
       title="simulate under static batching on random workloads, some with cancellations and timeouts")
def test_random_static(sub, seed):
    expect_random_runs(sub, seed, ["static"], deadline_share=0.5)


@check("random_cancellations_and_timeouts", points=7, hint="simulate",
       title="simulate on random workloads where requests are cancelled or time out, waiting or running")
def test_random_cancellations_and_timeouts(sub, seed):
    expect_random_runs(sub, seed, ["continuous", "static"], deadline_share=1.0)


@check("engine_invariants", points=4, hint="simulate",
       title="whatever the workload: every request ends, token times increase, at most max_num_seqs run at once, "
             "no token before its prefill")
def test_engine_invariants(sub, seed):
    r = random.Random(seed)
    for _ in range(CASES):
        requests, max_num_seqs, cost = random_case(r, deadlines=True)
        policy = r.choice(["continuous", "static"])
        expect_engine_invariants(sub.simulate(requests, policy, max_num_seqs, cost), requests, max_num_seqs, cost,
                                 f"simulate({requests_shown(requests)}, {policy!r}, {max_num_seqs}, {cost})")


def expect_limited_runs(sub, seed: int, kv: bool, chunked: bool, max_len: bool, deadline_share: float) -> None:
    """CASES random engine runs under resource limits must return the reference's records; a differing run is
    named after the misconception whose records it equals."""
    r = random.Random(seed)
    ref = reference("serving")
    for _ in range(CASES):
        requests, max_num_seqs, cost, limits = limited_case(r, r.random() < deadline_share, kv, chunked, max_len)
        policy = r.choice(["continuous", "continuous", "static"])
        expect_records(sub.simulate(requests, policy, max_num_seqs, cost, **limits),
                       ref.simulate(requests, policy, max_num_seqs, cost, **limits),
                       f"simulate({requests_shown(requests)}, {policy!r}, {max_num_seqs}, {cost}, **{limits})",
                       lambda: simulate_predictions(ref, requests, policy, max_num_seqs, cost, **limits))


@check("random_kv_preemption", points=6, hint="simulate",
       title="simulate under a KV-cache limit on random crowds: admission by free blocks, recompute preemption of "
             "the request admitted last, rejection of what never fits")
def test_random_kv_preemption(sub, seed):
    expect_limited_runs(sub, seed, kv=True, chunked=False, max_len=False, deadline_share=0.3)


@check("random_chunked_prefill", points=5, hint="simulate",
       title="simulate with a token budget per step on random crowds: decodes first, then prompt chunks")
def test_random_chunked_prefill(sub, seed):
    expect_limited_runs(sub, seed, kv=False, chunked=True, max_len=False, deadline_share=0.3)


@check("random_all_limits", points=5, hint="simulate",
       title="simulate with a KV limit, a token budget and max_model_len together, with cancellations and timeouts")
def test_random_all_limits(sub, seed):
    expect_limited_runs(sub, seed, kv=True, chunked=True, max_len=True, deadline_share=0.5)


@check("limit_invariants", points=4, hint="simulate",
       title="under resource limits: no step over kv_blocks or the token budget, preempted requests recompute, "
             "no token lost or duplicated, rejections exactly at arrival")
def test_limit_invariants(sub, seed):
    r = random.Random(seed)
    for _ in range(CASES):
        requests, max_num_seqs, cost, limits = limited_case(r, r.random() < 0.5, kv=r.random() < 0.8,
                                                            chunked=r.random() < 0.5, max_len=r.random() < 0.5)
        policy = r.choice(["continuous", "static"])
        expect_limit_invariants(sub.simulate(requests, policy, max_num_seqs, cost, **limits), requests,
                                max_num_seqs, cost, limits,
                                f"simulate({requests_shown(requests)}, {policy!r}, {max_num_seqs}, {cost}, "
                                f"**{limits})")


def expect_random_metrics(sub, records: list, duration: float, slo, percentiles) -> None:
    """The submission's serving_metrics on one log must equal the reference's."""
    ref = reference("serving")
    log = tr("<{count} records>", count=len(records))
    expect_metrics(sub.serving_metrics(records, duration, slo, percentiles),
                   ref.serving_metrics(records, duration, slo, percentiles),
                   f"serving_metrics({log}, {duration}, {slo}, {percentiles})",
                   metrics_predictions(ref, records, percentiles))


def expect_metrics_of_random_terms(sub, ref, r: random.Random, records: list, percentiles=None) -> None:
    """The submission's serving_metrics on one log, over a random duration and SLO and `percentiles` (random when
    None, drawn last), must equal the reference's."""
    duration, slo = random_duration(r, records), random_slo(ref, r, records)
    expect_random_metrics(sub, records, duration, slo, random_percentiles(r) if percentiles is None else percentiles)


def random_limited_log(ref, r: random.Random) -> list:
    """The records of a continuous run of a random crowd under a KV limit and max_model_len (and half the time a
    token budget), some requests cancelled or timing out."""
    requests, max_num_seqs, cost, limits = limited_case(r, r.random() < 0.5, kv=True, chunked=r.random() < 0.5,
                                                        max_len=True)
    return ref.simulate(requests, "continuous", max_num_seqs, cost, **limits)


def random_logs(seed: int, draw_log=random_log):
    """LOGS logs drawn from the seed by `draw_log(ref, r)`, each with the generator that drew it (checks go on
    drawing from it) and the reference."""
    r, ref = random.Random(seed), reference("serving")
    for _ in range(LOGS):
        yield r, ref, draw_log(ref, r)


@check("random_metrics", points=8, hint="serving_metrics",
       title="serving_metrics on logs of random engine runs: statistics, throughput, goodput and counts")
def test_random_metrics(sub, seed):
    for r, ref, records in random_logs(seed):
        expect_metrics_of_random_terms(sub, ref, r, records, (50, 90, 99))


@check("random_percentiles", points=5, hint="serving_metrics",
       title="percentiles of random samples at random levels (0, 100, 99.9 and others), linear interpolation")
def test_random_percentiles(sub, seed):
    r = random.Random(seed)
    for _ in range(LOGS):
        count = r.choice([1, 2, r.randint(3, 9), r.randint(10, 200)])
        records = [record(f"q{i}", 0.0, sorted(0.25 * r.randint(1, 4000) for _ in range(r.randint(1, 3))))
                   for i in range(count)]
        expect_random_metrics(sub, records, 10.0, None, random_percentiles(r))


@check("random_goodput", points=5, hint="serving_metrics",
       title="goodput on random logs against random SLOs, many exactly on a request's value (inclusive)")
def test_random_goodput(sub, seed):
    for r, ref, records in random_logs(seed):
        for _ in range(3):
            expect_metrics_of_random_terms(sub, ref, r, records)


@check("random_metrics_under_limits", points=4, hint="serving_metrics",
       title="serving_metrics on logs of runs under resource limits: rejected requests counted, never timed")
def test_random_metrics_under_limits(sub, seed):
    for r, ref, records in random_logs(seed, random_limited_log):
        expect_metrics_of_random_terms(sub, ref, r, records)


@check("random_nothing_to_time", points=4, hint="serving_metrics",
       title="logs with no completed request, only one-token requests, or none at all: None statistics, zero rates")
def test_random_nothing_to_time(sub, seed):
    for r, ref, records in random_logs(seed):
        kind = r.choice(["failed", "one-token", "empty"])
        if kind == "failed":
            records = [rec for rec in records if rec["status"] != "ok"]
        elif kind == "one-token":
            records = [rec for rec in records if rec["output_tokens"] <= 1 or rec["status"] != "ok"]
        else:
            records = []
        expect_random_metrics(sub, records, r.uniform(0.5, 50.0), random_slo(ref, r, records), random_percentiles(r))
