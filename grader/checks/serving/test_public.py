"""Public serving checks: hand-worked engine traces, hand-made server logs and the chat/code lesson; answers from
the goldens."""
from grader.checks.serving.expect import expect_metrics, expect_records, metrics_difference, same_value
from grader.checks.serving.lesson import COST as LESSON_COST
from grader.checks.serving.lesson import BUDGETS, CHUNK_SEATS, KV_LIMITS, KV_SEATS, SEATS, SLO, SPAN, lesson_requests
from grader.checks.serving.misconceptions import metrics_predictions, simulate_predictions
from grader.checks.serving.records import (CONCURRENT, CONCURRENT_DURATION, EMPTY, EVEN, FAILED, PERCENTILES, SKEWED,
                                           SLO_DURATION, SLO_LOG, SLOS, TOKENS)
from grader.checks.serving.traces import COST, LIMITS, TRACES
from grader.engine import check, expect_raises, fail, golden, reference, tr

TRACES_FILE = "grader/checks/serving/traces.py"
RECORDS_FILE = "grader/checks/serving/records.py"
LESSON_FILE = "grader/checks/serving/lesson.py"


def expect_trace(sub, name: str) -> None:
    """The submission's simulate on trace `name` must return the golden records (derived by hand in traces.py)."""
    requests, policy, max_num_seqs, _ = TRACES[name]
    limits = LIMITS.get(name, {})

    def compute() -> dict:
        ref = reference("serving")
        return {"expected": ref.simulate(requests, policy, max_num_seqs, COST, **limits),
                "wrong": simulate_predictions(ref, requests, policy, max_num_seqs, COST, **limits)}
    case = golden(f"trace.{name}", compute)
    extra = "".join(f", {key}={value}" for key, value in limits.items())
    what = tr("{call} (the {name} trace, worked step by step in {file})",
              call=f"simulate({requests}, {policy!r}, max_num_seqs={max_num_seqs}, cost={COST}{extra})", name=name,
              file=TRACES_FILE)
    expect_records(sub.simulate(requests, policy, max_num_seqs, COST, **limits), case["expected"], what,
                   case["wrong"])


def trace_check(name: str, title: str, *traces: str):
    """A one-point check of simulate, named `name`: the submission must return the golden records of each trace."""
    @check(name, points=1, hint="simulate", title=title)
    def check_traces(sub):
        for trace in traces:
            expect_trace(sub, trace)
    return check_traces


test_admission_limit = trace_check(
    "admission_limit", "simulate admits arrived requests in order only while fewer than max_num_seqs run",
    "admission")
test_static_versus_continuous = trace_check(
    "static_versus_continuous",
    "continuous batching admits into free seats every step; static only when the engine is empty",
    "continuous", "static")
test_one_output_token = trace_check(
    "one_output_token", "a one-token request ends ok at the end of the step that admits it", "one_token")
test_cancel_waiting_and_running = trace_check(
    "cancel_waiting_and_running",
    "cancel_at ends a waiting or a running request at the first step boundary at or after it", "cancels")
test_timeout_waiting_and_running = trace_check(
    "timeout_waiting_and_running",
    "arrival + timeout ends a request at a step boundary; tokens already produced stay in its record", "timeouts")
test_idle_gaps = trace_check("idle_gaps", "an empty engine jumps to the next arrival instead of stepping", "idle")
test_equal_arrival_times = trace_check(
    "equal_arrival_times",
    "requests with equal arrival times are admitted in list order; records come back in input order", "ties")
test_kv_preemption_recomputes = trace_check(
    "kv_preemption_recomputes",
    "under kv_blocks the request admitted last is preempted, keeps its tokens and recomputes when readmitted; "
    "one that could never fit is rejected", "preemption")
test_chunked_prefill = trace_check(
    "chunked_prefill",
    "max_num_batched_tokens: decodes first, then prompt chunks in admission order; the first token comes with the "
    "last prompt token", "chunked")
test_rejected_over_max_model_len = trace_check(
    "rejected_over_max_model_len", "a request longer than max_model_len ends rejected at its arrival, with no token",
    "too_long")


