"""Hidden latency checks: random task graphs with order edges (grader/checks/latency/graphs.py) and measured runs
drawn from the seed, compared with the live reference, and the invariants every answer keeps."""
import random
from functools import partial
from itertools import pairwise

from grader.checks.latency.expect import (critical_difference, expect_result, expect_seconds, expect_value_error,
                                          same_seconds, schedule_difference, what_if_difference)
from grader.checks.latency.graphs import (broken_task, dependent_pairs, independent_pairs, random_task,
                                          step_names, waits_of)
from grader.checks.latency.misconceptions import (critical_misconception, first_output_misconception,
                                                  schedule_misconception, what_if_misconception)
from grader.checks.latency.runs import random_runs
from grader.engine import check, expect_type, fail, reference, tr

# Hidden messages never show their inputs: a task is "a random task".


def random_tasks(seed: int, count: int, tied: bool | None = None):
    """`count` random task graphs drawn from the seed, with exact ties in all, none or (None) every other one from
    the first; each with the generator that drew it (checks go on drawing from it) and the reference."""
    r, ref = random.Random(seed), reference("latency")
    for case in range(count):
        yield r, ref, *random_task(r, tied=case % 2 == 0 if tied is None else tied)


@check("random_schedules", points=5, hint="schedule",
       title="schedule of random task graphs with deps and order edges, against the reference")
def test_random_schedules(sub, seed):
    for r, ref, durations, deps, order in random_tasks(seed, 24):
        expected = ref.schedule(durations, deps, order)
        leave_out_order = order is None and r.random() < 0.5  # order=None is the default
        got = sub.schedule(durations, deps) if leave_out_order else sub.schedule(durations, deps, order)
        expect_result(got, expected, tr("schedule of a random task"), schedule_difference,
                      partial(schedule_misconception, durations=durations, expected=expected))


@check("random_graphs_without_a_schedule", points=3, hint="schedule",
       title="random graphs with a cycle, an unknown step or a negative duration raise ValueError naming a step; "
             "the same graphs without that fault are answered")
def test_random_graphs_without_a_schedule(sub, seed):
    r, ref = random.Random(seed), reference("latency")
    for case in range(16):
        durations, deps, order, names, kind, valid = broken_task(r)
        fn = ("schedule", "critical_path")[case % 2]
        expect_value_error(getattr(sub, fn), (durations, deps, order),
                           tr("{fn} of a task with a {kind}", fn=fn, kind=tr(kind)), names)
        # the task before the break, answered as the reference answers: refusing every call fails here
        expect_result(getattr(sub, fn)(*valid), getattr(ref, fn)(*valid),
                      tr("{fn} of a random task without the {kind}", fn=fn, kind=tr(kind)),
                      (schedule_difference, critical_difference)[case % 2])


@check("random_critical_paths", points=4, hint="critical_path",
       title="critical_path of random task graphs full of exact ties and zero-second steps, against the reference")
def test_random_critical_paths(sub, seed):
    for _, ref, durations, deps, order in random_tasks(seed, 30, tied=True):
        expected = ref.critical_path(durations, deps, order)
        expect_result(sub.critical_path(durations, deps, order), expected, tr("critical_path of a random task"),
                      critical_difference, partial(critical_misconception, durations=durations, expected=expected))


def chain_problem(path, durations: dict, deps: dict, order: dict | None, total: float) -> str | None:
    """None when `path` is a chain from a step that waits for nothing to one that nothing waits for, whose
    durations add up to `total`; otherwise the invariant it breaks."""
    if not isinstance(path, (list, tuple)) or not path or any(step not in durations for step in path):
        return tr("the path is not a non-empty list of the task's steps")
    waits = waits_of(durations, deps, order)
    if waits[path[0]]:
        return tr("the path's first step waits for another step")
    if any(path[-1] in before for before in waits.values()):
        return tr("a step waits for the path's last step")
    if any(a not in waits[b] for a, b in pairwise(path)):
        return tr("a step of the path does not wait for the one before it")
    if not same_seconds(sum(durations[step] for step in path), total):
        return tr("the path's durations do not add up to the total")
    return None


@check("critical_path_invariants", points=4, hint="critical_path",
       title="critical_path total is the last end of the schedule; the path is a chain of edges that takes it all")
def test_critical_path_invariants(sub, seed):
    for _, ref, durations, deps, order in random_tasks(seed, 16, tied=False):
        expected = ref.critical_path(durations, deps, order)
        got, what = sub.critical_path(durations, deps, order), tr("critical_path of a random task")
        if not isinstance(got, (list, tuple)) or len(got) != 2:
            fail(tr("critical_path of a random task did not return a pair (total, path)"))
        ends = [end for _, end in ref.schedule(durations, deps, order).values()]
        if not same_seconds(got[0], max(ends)):
            fail(tr("critical_path of a random task: the total is not the last end of the schedule"),
                 critical_misconception(got, durations, expected))
        problem = chain_problem(got[1], durations, deps, order, expected[0])
        if problem is not None:
            fail(tr("{what}: {problem}", what=what, problem=problem))
        expect_result(got, expected, what, critical_difference)


def random_change(r: random.Random, durations: dict, deps: dict, order: dict | None) -> dict:
    """A change what_if must accept: remove or shorten a step, or run two independent steps in parallel."""
    kind = r.choice(["remove", "shorten", "parallel"] if len(durations) > 1 else ["remove", "shorten"])
    step = r.choice(sorted(durations))
    if kind == "remove":
        return {"remove": step}
    if kind == "shorten":  # an exact fraction of the duration: 0, the whole of it, or between
        return {"shorten": step, "seconds": durations[step] * r.randint(0, 8) / 8}
    pairs = independent_pairs(durations, deps, order)
    if not pairs:
        return {"remove": step}
    pair = pairs[0] if r.random() < 0.5 else r.choice(pairs)
    return {"parallel": r.sample(pair, 2)}


