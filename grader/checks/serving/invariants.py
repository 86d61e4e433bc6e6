"""What any correct engine's records satisfy, whatever the workload, judged from the records alone.

The workloads are whole TICKs with base > 0, so a correct engine's clock is exact and strictly increasing: the
requests running in one step share its end time exactly, and counting the records with a token at a given time
counts the requests that got a token in that step. Under resource limits these are necessary conditions, not the
whole rule (a request still prefilling a chunk holds blocks but shows no token): the hidden checks compare the
records with the reference as well.
"""
import math
from collections import Counter, defaultdict
from itertools import pairwise

from grader.checks.serving.expect import RECORD_KEYS, RTOL, is_number
from grader.engine import fail, tr
from grader.engine.checks import type_name

STATUSES = ("ok", "cancelled", "timeout", "rejected")


def expect_well_formed(records, requests: list, what: str) -> None:
    """One dict record per request, in input order, with every key and an end."""
    if not isinstance(records, (list, tuple)) or len(records) != len(requests):
        fail(tr("{what} returned {type}, expected a list of {count} records", what=what, type=type_name(records),
                count=len(requests)))
    for index, (rec, request) in enumerate(zip(records, requests)):
        if not isinstance(rec, dict) or not set(RECORD_KEYS) <= rec.keys():
            fail(tr("{what}: record {index} is not a dict with keys {keys}", what=what, index=index,
                    keys=list(RECORD_KEYS)))
        if rec["id"] != request["id"]:
            fail(tr("{what}: record {index} has id {actual!r}, expected {expected!r} (input order)", what=what,
                    index=index, actual=rec["id"], expected=request["id"]))
        if rec["status"] not in STATUSES or not (is_number(rec["finish"]) and math.isfinite(rec["finish"])):
            fail(tr("{what}: request {id!r} never ended (status {status!r}, finish {finish!r})", what=what,
                    id=request["id"], status=rec["status"], finish=rec["finish"]))
        if not isinstance(rec["preemptions"], int) or isinstance(rec["preemptions"], bool) or rec["preemptions"] < 0:
            fail(tr("{what}: request {id!r} has preemptions {preemptions!r}, expected an int >= 0", what=what,
                    id=request["id"], preemptions=rec["preemptions"]))


def request_named(request: dict, what: str) -> str:
    """The request of the call `what` that a message is about."""
    return tr("{what}: request {id!r}", what=what, id=request["id"])


def expect_token_times(rec, request: dict, what: str) -> None:
    """Token times strictly increase, first_token is the first of them, and the count matches the status."""
    times = rec["token_times"]
    where = request_named(request, what)
    if not isinstance(times, (list, tuple)) or not all(is_number(t) and math.isfinite(t) for t in times):
        fail(tr("{where}: token_times is not a list of finite numbers", where=where))
    if any(later <= earlier for earlier, later in pairwise(times)):
        fail(tr("{where}: token times do not increase: {times}", where=where, times=list(times)[:10]))
    if rec["output_tokens"] != len(times) or rec["first_token"] != (times[0] if times else None):
        fail(tr("{where}: output_tokens {output_tokens!r} and first_token {first_token!r} do not match its {count} "
                "token times", where=where, output_tokens=rec["output_tokens"], first_token=rec["first_token"],
                count=len(times)))
    if times and times[-1] > rec["finish"] * (1 + RTOL):
        fail(tr("{where}: a token at {time} after its finish {finish}", where=where, time=times[-1],
                finish=rec["finish"]))
    complete = len(times) == request["output_tokens"]
    if (rec["status"] == "ok") != complete or (complete and times[-1] != rec["finish"]):
        fail(tr("{where}: status {status!r} with {count} of {total} tokens, finish {finish}", where=where,
                status=rec["status"], count=len(times), total=request["output_tokens"], finish=rec["finish"]))


def expect_ends_in_time(rec, request: dict, what: str) -> None:
    """A request ends no earlier than it arrives, and is cancelled or timed out only once its time has come."""
    where = request_named(request, what)
    due = {"cancelled": request.get("cancel_at"),
           "timeout": request["arrival"] + request["timeout"] if request.get("timeout") is not None else None}
    if rec["finish"] < request["arrival"]:
        fail(tr("{where} ends at {finish}, before it arrives at {arrival}", where=where, finish=rec["finish"],
                arrival=request["arrival"]))
    if rec["status"] in due and (due[rec["status"]] is None or rec["finish"] < due[rec["status"]]):
        fail(tr("{where} ends {status!r} at {finish}, before its time ({due})", where=where, status=rec["status"],
                finish=rec["finish"], due=due[rec["status"]]))