GOOD_REQUEST = {"id": "r", "arrival": 0.0, "prompt_tokens": 4, "output_tokens": 2}
SIMULATE_BAD_CALLS = [
    ("policy", ([GOOD_REQUEST], "fifo", 2, COST)),
    ("max_num_seqs", ([GOOD_REQUEST], "continuous", 0, COST)),
    ("per_decode_seq", ([GOOD_REQUEST], "continuous", 2, {"base": 1.0, "per_prefill_token": 0.25})),
    ("base", ([GOOD_REQUEST], "continuous", 2, {**COST, "base": -1.0})),
    ("arrival", ([{**GOOD_REQUEST, "arrival": -0.5}], "continuous", 2, COST)),
    ("prompt_tokens", ([{**GOOD_REQUEST, "prompt_tokens": -3}], "static", 2, COST)),
    ("output_tokens", ([{**GOOD_REQUEST, "output_tokens": 0}], "continuous", 2, COST)),
    ("timeout", ([{**GOOD_REQUEST, "timeout": -1.0}], "continuous", 2, COST)),
    ("cancel_at", ([{**GOOD_REQUEST, "cancel_at": -2.0}], "continuous", 2, COST)),
    ("kv_blocks", ([GOOD_REQUEST], "continuous", 2, COST, 0)),
    ("block_size", ([GOOD_REQUEST], "continuous", 2, COST, 8, 0)),
    ("max_num_batched_tokens", ([GOOD_REQUEST], "continuous", 2, COST, None, 16, 0)),
    ("max_model_len", ([GOOD_REQUEST], "static", 2, COST, None, 16, None, -4)),
]


@check("simulate_bad_arguments", points=1, hint="simulate",
       title="an unknown policy, max_num_seqs < 1, a limit below 1, a missing or negative cost, bad request fields "
             "raise ValueError")
def test_simulate_bad_arguments(sub):
    for argument, args in SIMULATE_BAD_CALLS:
        message = expect_raises(ValueError, sub.simulate, *args)
        if argument not in message:
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}",
                    call=f"simulate{args!r}", message=message, name=argument))


def metrics_call(records_name: str, duration: float, slo=None, percentiles=None) -> str:
    """How a serving_metrics call on one of records.py's logs reads in a message."""
    extra = (f", slo={slo!r}" if slo is not None else "") + \
        (f", percentiles={percentiles!r}" if percentiles is not None else "")
    return f"serving_metrics({log_named(records_name)}, duration={duration!r}{extra})"


def log_named(name: str) -> str:
    """One of records.py's logs, as a call names it."""
    return tr("{name} from {file}", name=name, file=RECORDS_FILE)


def expect_log_metrics(sub, key: str, name: str, records: list, duration: float, slo=None,
                       percentiles=(50, 90, 99)) -> None:
    """The submission's serving_metrics on a hand-made log must equal the golden."""
    def compute() -> dict:
        ref = reference("serving")
        return {"expected": ref.serving_metrics(records, duration, slo, percentiles),
                "wrong": metrics_predictions(ref, records, percentiles)}
    case = golden(f"metrics.{key}", compute)
    shown = None if percentiles == (50, 90, 99) else percentiles
    expect_metrics(sub.serving_metrics(records, duration, slo, percentiles), case["expected"],
                   metrics_call(name, duration, slo, shown), case["wrong"])


@check("percentiles_interpolate", points=1, hint="serving_metrics",
       title="percentiles interpolate linearly between order statistics (numpy's default), 'p99.9' included")
def test_percentiles_interpolate(sub):
    expect_log_metrics(sub, "skewed", "SKEWED", SKEWED, 10.0, percentiles=PERCENTILES)
    expect_log_metrics(sub, "even", "EVEN", EVEN, 5.0, percentiles=PERCENTILES)


@check("tpot_and_itl", points=1, hint="serving_metrics",
       title="TPOT leaves out the first token and one-token requests; ITL pools every gap of every request")
def test_tpot_and_itl(sub):
    expect_log_metrics(sub, "tokens", "TOKENS", TOKENS, 5.0)