@check("random_what_ifs", points=5, hint="what_if",
       title="what_if of random removals, shortenings and parallel pairs; saving = old total - new total")
def test_random_what_ifs(sub, seed):
    for r, ref, durations, deps, order in random_tasks(seed, 20):
        change = random_change(r, durations, deps, order)
        expected = ref.what_if(durations, deps, change, order)
        got = sub.what_if(durations, deps, change, order)
        what = tr("what_if of a random {kind} change on a random task", kind=next(iter(change)))
        expect_result(got, expected, what, what_if_difference,
                      partial(what_if_misconception, durations=durations, change=change, expected=expected))
        before = sub.critical_path(durations, deps, order)
        if not same_seconds(got["saving"], before[0] - got["total"]):
            fail(tr("{what}: the saving is not critical_path's total minus the new total", what=what))


def bad_change(r: random.Random, durations: dict) -> tuple:
    """(a change what_if must refuse, the names its ValueError may give)."""
    step = r.choice(sorted(durations))
    ghost = next(s for s in step_names(r, len(durations) + 1) if s not in durations)
    choices = [({"remove": ghost}, [ghost]), ({"shorten": ghost, "seconds": 0.0}, [ghost]),
               ({"parallel": [step, ghost]}, [ghost]),
               ({"shorten": step, "seconds": durations[step] + r.randint(1, 8) / 4}, ["seconds"]),
               ({"shorten": step, "seconds": -r.randint(1, 8) / 4}, ["seconds"]),
               ({}, ["change"]), ({"remove": step, "parallel": [step, step]}, ["change"])]
    return r.choice(choices)


@check("what_if_refuses_dependent_pairs", points=3, hint="what_if",
       title="what_if refuses to run in parallel two steps of which one needs the other's output, even indirectly")
def test_what_if_refuses_dependent_pairs(sub, seed):
    r, ref = random.Random(seed), reference("latency")
    for _ in range(12):
        durations, deps, order = random_task(r, tied=r.random() < 0.5, size=(3, 12))
        pairs = dependent_pairs(deps)
        if pairs:
            pair = r.sample(r.choice(pairs), 2)
            expect_value_error(sub.what_if, (durations, deps, {"parallel": pair}, order),
                               tr("what_if running two dependent steps of a random task in parallel"), pair,
                               "breaks_dependency")
        change, names = bad_change(r, durations)
        expect_value_error(sub.what_if, (durations, deps, change, order),
                           tr("what_if of a bad change on a random task"), names)
        # a valid change beside them, answered as the reference answers: refusing every call fails here
        change = random_change(r, durations, deps, order)
        expect_result(sub.what_if(durations, deps, change, order), ref.what_if(durations, deps, change, order),
                      tr("what_if of a random {kind} change on a random task", kind=next(iter(change))),
                      what_if_difference)


@check("random_first_output", points=3, hint="first_output",
       title="first_output of random tasks and visible steps: the earliest visible end, not the total")
def test_random_first_output(sub, seed):
    for r, ref, durations, deps, order in random_tasks(seed, 20):
        visible = r.sample(sorted(durations), r.randint(1, len(durations)))
        expected = ref.first_output(durations, deps, visible, order)
        total = ref.critical_path(durations, deps, order)[0]
        got = sub.first_output(durations, deps, visible, order)
        expect_seconds(got, expected, tr("first_output of a random task"),
                       first_output_misconception(got, total, expected))
    durations, deps, order = random_task(r, tied=False)  # r goes on from the 20 tasks
    ghost = next(s for s in step_names(r, len(durations) + 1) if s not in durations)
    for visible, names in (([], ["visible"]), ([*r.sample(sorted(durations), 1), ghost], [ghost])):
        expect_value_error(sub.first_output, (durations, deps, visible, order),
                           tr("first_output of a random task with bad visible steps"), names)


def expect_attribution(got, expected: dict, what: str) -> None:
    """attribute's answer names the reference's changed setting and its median saving."""
    got = expect_type(got, dict, what)
    if got.get("changed") != expected["changed"]:
        fail(tr("{what}: 'changed' is not the changed setting", what=what))
    expect_seconds(got.get("median_saving"), expected["median_saving"], tr("{what}: 'median_saving'", what=what))


@check("random_attribution", points=3, hint="attribute",
       title="attribute of random runs that change one setting: that key and the difference of medians")
def test_random_attribution(sub, seed):
    r = random.Random(seed)
    ref = reference("latency")
    for _ in range(20):
        baseline, variant, _ = random_runs(r, changes=1)
        expect_attribution(sub.attribute(baseline, variant), ref.attribute(baseline, variant),
                           tr("attribute of random runs that change one setting"))


@check("random_confounded_runs", points=2, hint="attribute",
       title="attribute refuses random runs that change several settings (naming them all) or none, and answers "
             "runs that change one")
def test_random_confounded_runs(sub, seed):
    r, ref = random.Random(seed), reference("latency")
    for case in range(12):
        baseline, variant, keys = random_runs(r, changes=0 if case % 4 == 3 else r.randint(2, 4))
        what = tr("attribute of random runs that change {count} settings", count=len(keys))
        message = expect_value_error(sub.attribute, (baseline, variant), what, keys,
                                     "confounded_change" if keys else None)
        if any(key not in message for key in keys):
            fail(tr("{what}: the ValueError does not name every changed setting", what=what))
        # runs that change one setting beside them, answered as the reference answers: refusing every call fails
        baseline, variant, _ = random_runs(r, changes=1)
        expect_attribution(sub.attribute(baseline, variant), ref.attribute(baseline, variant),
                           tr("attribute of random runs that change one setting"))
