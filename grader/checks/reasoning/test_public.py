"""Public reasoning checks: ledgers of real-shaped usage from four APIs, a short answer behind thousands of
reasoning tokens, cached input at its own price, a retried call, two prompt comparisons and three task families
at three efforts; answers from the goldens."""
from grader.checks.reasoning.expect import (calls_text, expect_comparison, expect_cost, expect_effort,
                                            expect_totals, expect_value_error, gemini_thoughts, record_all,
                                            results_text)
from grader.checks.reasoning.tasks import COMPARISONS, DISCORDANT, FAMILIES, TARGET, discordant_results
from grader.checks.reasoning.usage import (AGENT_CALLS, GEMINI_FLASH_PRICES, GPT5_PRICES, LEDGERS, RETRY_FIRST,
                                           RETRY_ID, RETRY_SECOND, SHORT_ANSWER, SHORT_ANSWER_CALL,
                                           SHORT_ANSWER_TOKENS, anthropic_usage, chat_usage, gemini_usage,
                                           responses_usage)
from grader.engine import check, golden, reference, tr

USAGE_FILE = "grader/checks/reasoning/usage.py"


def reference_ledger(calls: list):
    """The reference's ledger after recording `calls`."""
    ledger = reference("reasoning").UsageLedger()
    record_all(ledger, calls)
    return ledger


def stored_cost(key: str, calls: list, prices: dict) -> float:
    """The golden cost of `calls` at `prices`."""
    return golden(key, lambda: reference_ledger(calls).cost(prices))


def stored_comparison(key: str, a: list, b: list) -> dict:
    """The golden compare_variants(a, b)."""
    return golden(key, lambda: reference("reasoning").compare_variants(a, b))


def expect_ledger(sub, key: str, calls: list, label: str | None = None):
    """Record `calls` in a fresh submission ledger; its totals must equal the golden. Returns (ledger, totals)."""
    expected = golden(f"totals.{key}", lambda: reference_ledger(calls).totals())
    ledger = sub.UsageLedger()
    record_all(ledger, calls)
    expect_totals(ledger.totals(), expected, f"ledger = UsageLedger(); {calls_text(calls, label)}; ledger.totals()",
                  gemini_thoughts(calls))
    return ledger, expected


@check("three_provider_shapes", points=1, hint="UsageLedger",
       title="UsageLedger totals of OpenAI Chat Completions and Responses, Anthropic Messages and Gemini usage, "
             "nulls, thinking alone, Gemini's camelCase and cache writes included")
def test_three_provider_shapes(sub):
    for name, calls in LEDGERS.items():
        expect_ledger(sub, name, calls, f"LEDGERS[{name!r}]")


@check("gemini_thoughts_beside_candidates", points=1, hint="UsageLedger",
       title="Gemini bills its thoughts as output beside candidates_token_count, not inside it, unlike OpenAI")
def test_gemini_thoughts_beside_candidates(sub):
    # a Gemini ledger beside an OpenAI call whose reasoning is inside its output total: only Gemini's thoughts
    # must be added to the candidates
    calls = LEDGERS["Google Gemini"] + [SHORT_ANSWER_CALL]
    expect_ledger(sub, "gemini_beside_openai", calls, "LEDGERS['Google Gemini'] + [SHORT_ANSWER_CALL]")
    gemini = LEDGERS["Google Gemini"]
    ledger, totals = expect_ledger(sub, "gemini", gemini, "LEDGERS['Google Gemini']")
    expected = stored_cost("cost.gemini", gemini, GEMINI_FLASH_PRICES)
    what = tr("after <{label}: {count} calls, see {file}>, ledger.cost({prices})", label="LEDGERS['Google Gemini']",
              count=len(gemini), file=USAGE_FILE, prices=GEMINI_FLASH_PRICES)
    expect_cost(ledger.cost(GEMINI_FLASH_PRICES), expected, totals, GEMINI_FLASH_PRICES, what,
                gemini_thoughts(gemini))