def expect_prefill_before_first_token(rec, request: dict, cost: dict, what: str) -> None:
    """The step that admits a request lasts at least the base cost plus its own prompt's prefill."""
    if rec["first_token"] is None:
        return
    fastest = cost["base"] + cost["per_prefill_token"] * request["prompt_tokens"]
    waited = rec["first_token"] - request["arrival"]
    if waited < fastest * (1 - RTOL):
        fail(tr("{what}: request {id!r} ({prompt} prompt tokens) got its first token {waited} s after arriving, "
                "less than its admission step takes ({fastest} s)", what=what, id=request["id"],
                prompt=request["prompt_tokens"], waited=waited, fastest=fastest), "first_token_without_prefill")


def expect_seat_limit(records, max_num_seqs: int, what: str) -> None:
    """No step hands out more than max_num_seqs tokens: a step's tokens all come at its end time."""
    tokens_at = Counter(t for rec in records for t in rec["token_times"])
    if tokens_at:
        busiest, running = max(tokens_at.items(), key=lambda item: item[1])
        if running > max_num_seqs:
            fail(tr("{what}: {running} requests got a token at t = {time}, more than max_num_seqs = {max_num_seqs} "
                    "running at once", what=what, running=running, time=busiest, max_num_seqs=max_num_seqs),
                 "ignores_max_num_seqs")


def refused(request: dict, limits: dict) -> bool:
    """Whether the contract rejects `request` at arrival: longer than max_model_len, or more blocks than kv_blocks."""
    tokens = request["prompt_tokens"] + request["output_tokens"]
    kv_blocks, block_size = limits.get("kv_blocks"), limits.get("block_size", 16)
    return ((limits.get("max_model_len") is not None and tokens > limits["max_model_len"])
            or (kv_blocks is not None and math.ceil(tokens / block_size) > kv_blocks))


def expect_rejections(records, requests: list, limits: dict, what: str) -> None:
    """Exactly the requests the limits refuse end "rejected", at their arrival, with no token and no preemption."""
    for rec, request in zip(records, requests):
        where = tr("{what}: request {id!r} ({prompt} + {output} tokens)", what=what, id=request["id"],
                   prompt=request["prompt_tokens"], output=request["output_tokens"])
        tokens = request["prompt_tokens"] + request["output_tokens"]
        if refused(request, limits) != (rec["status"] == "rejected"):
            too_long = limits.get("max_model_len") is not None and tokens > limits["max_model_len"]
            said = dict(where=where, status=rec["status"], limits=limits)
            fail(tr("{where} ended {status!r}; with {limits} it is refused at arrival", **said)
                 if refused(request, limits) else
                 tr("{where} ended {status!r}; with {limits} it is not refused at arrival", **said),
                 "admits_over_max_model_len" if too_long else None)
        if rec["status"] == "rejected" and (rec["token_times"] or rec["finish"] != request["arrival"]
                                            or rec["preemptions"] != 0):
            fail(tr("{where} was rejected with {tokens} tokens, finish {finish} and {preemptions} preemptions; a "
                    "rejection is at arrival ({arrival}), with none", where=where, tokens=len(rec["token_times"]),
                    finish=rec["finish"], preemptions=rec["preemptions"], arrival=request["arrival"]))


def expect_no_preemption_without_a_cache_limit(records, limits: dict, what: str) -> None:
    """Without kv_blocks nothing is ever preempted."""
    if limits.get("kv_blocks") is None and any(rec["preemptions"] for rec in records):
        fail(tr("{what}: preemptions without a KV-cache limit", what=what))


def expect_block_limit(records, requests: list, kv_blocks: int, block_size: int, what: str) -> None:
    """The requests that get a token at the end of a step hold at least ceil((prompt + tokens so far) / block_size)
    blocks after it: together no more than kv_blocks."""
    held = defaultdict(int)
    for rec, request in zip(records, requests):
        for produced, t in enumerate(rec["token_times"], start=1):
            held[t] += math.ceil((request["prompt_tokens"] + produced) / block_size)
    if held:
        busiest, blocks = max(held.items(), key=lambda item: item[1])
        if blocks > kv_blocks:
            fail(tr("{what}: the requests that got a token at t = {time} hold at least {blocks} blocks of "
                    "{block_size} tokens after that step, more than kv_blocks = {kv_blocks}", what=what, time=busiest,
                    blocks=blocks, block_size=block_size, kv_blocks=kv_blocks))


