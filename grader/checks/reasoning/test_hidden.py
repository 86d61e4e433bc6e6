"""Hidden reasoning checks: random ledgers of the four providers' usage shapes, malformed records, paired results and
effort families drawn from the seed, compared with the live reference."""
import random

from grader.checks.reasoning.draws import (random_bad_comparison, random_bad_record, random_calls, random_family,
                                           random_pair, random_prices, random_target, random_usage)
from grader.checks.reasoning.expect import (calls_text, expect_comparison, expect_cost, expect_effort,
                                            expect_totals, expect_value_error, gemini_thoughts, record_all,
                                            results_text)
from grader.engine import check, reference, tr

LEDGERS = 8
PAIRS = 20
FAMILIES = 15


def reference_ledger(calls: list):
    """The reference's ledger after recording `calls`."""
    ledger = reference("reasoning").UsageLedger()
    record_all(ledger, calls)
    return ledger


@check("random_ledger_totals", points=7, hint="UsageLedger",
       title="UsageLedger totals of random calls of the four providers, details present, absent or null")
def test_random_ledger_totals(sub, seed):
    r = random.Random(seed)
    for index in range(LEDGERS):
        calls = random_calls(r, r.randint(0 if index == 0 else 1, 10))
        ledger, half = sub.UsageLedger(), len(calls) // 2
        record_all(ledger, calls[:half])  # totals halfway, then at the end
        expect_totals(ledger.totals(), reference_ledger(calls[:half]).totals(),
                      f"ledger = UsageLedger(); {calls_text(calls[:half])}; ledger.totals()",
                      gemini_thoughts(calls[:half]))
        record_all(ledger, calls[half:])
        expect_totals(ledger.totals(), reference_ledger(calls).totals(),
                      f"ledger = UsageLedger(); {calls_text(calls)}; ledger.totals()", gemini_thoughts(calls))


@check("random_ledger_cost", points=4, hint="UsageLedger",
       title="UsageLedger.cost of random calls at random prices: cached, written, output tokens each at their price")
def test_random_ledger_cost(sub, seed):
    r = random.Random(seed)
    for _ in range(LEDGERS):
        calls, prices = random_calls(r, r.randint(1, 8)), random_prices(r)
        ledger = sub.UsageLedger()
        record_all(ledger, calls)
        expected = reference_ledger(calls)
        expect_cost(ledger.cost(prices), expected.cost(prices), expected.totals(), prices,
                    f"ledger = UsageLedger(); {calls_text(calls)}; ledger.cost({prices})", gemini_thoughts(calls))


@check("random_rejected_records", points=3, hint="UsageLedger",
       title="malformed usage, negative seconds and repeated call ids raise ValueError naming them, changing nothing")
def test_random_rejected_records(sub, seed):
    r = random.Random(seed)
    for _ in range(4):
        ledger, recorded = sub.UsageLedger(), []
        for step in range(6):
            call = (f"ok-{step}", random_usage(r), round(r.uniform(0.1, 30.0), 3))
            ledger.record(*call)
            recorded.append(call)
            if r.random() < 0.3:
                argument, bad = "call_id", (r.choice(recorded)[0], random_usage(r), 1.0)
            else:
                argument, usage, seconds = random_bad_record(r)
                bad = (f"bad-{step}", usage, seconds)
            what = f"{calls_text(recorded)}; ledger.record{bad!r}"
            expect_value_error(ledger.record, bad, argument, what)
            expect_totals(ledger.totals(), reference_ledger(recorded).totals(),
                          tr("{calls} raised; ledger.totals() (a rejected call changes nothing)", calls=what),
                          gemini_thoughts(recorded))


def expect_reference_comparison(sub, a: list, b: list) -> None:
    """The submission's compare_variants(a, b) equals the reference's."""
    expect_comparison(sub.compare_variants(a, b), reference("reasoning").compare_variants(a, b),
                      f"compare_variants(a={results_text(a)}, b={results_text(b)})")


@check("random_paired_comparisons", points=8, hint="compare_variants",
       title="compare_variants on random paired results: exact McNemar p-value, accuracies, tokens, the kept variant")
def test_random_paired_comparisons(sub, seed):
    r = random.Random(seed)
    for _ in range(PAIRS):
        expect_reference_comparison(sub, *random_pair(r))


@check("swapped_variants", points=2, hint="compare_variants",
       title="swapping the variants swaps the answer, except that a tie in tokens keeps a")
def test_swapped_variants(sub, seed):
    r = random.Random(seed)
    for _ in range(PAIRS // 2):
        a, b = random_pair(r)
        expect_reference_comparison(sub, a, b)
        expect_reference_comparison(sub, b, a)


@check("random_bad_comparisons", points=2, hint="compare_variants",
       title="compare_variants rejects empty, unpaired and malformed random results, naming them")
def test_random_bad_comparisons(sub, seed):
    r = random.Random(seed)
    for _ in range(10):
        argument, a, b, valid = random_bad_comparison(r)
        expect_value_error(sub.compare_variants, (a, b), argument,
                           f"compare_variants({a!r}, {b!r})")
        expect_reference_comparison(sub, *valid)  # the pair before the fault: refusing every call fails here


@check("random_effort_choices", points=5, hint="pick_effort",
       title="pick_effort on random families of effort levels and targets, exact boundaries included")
def test_random_effort_choices(sub, seed):
    r, ref = random.Random(seed), reference("reasoning")
    for _ in range(FAMILIES):
        family = random_family(r)
        target = random_target(r, family)
        expect_effort(sub.pick_effort(family, target), ref.pick_effort(family, target), family,
                      tr("pick_effort(<{count} levels>, min_accuracy={target})", count=len(family), target=target))


@check("unreachable_targets", points=2, hint="pick_effort",
       title="when no effort level reaches the target the answer is None, whatever effort costs; a target that "
             "one level reaches exactly names a level")
def test_unreachable_targets(sub, seed):
    r, ref = random.Random(seed), reference("reasoning")
    for _ in range(8):
        ceiling = r.choice([0.3, 0.5, 0.7])
        family = random_family(r, ceiling)
        target = round(r.uniform(ceiling + 0.05, 1.0), 2)
        expect_effort(sub.pick_effort(family, target), None, family,
                      tr("pick_effort(<{count} levels, none above {ceiling}>, min_accuracy={target})",
                         count=len(family), ceiling=ceiling, target=target))
        # the same family at the accuracy one of its levels reaches exactly: a constant None fails here
        runs = r.choice(list(family.values()))
        reached = sum(result["correct"] for result in runs) / len(runs)
        expect_effort(sub.pick_effort(family, reached), ref.pick_effort(family, reached), family,
                      tr("pick_effort(<{count} levels>, min_accuracy={target}), reached by a level", count=len(family),
                         target=reached))