@check("failed_requests_counted_not_timed", points=1, hint="serving_metrics",
       title="cancelled and timed-out requests are counted but stay out of latency statistics and throughput")
def test_failed_requests_counted_not_timed(sub):
    expect_log_metrics(sub, "failed", "FAILED", FAILED, 10.0)


@check("goodput_inclusive", points=1, hint="serving_metrics",
       title="goodput counts completed requests meeting every SLO, inclusive; a one-token request meets tpot and itl")
def test_goodput_inclusive(sub):
    for i, slo in enumerate(SLOS):
        expect_log_metrics(sub, f"slo.{i}", "SLO_LOG", SLO_LOG, SLO_DURATION, slo)


@check("throughput_counts_the_server", points=1, hint="serving_metrics",
       title="output throughput is completed tokens per second of duration, not a mean of per-request rates")
def test_throughput_counts_the_server(sub):
    expect_log_metrics(sub, "concurrent", "CONCURRENT", CONCURRENT, CONCURRENT_DURATION)


@check("nothing_to_time", points=1, hint="serving_metrics",
       title="a statistic over no values has None for its mean and percentiles; counts list every status, 0 where none")
def test_nothing_to_time(sub):
    for name, records in EMPTY.items():
        expect_log_metrics(sub, f"empty.{name.replace(' ', '_')}", f"EMPTY[{name!r}]", records, 2.0)


METRICS_BAD_CALLS = [
    ("duration", (FAILED, 0.0)),
    ("duration", (FAILED, -3.0)),
    ("slo", (FAILED, 10.0, {"ttft": 0.5, "tbt": 0.05})),
    ("percentile", (FAILED, 10.0, None, (50, 101))),
]


@check("metrics_bad_arguments", points=1, hint="serving_metrics",
       title="duration <= 0, an unknown SLO key and a percentile outside [0, 100] raise ValueError naming them")
def test_metrics_bad_arguments(sub):
    for argument, args in METRICS_BAD_CALLS:
        message = expect_raises(ValueError, sub.serving_metrics, *args)
        if argument not in message.lower():
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}",
                    call=f"serving_metrics({log_named('FAILED')}, {', '.join(map(repr, args[1:]))})",
                    message=message, name=argument))


def code_records(records) -> list:
    """The coding agent's records (ids "code-..."), the long prompts of the lesson."""
    return [r for r in records if isinstance(r, dict) and str(r.get("id", "")).startswith("code-")]


def lesson_golden(key: str, max_num_seqs: int, limits: dict) -> dict:
    """The reference's records (without token times) and figures of the lesson at one setting."""
    def compute() -> dict:
        ref = reference("serving")
        requests = lesson_requests()
        records = ref.simulate(requests, "continuous", max_num_seqs, LESSON_COST, **limits)
        return {"ends": [end_of(r) for r in records],
                "wrong_ends": {mid: [end_of(r) for r in wrong] for mid, wrong in simulate_predictions(
                    ref, requests, "continuous", max_num_seqs, LESSON_COST, **limits).items()},
                "metrics": ref.serving_metrics(records, SPAN, SLO),
                "code": ref.serving_metrics(code_records(records), SPAN),
                "wrong": metrics_predictions(ref, records)}
    return golden(f"lesson.{key}", compute)


def end_of(record) -> tuple | None:
    """What the lesson compares of a record: (id, status, tokens produced, first token, finish, preemptions)."""
    keys = ("id", "status", "output_tokens", "first_token", "finish", "preemptions")
    if not isinstance(record, dict) or not set(keys) <= record.keys():
        return None
    return tuple(record[key] for key in keys)


def ends_match(got: list, expected: list) -> bool:
    """Whether two lists of record ends agree (times within the tolerance)."""
    return len(got) == len(expected) and all(
        a is not None and a[:3] == b[:3] and same_value(a[3], b[3]) and same_value(a[4], b[4]) and a[5] == b[5]
        for a, b in zip(got, expected))


