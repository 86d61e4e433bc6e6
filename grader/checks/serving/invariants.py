"""What any correct engine's records satisfy, whatever the workload, judged from the records alone.

The workloads are whole TICKs with base > 0, so a correct engine's clock is exact and strictly increasing: the
requests running in one step share its end time exactly, and counting the records with a token at a given time
counts the requests that ran in that step.
"""
from collections import Counter
from itertools import pairwise

from grader.checks.serving.expect import RECORD_KEYS, RTOL, is_number
from grader.engine import fail
from grader.engine.checks import type_name

STATUSES = ("ok", "cancelled", "timeout")


def expect_well_formed(records, requests: list, what: str) -> None:
    """One dict record per request, in input order, with every key and an end."""
    if not isinstance(records, (list, tuple)) or len(records) != len(requests):
        fail(f"{what} returned {type_name(records)}, expected a list of {len(requests)} records")
    for index, (rec, request) in enumerate(zip(records, requests)):
        if not isinstance(rec, dict) or not set(RECORD_KEYS) <= rec.keys():
            fail(f"{what}: record {index} is not a dict with keys {list(RECORD_KEYS)}")
        if rec["id"] != request["id"]:
            fail(f"{what}: record {index} has id {rec['id']!r}, expected {request['id']!r} (input order)")
        if rec["status"] not in STATUSES or not is_number(rec["finish"]):
            fail(f"{what}: request {request['id']!r} never ended (status {rec['status']!r}, finish {rec['finish']!r})")


def expect_token_times(rec, request: dict, what: str) -> None:
    """Token times strictly increase, first_token is the first of them, and the count matches the status."""
    times = rec["token_times"]
    where = f"{what}: request {request['id']!r}"
    if not isinstance(times, (list, tuple)) or not all(is_number(t) for t in times):
        fail(f"{where}: token_times is not a list of numbers")
    if any(later <= earlier for earlier, later in pairwise(times)):
        fail(f"{where}: token times do not increase: {list(times)[:10]}")
    if rec["output_tokens"] != len(times) or rec["first_token"] != (times[0] if times else None):
        fail(f"{where}: output_tokens {rec['output_tokens']!r} and first_token {rec['first_token']!r} do not "
             f"match its {len(times)} token times")
    if times and times[-1] > rec["finish"] * (1 + RTOL):
        fail(f"{where}: a token at {times[-1]} after its finish {rec['finish']}")
    complete = len(times) == request["output_tokens"]
    if (rec["status"] == "ok") != complete or (complete and times[-1] != rec["finish"]):
        fail(f"{where}: status {rec['status']!r} with {len(times)} of {request['output_tokens']} tokens, "
             f"finish {rec['finish']}")


def expect_ends_in_time(rec, request: dict, what: str) -> None:
    """A request ends no earlier than it arrives, and is cancelled or timed out only once its time has come."""
    where = f"{what}: request {request['id']!r}"
    due = {"cancelled": request.get("cancel_at"),
           "timeout": request["arrival"] + request["timeout"] if request.get("timeout") is not None else None}
    if rec["finish"] < request["arrival"]:
        fail(f"{where} ends at {rec['finish']}, before it arrives at {request['arrival']}")
    if rec["status"] in due and (due[rec["status"]] is None or rec["finish"] < due[rec["status"]]):
        fail(f"{where} ends {rec['status']!r} at {rec['finish']}, before its time ({due[rec['status']]})")


def expect_prefill_before_first_token(rec, request: dict, cost: dict, what: str) -> None:
    """The step that admits a request lasts at least the base cost plus its own prompt's prefill."""
    if rec["first_token"] is None:
        return
    fastest = cost["base"] + cost["per_prefill_token"] * request["prompt_tokens"]
    waited = rec["first_token"] - request["arrival"]
    if waited < fastest * (1 - RTOL):
        fail(f"{what}: request {request['id']!r} ({request['prompt_tokens']} prompt tokens) got its first token "
             f"{waited} s after arriving, less than its admission step takes ({fastest} s)",
             "first_token_without_prefill")


def expect_seat_limit(records, max_num_seqs: int, what: str) -> None:
    """No step hands out more than max_num_seqs tokens: a step's tokens all come at its end time."""
    tokens_at = Counter(t for rec in records for t in rec["token_times"])
    if tokens_at:
        busiest, running = max(tokens_at.items(), key=lambda item: item[1])
        if running > max_num_seqs:
            fail(f"{what}: {running} requests got a token at t = {busiest}, more than max_num_seqs = {max_num_seqs} "
                 f"running at once", "ignores_max_num_seqs")


def expect_engine_invariants(records, requests: list, max_num_seqs: int, cost: dict, what: str) -> None:
    """Every invariant of an engine run, on the submission's records."""
    expect_well_formed(records, requests, what)
    for rec, request in zip(records, requests):
        expect_token_times(rec, request, what)
        expect_ends_in_time(rec, request, what)
        expect_prefill_before_first_token(rec, request, cost, what)
    expect_seat_limit(records, max_num_seqs, what)