@check("reasoning_behind_short_answer", points=1, hint="UsageLedger",
       title="a 7-token answer that billed 2,311 output tokens: consumption comes from the usage, not the answer")
def test_reasoning_behind_short_answer(sub):
    ledger, totals = expect_ledger(sub, "short_answer", [SHORT_ANSWER_CALL])
    expected = stored_cost("cost.short_answer", [SHORT_ANSWER_CALL], GPT5_PRICES)
    what = tr("the visible answer {answer!r} is {tokens} tokens; after {calls}, ledger.cost({prices})",
              answer=SHORT_ANSWER, tokens=SHORT_ANSWER_TOKENS, calls=calls_text([SHORT_ANSWER_CALL]),
              prices=GPT5_PRICES)
    expect_cost(ledger.cost(GPT5_PRICES), expected, totals, GPT5_PRICES, what)


@check("cached_input_own_price", points=1, hint="UsageLedger",
       title="an agent loop on a cached 40k-token context: cached input and cache writes each at their own price")
def test_cached_input_own_price(sub):
    for name, (prices, calls) in AGENT_CALLS.items():
        ledger, totals = expect_ledger(sub, f"agent.{name}", calls, f"AGENT_CALLS[{name!r}]")
        expected = stored_cost(f"cost.agent.{name}", calls, prices)
        what = tr("after <{label}: {count} calls, see {file}>, ledger.cost({prices})", label=f"AGENT_CALLS[{name!r}]",
                  count=len(calls), file=USAGE_FILE, prices=prices)
        expect_cost(ledger.cost(prices), expected, totals, prices, what)


@check("retried_call_own_id", points=1, hint="UsageLedger",
       title="a retried call is a second call: its own id adds it, the same id is a ValueError that changes nothing")
def test_retried_call_own_id(sub):
    call_id, usage, seconds = RETRY_FIRST
    first = golden("totals.retry.first", lambda: reference_ledger([RETRY_FIRST]).totals())
    both = golden("totals.retry.both", lambda: reference_ledger([RETRY_FIRST, (RETRY_ID, RETRY_SECOND, 21.0)]).totals())
    ledger = sub.UsageLedger()
    ledger.record(call_id, usage, seconds)
    setup = f"ledger.record({call_id!r}, {usage!r}, {seconds})"
    again = f"{setup}; ledger.record({call_id!r}, {RETRY_SECOND!r}, 21.0)"
    expect_value_error(ledger.record, (call_id, RETRY_SECOND, 21.0), "call_id", again)
    expect_totals(ledger.totals(), first, tr("{calls} raised; ledger.totals() (the rejected call must change "
                                             "nothing)", calls=again))
    ledger.record(RETRY_ID, RETRY_SECOND, 21.0)
    expect_totals(ledger.totals(), both, tr("{calls}; ledger.totals() (both attempts consumed tokens)",
                                            calls=f"{setup}; ledger.record({RETRY_ID!r}, {RETRY_SECOND!r}, 21.0)"))


BAD_RECORDS = [  # (the argument the message must name, or a tuple of names any of which will do, usage, seconds)
    ("usage", {"input_tokens": 120, "output_tokens": 40, "total_tokens": 160}, 1.0),
    ("completion_tokens", {"prompt_tokens": 120, "total_tokens": 120}, 1.0),
    ("completion_tokens", {**chat_usage(120, 40), "completion_tokens": None}, 1.0),
    ("input_tokens", responses_usage(-5, 40), 1.0),
    ("output_tokens", {k: v for k, v in anthropic_usage(120, 40).items() if k != "output_tokens"}, 1.0),
    ("cached_tokens", chat_usage(120, 40, cached=128), 1.0),
    ("reasoning_tokens", responses_usage(120, 40, reasoning=41), 1.0),
    ("cache_read_input_tokens", anthropic_usage(120, 40, cache_read=-1), 1.0),
    ("thinking_tokens", anthropic_usage(120, 40, thinking=41), 1.0),
    ("cache_write_tokens", responses_usage(120, 40, written=-1), 1.0),
    ("candidates_token_count", {"prompt_token_count": 120, "thoughts_token_count": 30, "total_token_count": 150}, 1.0),
    (("candidates_token_count", "candidatesTokenCount"),
     {"promptTokenCount": 120, "thoughtsTokenCount": 30, "totalTokenCount": 150}, 1.0),
    # no key tells the shape, and a required count is missing: either rule may be the one the message names
    (("prompt_token_count", "usage"), {"candidates_token_count": 40, "total_token_count": 160}, 1.0),
    ("cached_content_token_count", gemini_usage(120, 40, cached=121), 1.0),
    ("seconds", chat_usage(120, 40), -0.5),
]