def figures(metrics: dict) -> str:
    """Counts, throughput, TTFT mean and p99, ITL p99 and goodput of a metrics dict, as a short line."""
    try:
        return tr("counts {counts}, output {output:.1f} tok/s, TTFT mean {ttft_mean:.3f} s, p99 {ttft_p99:.3f} s, "
                  "ITL p99 {itl_p99:.3f} s, goodput {goodput:.3f} req/s", counts=metrics["counts"],
                  output=metrics["output_throughput"], ttft_mean=metrics["ttft"]["mean"],
                  ttft_p99=metrics["ttft"]["p99"], itl_p99=metrics["itl"]["p99"], goodput=metrics["goodput"])
    except (KeyError, TypeError, ValueError):
        return repr(metrics)[:200]


def expect_lesson_run(sub, key: str, max_num_seqs: int, limits: dict) -> None:
    """The submission's records of the lesson at one setting, and their metrics, must equal the reference's."""
    case = lesson_golden(key, max_num_seqs, limits)
    requests = lesson_requests()
    extra = "".join(f", {name}={value}" for name, value in limits.items())
    lesson = tr("<the lesson's {count} requests, {file}>", count=len(requests), file=LESSON_FILE)
    call = f"simulate({lesson}, 'continuous', max_num_seqs={max_num_seqs}, cost={LESSON_COST}{extra})"
    records = sub.simulate(requests, "continuous", max_num_seqs, LESSON_COST, **limits)
    ends = [end_of(r) for r in records] if isinstance(records, (list, tuple)) else []
    if not ends_match(ends, case["ends"]):
        wrong = next((mid for mid, predicted in case["wrong_ends"].items() if ends_match(ends, predicted)), None)
        at = next((i for i, (a, b) in enumerate(zip(ends, case["ends"])) if not ends_match([a], [b])),
                  min(len(ends), len(case["ends"])))
        got = ends[at] if at < len(ends) else tr("no record")
        want = case["ends"][at] if at < len(case["ends"]) else tr("no record")
        fail(tr("{call}: record {at} (id, status, tokens, first_token, finish, preemptions) = {got}, expected {want}; "
                "the lesson's figures need your simulate to match the reference first", call=call, at=at, got=got,
                want=want), wrong)
    said = dict(seats=max_num_seqs, extra=extra)
    for shown, log, expected, slo in (
            (tr("<your records at max_num_seqs={seats}{extra}>", **said), records, case["metrics"], SLO),
            (tr("<the code requests of your records at max_num_seqs={seats}{extra}>", **said), code_records(records),
             case["code"], None)):
        metrics = sub.serving_metrics(log, SPAN, slo)
        if metrics_difference(metrics, expected) is not None:
            expect_metrics(metrics, expected,
                           tr("{call} gave {got}; the reference gives {expected}",
                              call=f"serving_metrics({shown}, duration={SPAN}, slo={slo})",
                              got=figures(metrics), expected=figures(expected)), case["wrong"] if slo else {})


@check("lesson_survivorship", points=2, hint="serving_metrics",
       title="lesson 1: at 4 seats half the requests time out and the p99 TTFT of the rest looks better than at 8; "
             "read p99 with counts and goodput")
def test_lesson_survivorship(sub):
    for max_num_seqs in SEATS:
        expect_lesson_run(sub, f"seats.{max_num_seqs}", max_num_seqs, {})


@check("lesson_kv_preemption", points=1, hint="simulate",
       title="lesson 2: with a KV limit, more seats than the cache holds cause preemptions and recomputation, and "
             "throughput falls")
def test_lesson_kv_preemption(sub):
    for max_num_seqs in KV_SEATS:
        expect_lesson_run(sub, f"kv.{max_num_seqs}", max_num_seqs, KV_LIMITS)


@check("lesson_chunked_prefill", points=1, hint="simulate",
       title="lesson 3: chunked prefill cuts the ITL p99 stalls of long prompts, at a TTFT cost to those prompts")
def test_lesson_chunked_prefill(sub):
    for budget in BUDGETS:
        if budget is None:
            expect_lesson_run(sub, f"seats.{CHUNK_SEATS}", CHUNK_SEATS, {})  # lesson 1's run at 12 seats
        else:
            expect_lesson_run(sub, f"chunked.{budget}", CHUNK_SEATS, {"max_num_batched_tokens": budget})