def expect_token_budget(records, requests: list, budget: int, cost: dict, what: str) -> None:
    """Each token costs at least one token of the step's budget, and a prompt longer than the budget takes at
    least ceil(prompt / budget) steps, each at least `base` long, before its first token."""
    tokens_at = Counter(t for rec in records for t in rec["token_times"])
    if tokens_at:
        busiest, count = max(tokens_at.items(), key=lambda item: item[1])
        if count > budget:
            fail(tr("{what}: {count} requests got a token at t = {time}, more than max_num_batched_tokens = {budget}",
                    what=what, count=count, time=busiest, budget=budget))
    for rec, request in zip(records, requests):
        if rec["first_token"] is None:
            continue
        steps = math.ceil(request["prompt_tokens"] / budget)
        fastest = steps * cost["base"] + cost["per_prefill_token"] * request["prompt_tokens"]
        if rec["first_token"] - request["arrival"] < fastest * (1 - RTOL):
            fail(tr("{what}: request {id!r} ({prompt} prompt tokens) got its first token {waited} s after arriving, "
                    "less than {steps} steps of at most {budget} tokens take ({fastest} s): its prompt was not chunked",
                    what=what, id=request["id"], prompt=request["prompt_tokens"],
                    waited=rec["first_token"] - request["arrival"], steps=steps, budget=budget, fastest=fastest),
                 "prefill_not_chunked")


def expect_recomputation(records, requests: list, cost: dict, what: str) -> None:
    """Without chunked prefill every step hands out a token to each request in it, and a request waiting after a
    preemption keeps the engine busy, so the step that readmits it begins where the step before it ended. A
    request preempted n times and readmitted after each (n - 1 times if it ended while it waited) has that many
    tokens whose step lasted at least base + per_prefill_token * (prompt + tokens produced before it): its
    recomputation."""
    ends = sorted({t for rec in records for t in rec["token_times"]})
    began = {later: earlier for earlier, later in pairwise(ends)}  # step end -> the previous step's end
    for rec, request in zip(records, requests):
        if rec["preemptions"] == 0:
            continue
        recomputed = [k for k, t in enumerate(rec["token_times"]) if k > 0 and t in began and
                      t - began[t] >= (cost["base"] + cost["per_prefill_token"] * (request["prompt_tokens"] + k))
                      * (1 - RTOL)]
        readmitted = rec["preemptions"] - (rec["status"] != "ok")
        if len(recomputed) < readmitted:
            fail(tr("{what}: request {id!r} was readmitted {readmitted} times after a preemption, but only {count} of "
                    "its steps were long enough to recompute its prompt and the tokens it had produced", what=what,
                    id=request["id"], readmitted=readmitted, count=len(recomputed)), "preemption_keeps_cache")


def expect_limit_invariants(records, requests: list, max_num_seqs: int, cost: dict, limits: dict,
                            what: str) -> None:
    """Every invariant of an engine run under resource limits, on the submission's records."""
    expect_engine_invariants(records, requests, max_num_seqs, cost, what)
    expect_rejections(records, requests, limits, what)
    expect_no_preemption_without_a_cache_limit(records, limits, what)
    if limits.get("kv_blocks") is not None:
        expect_block_limit(records, requests, limits["kv_blocks"], limits.get("block_size", 16), what)
    if limits.get("max_num_batched_tokens") is not None:
        expect_token_budget(records, requests, limits["max_num_batched_tokens"], cost, what)
    else:
        expect_recomputation(records, requests, cost, what)


def expect_engine_invariants(records, requests: list, max_num_seqs: int, cost: dict, what: str) -> None:
    """Every invariant of an engine run, on the submission's records."""
    expect_well_formed(records, requests, what)
    for rec, request in zip(records, requests):
        expect_token_times(rec, request, what)
        expect_ends_in_time(rec, request, what)
        expect_prefill_before_first_token(rec, request, cost, what)
    expect_seat_limit(records, max_num_seqs, what)