@check("ledger_bad_arguments", points=1, hint="UsageLedger",
       title="record rejects unknown shapes, missing, null, negative or too large counts and negative seconds")
def test_ledger_bad_arguments(sub):
    valid = ("ok-1", chat_usage(300, 80, cached=128, reasoning=32), 1.5)
    expected = golden("totals.bad_arguments", lambda: reference_ledger([valid]).totals())
    ledger = sub.UsageLedger()
    record_all(ledger, [valid])
    setup = calls_text([valid])
    for index, (argument, usage, seconds) in enumerate(BAD_RECORDS):
        call = f"ledger.record('bad-{index}', {usage!r}, {seconds})"
        expect_value_error(ledger.record, (f"bad-{index}", usage, seconds), argument, f"{setup}; {call}")
        expect_totals(ledger.totals(), expected, tr("{calls} raised; ledger.totals() (a rejected call changes "
                                                    "nothing)", calls=f"{setup}; {call}"))
    prices = {k: v for k, v in GPT5_PRICES.items() if k != "cached_input"}
    expect_value_error(ledger.cost, (prices,), "cached_input", f"{setup}; ledger.cost({prices})")


@check("padded_prompt_not_kept", points=1, hint="compare_variants",
       title="padding a clear prompt with 'think very carefully' costs tokens, changes nothing significant: not kept")
def test_padded_prompt_not_kept(sub):
    for name in ("clear prompt vs padded prompt", "padded prompt vs clear prompt"):
        expect_named_comparison(sub, name)


@check("real_improvement_kept", points=1, hint="compare_variants",
       title="a prompt with a worked example wins 11 tasks and loses 1 (p < 0.05): kept despite its extra tokens")
def test_real_improvement_kept(sub):
    for name in ("baseline prompt vs prompt with a worked example", "prompt with a worked example vs baseline prompt"):
        expect_named_comparison(sub, name)


def expect_named_comparison(sub, name: str) -> None:
    """The submission's compare_variants on the named public comparison must equal the golden."""
    a, b = COMPARISONS[name]
    expected = stored_comparison(f"compare.{name}", a, b)
    what = tr("{name}: compare_variants(a={a}, b={b}) (see {file})", name=tr(name), a=results_text(a),
              b=results_text(b), file="grader/checks/reasoning/tasks.py")
    expect_comparison(sub.compare_variants(a, b), expected, what)


@check("latency_and_verifiability", points=1, hint="compare_variants",
       title="compare_variants reports each variant's median seconds and verifiable share (None when no result says)")
def test_latency_and_verifiability(sub):
    # the worked example's answers quote a test run 34 times in 40, the baseline's 3 times; the padded comparison
    # marks nothing, and a list with marks against one without gives a share and None
    expect_named_comparison(sub, "baseline prompt vs prompt with a worked example")
    expect_named_comparison(sub, "clear prompt vs padded prompt")
    a = COMPARISONS["prompt with a worked example vs baseline prompt"][0]
    b = COMPARISONS["clear prompt vs padded prompt"][1]
    expected = stored_comparison("compare.marked vs unmarked", a, b)
    what = tr("compare_variants(a=<the worked example's results, marked verifiable>, b=<the padded prompt's "
              "results, unmarked>) (see grader/checks/reasoning/tasks.py)")
    expect_comparison(sub.compare_variants(a, b), expected, what)


