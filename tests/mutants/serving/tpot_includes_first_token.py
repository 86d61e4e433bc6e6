"""Bug: TPOT divides the whole request time, the wait for the first token included, by every output token."""
from itertools import pairwise


def _latencies(record):
    times = record["token_times"]
    return {"ttft": record["first_token"] - record["arrival"],
            "tpot": (record["finish"] - record["arrival"]) / record["output_tokens"],
            "itl": max((b - a for a, b in pairwise(times)), default=None),
            "e2e": record["finish"] - record["arrival"]}
