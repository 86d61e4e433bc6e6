"""Simulator throughput: the reference engine loop on 10,000 requests, in requests simulated per second.

Run: python3 bench/serving.py [--requests 10000] [--runs 7]
The workload is the public lesson's mix for as long as 10,000 requests take to arrive (about 70 minutes): Poisson
chat traffic (short prompts and answers, a 3-s timeout, one in ten cancelling) and a coding agent's bursts of 8
long requests every 20 s, served with continuous batching at max_num_seqs 12. It is generated once; each run times `simulate` alone (median of the
runs). Target: under 2 s for 10,000 requests.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.checks.serving.lesson import COST
from grader.checks.serving.workloads import ticks
from reference.serving import simulate

MAX_NUM_SEQS = 12


def workload(count: int, seed: int = 0) -> list:
    """`count` requests of the lesson's mix, repeated: chats at 2 per second, 8 code requests every 20 s."""
    r = random.Random(seed)
    requests, clock, next_burst = [], 0.0, 10.0
    while len(requests) < count:
        clock += ticks(r.expovariate(2.0))
        while next_burst <= clock:  # the coding agent's fan-out
            requests += [{"id": len(requests) + k, "arrival": next_burst, "prompt_tokens": r.randint(4000, 8000),
                          "output_tokens": r.randint(150, 225), "timeout": 12.0} for k in range(8)]
            next_burst += 20.0
        request = {"id": len(requests), "arrival": clock, "prompt_tokens": r.randint(100, 600),
                   "output_tokens": r.randint(3, 20), "timeout": 3.0}
        if r.random() < 0.1:
            request["cancel_at"] = ticks(clock + r.uniform(0.5, 3.0))
        requests.append(request)
    return requests[:count]


def main() -> None:
    """Time the simulator and print the median and the requests per second."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    requests = workload(args.requests)
    seconds, records = [], None
    for _ in range(args.runs):
        start = time.perf_counter()
        records = simulate(requests, "continuous", MAX_NUM_SEQS, COST)
        seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    tokens = sum(rec["output_tokens"] for rec in records)
    steps = len({t for rec in records for t in rec["token_times"]})
    ok = sum(rec["status"] == "ok" for rec in records)
    print(f"simulate: {len(requests)} requests ({ok} ok), {steps} engine steps, {tokens} tokens, "
          f"max_num_seqs {MAX_NUM_SEQS}")
    print(f"median of {args.runs}: {median:.3f} s  ->  {len(requests) / median:,.0f} requests simulated per second "
          f"(target: {args.requests} requests under 2 s: {'met' if median < 2.0 else 'MISSED'})")


if __name__ == "__main__":
    main()