@check("mcnemar_exact_p_values", points=1, hint="compare_variants",
       title="exact McNemar p-values: no discordant pair, 5-0 (p = 0.0625, not significant), 9-1, 3-5, 0-6, 2-12")
def test_mcnemar_exact_p_values(sub):
    for only_a, only_b in DISCORDANT:
        a, b = discordant_results(only_a, only_b)
        expected = stored_comparison(f"discordant.{only_a}.{only_b}", a, b)
        what = tr("compare_variants(a={a}, b={b}) with {only_a} tasks only a got right and {only_b} only b got right",
                  a=results_text(a), b=results_text(b), only_a=only_a, only_b=only_b)
        expect_comparison(sub.compare_variants(a, b), expected, what)


def one_result(correct=True, tokens=100, seconds=1.0) -> dict:
    """A per-task result."""
    return {"correct": correct, "tokens": tokens, "seconds": seconds}


BAD_COMPARISONS = [  # (the argument the message must name, a, b)
    ("a", [], []),
    ("b", [one_result()], [one_result(), one_result()]),
    ("tokens", [one_result(tokens=-3)], [one_result()]),
    ("seconds", [one_result()], [one_result(seconds=-1.0)]),
    ("correct", [one_result()], [{"tokens": 100, "seconds": 1.0}]),
]


@check("compare_bad_arguments", points=1, hint="compare_variants",
       title="compare_variants rejects empty or unpaired lists and malformed results, naming them")
def test_compare_bad_arguments(sub):
    for argument, a, b in BAD_COMPARISONS:
        expect_value_error(sub.compare_variants, (a, b), argument, f"compare_variants({a!r}, {b!r})")


def expect_pick(sub, key: str, family: str, results: dict, min_accuracy: float) -> None:
    """The submission's pick_effort on a family's results must equal the golden."""
    expected = golden(f"effort.{key}", lambda: reference("reasoning").pick_effort(results, min_accuracy))
    shown = ", ".join(f"{level!r}: {results_text(runs)}" for level, runs in results.items())
    what = tr("{family}: pick_effort({{{results}}}, min_accuracy={min_accuracy})", family=tr(family), results=shown,
              min_accuracy=min_accuracy)
    expect_effort(sub.pick_effort(results, min_accuracy), expected, results, what)


@check("effort_by_need", points=1, hint="pick_effort",
       title="a formula needs low effort, cross-module reasoning high, a private file no effort (None) at 0.85")
def test_effort_by_need(sub):
    for family, results in FAMILIES.items():
        expect_pick(sub, family, family, results, TARGET)


@check("effort_boundary_and_order", points=1, hint="pick_effort",
       title="an accuracy equal to the target reaches it; the choice is by total tokens, not by listing order")
def test_effort_boundary_and_order(sub):
    family = "cross-module reasoning"
    results = FAMILIES[family]
    reversed_results = dict(reversed(list(results.items())))
    expect_pick(sub, "boundary", family, results, 0.7)        # medium: 14/20 = 0.7 exactly
    expect_pick(sub, "boundary.reversed", family, reversed_results, 0.7)
    expect_pick(sub, "zero.reversed", family, reversed_results, 0.0)
    expect_pick(sub, "perfect", "closed-form formula", FAMILIES["closed-form formula"], 1.0)


@check("effort_bad_arguments", points=1, hint="pick_effort",
       title="pick_effort rejects min_accuracy outside [0, 1] and empty results, naming them")
def test_effort_bad_arguments(sub):
    results = {"low": [one_result()], "high": [one_result(tokens=300)]}
    for argument, args in (("min_accuracy", (results, 1.5)), ("min_accuracy", (results, -0.1)),
                           ("results", ({"low": [], "high": [one_result()]}, 0.5)),
                           ("tokens", ({"low": [one_result(tokens=-1)]}, 0.5))):
        expect_value_error(sub.pick_effort, args, argument, f"pick_effort({args[0]!r}, {args[1]!r})")
