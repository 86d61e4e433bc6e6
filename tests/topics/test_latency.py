"""Project tests for the latency topic: the reference against hand-worked tasks, closed forms, a brute-force
enumeration of chains and networkx; the solution against the reference; the generators, the stub, the hints
and the mutants."""
import inspect
import random
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from exercises import latency as stub
from grader import hints
from grader.checks.latency import test_hidden
from grader.checks.latency.expect import critical_difference, schedule_difference, what_if_difference
from grader.checks.latency.graphs import (broken_task, dependent_pairs, independent_pairs, random_task,
                                          steps_on_cycles, waits_of)
from grader.checks.latency.runs import random_runs
from grader.checks.latency.tasks import (ACK, ACK_VISIBLE, AGENT, AGENT_DEPS, AGENT_DURATIONS, AGENT_VISIBLE,
                                         AGENT_WHAT_IFS, BAD_TASKS, BASELINE_RUN, CONFOUNDED_RUNS, DEPENDENT_PAIRS,
                                         ONE_CHANGE_RUNS, TIES)
from mutated import mutant
from reference import latency as ref
from solutions import latency as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "latency"
FUNCTIONS = ("schedule", "critical_path", "what_if", "first_output", "attribute")
MISCONCEPTIONS = {"sums_parallel_branches", "breaks_dependency", "first_output_as_total", "confounded_change"}
QUICK = settings(max_examples=60, deadline=None)
seeds = st.integers(0, 2**31 - 1)
CRITICAL = ["plan", "search_code", "search_docs", "propose_fix", "fetch_issue", "write_patch", "edit_file",
            "run_tests", "report"]


# --- the reference against the hand-worked tasks (the numbers of the comments in tasks.py) -----------------

def test_agent_task_schedule_by_hand():
    assert ref.schedule(*AGENT) == {
        "plan": (0, 3), "search_code": (3, 6), "search_docs": (6, 10), "read_log": (3, 8), "read_file": (3, 4),
        "propose_fix": (10, 14), "fetch_issue": (14, 16), "write_patch": (16, 21), "edit_file": (21, 22),
        "run_tests": (22, 42), "report": (42, 44)}
    assert sum(AGENT_DURATIONS.values()) == 50


def test_agent_task_critical_path_by_hand():
    assert ref.critical_path(*AGENT) == (44, CRITICAL)
    assert ref.critical_path(*ACK) == (44, CRITICAL)
    assert ref.critical_path(AGENT_DURATIONS, AGENT_DEPS) == (
        42, ["plan", "read_log", "propose_fix", "fetch_issue", "write_patch", "edit_file", "run_tests", "report"])
    assert ref.critical_path({}, {}) == (0.0, [])


def test_agent_task_what_ifs_by_hand():
    by_hand = {
        "remove one model round trip": (40, 4, [s for s in CRITICAL if s != "propose_fix"]),
        "shorten the log read": (44, 0, CRITICAL),
        "run the two searches in parallel": (42, 2, ["plan", "read_log"] + CRITICAL[3:]),
        "parallel steps that already run in parallel": (44, 0, CRITICAL),
        "halve the test run": (34, 10, CRITICAL),
        "a faster model call": (43.5, 0.5, CRITICAL),
    }
    for label, change in AGENT_WHAT_IFS:
        total, saving, path = by_hand[label]
        assert ref.what_if(AGENT[0], AGENT[1], change, AGENT[2]) == {"total": total, "saving": saving,
                                                                     "path": path}, label
    for _, pair in DEPENDENT_PAIRS:
        with pytest.raises(ValueError, match="cannot run in parallel"):
            ref.what_if(AGENT[0], AGENT[1], {"parallel": pair}, AGENT[2])


def test_the_test_wait_dominates():
    savings = {label: ref.what_if(AGENT[0], AGENT[1], change, AGENT[2])["saving"] for label, change in AGENT_WHAT_IFS}
    assert max(savings, key=savings.get) == "halve the test run"
    assert savings["a faster model call"] / ref.critical_path(*AGENT)[0] < 0.02
    runs = {label: ref.attribute(BASELINE_RUN, variant) for label, variant in ONE_CHANGE_RUNS}
    assert {label: r["median_saving"] for label, r in runs.items()} == {
        "prefix cache on": 0.5, "greedy sampling": 0.0, "four test shards": 14.5, "speculative decoding added": 0.5}
    assert [r["changed"] for r in runs.values()] == ["prefix_cache", "temperature", "test_shards", "speculative"]


def test_first_output_by_hand():
    assert ref.first_output(AGENT[0], AGENT[1], AGENT_VISIBLE, AGENT[2]) == 3
    assert ref.first_output(ACK[0], ACK[1], ACK_VISIBLE, ACK[2]) == 0.5


def test_ties_by_hand():
    by_hand = {"diamond": ["start", "alpha", "end"], "longer but smaller": ["a", "z"],
               "zero-second step": ["a", "b", "c"], "order edge in the chain": ["p", "r"],
               "tie of decimals": ["a"]}
    for label, durations, deps, order in TIES:
        total, path = ref.critical_path(durations, deps, order)
        assert path == by_hand[label], label
        assert total == pytest.approx(sum(durations[s] for s in path), rel=1e-15)


def test_bad_tasks_name_a_step():
    for label, durations, deps, order, names in BAD_TASKS:
        for module in (ref, sol):
            for fn in (module.schedule, module.critical_path):
                with pytest.raises(ValueError) as raised:
                    fn(durations, deps, order)
                assert any(name in str(raised.value) for name in names), (label, str(raised.value))


def test_confounded_runs_name_every_key():
    for label, variant, keys in CONFOUNDED_RUNS:
        for module in (ref, sol):
            with pytest.raises(ValueError) as raised:
                module.attribute(BASELINE_RUN, variant)
            assert all(key in str(raised.value) for key in keys), label


# --- closed forms and independent computations -------------------------------------------------------------

def test_a_chain_takes_the_sum_and_independent_steps_the_max():
    durations = {"a": 1.5, "b": 2.25, "c": 4.0}
    assert ref.critical_path(durations, {"b": ["a"], "c": ["b"]}) == (7.75, ["a", "b", "c"])
    assert ref.critical_path(durations, {}) == (4.0, ["c"])
    assert ref.critical_path({"b": 2.0, "a": 2.0}, {}) == (2.0, ["a"])


def chains(durations: dict, deps: dict, order: dict | None) -> list:
    """Every chain from a step that waits for nothing to one that nothing waits for (enumerated)."""
    waits = waits_of(durations, deps, order)
    followers = {s: [f for f in durations if s in waits[f]] for s in durations}
    found, stack = [], [[s] for s in durations if not waits[s]]
    while stack:
        chain = stack.pop()
        if not followers[chain[-1]]:
            found.append(chain)
        stack.extend(chain + [f] for f in followers[chain[-1]])
    return found


@QUICK
@given(seed=seeds, tied=st.booleans())
def test_critical_path_is_the_smallest_of_the_longest_chains(seed, tied):
    # exact comparisons: the generator's durations are dyadic, so every chain's sum is exact
    durations, deps, order = random_task(random.Random(seed), tied=tied, size=(1, 9))
    all_chains = chains(durations, deps, order)
    longest = max(sum(durations[s] for s in c) for c in all_chains)
    total, path = ref.critical_path(durations, deps, order)
    assert total == longest == max(end for _, end in ref.schedule(durations, deps, order).values())
    assert path == min(c for c in all_chains if sum(durations[s] for s in c) == longest)


@QUICK
@given(seed=seeds, tied=st.booleans())
def test_total_is_networkx_longest_path(seed, tied):
    nx = pytest.importorskip("networkx")
    durations, deps, order = random_task(random.Random(seed), tied=tied)
    graph = nx.DiGraph()
    graph.add_node("(end)")
    for step, before in waits_of(durations, deps, order).items():
        graph.add_edge(step, "(end)", weight=durations[step])  # a node's duration on each of its out-edges
        for b in before:
            graph.add_edge(b, step, weight=durations[b])
    total, path = ref.critical_path(durations, deps, order)
    assert total == nx.dag_longest_path_length(graph, weight="weight")
    times = ref.schedule(durations, deps, order)
    for a, b in pairwise(path):
        assert times[a][1] == times[b][0]  # a critical chain never waits idle


@QUICK
@given(seed=seeds)
def test_what_if_invariants(seed):
    r = random.Random(seed)
    durations, deps, order = random_task(r, tied=r.random() < 0.5)
    total, _ = ref.critical_path(durations, deps, order)
    step = r.choice(sorted(durations))
    for change in ({"remove": step}, {"shorten": step, "seconds": durations[step] / 2},
                   *({"parallel": pair} for pair in independent_pairs(durations, deps, order)[:3])):
        result = ref.what_if(durations, deps, change, order)
        assert result["saving"] == total - result["total"] >= 0
    for pair in dependent_pairs(deps)[:3]:
        with pytest.raises(ValueError, match=repr(pair[0])):
            ref.what_if(durations, deps, {"parallel": pair}, order)


def test_removed_step_passes_on_its_waits():
    durations = {"a": 2.0, "b": 1.0, "m": 5.0, "z": 1.0}
    # z needs m, m needs a and waits for b: without m, z still starts after a and b
    result = ref.what_if(durations, {"m": ["a"], "z": ["m"]}, {"remove": "m"}, {"m": ["b"]})
    assert result == {"total": 3.0, "saving": 5.0, "path": ["a", "z"]}


# --- the solution against the reference --------------------------------------------------------------------

@QUICK
@given(seed=seeds, tied=st.booleans())
def test_solution_matches_reference(seed, tied):
    r = random.Random(seed)
    durations, deps, order = random_task(r, tied=tied)
    assert schedule_difference(sol.schedule(durations, deps, order), ref.schedule(durations, deps, order)) is None
    assert critical_difference(sol.critical_path(durations, deps, order),
                               ref.critical_path(durations, deps, order)) is None
    change = test_hidden.random_change(r, durations, deps, order)
    assert what_if_difference(sol.what_if(durations, deps, change, order),
                              ref.what_if(durations, deps, change, order)) is None
    visible = r.sample(sorted(durations), r.randint(1, len(durations)))
    assert sol.first_output(durations, deps, visible, order) == ref.first_output(durations, deps, visible, order)
    baseline, variant, _ = random_runs(r, changes=1)
    assert sol.attribute(baseline, variant) == ref.attribute(baseline, variant)


@QUICK
@given(seed=seeds)
def test_broken_tasks_raise_naming_a_listed_step(seed):
    durations, deps, order, names, kind, valid = broken_task(random.Random(seed))
    if kind in ("cycle", "self"):
        assert names and set(names) <= set(steps_on_cycles(durations, deps, order))
    for module in (ref, sol):
        with pytest.raises(ValueError) as raised:
            module.schedule(durations, deps, order)
        assert any(name in str(raised.value) for name in names), (kind, str(raised.value), names)
        assert module.schedule(*valid).keys() == valid[0].keys()  # the task before the break has a schedule


@QUICK
@given(seed=seeds, changes=st.integers(0, 4))
def test_random_runs_change_the_given_number_of_settings(seed, changes):
    baseline, variant, keys = random_runs(random.Random(seed), changes)
    a, b = baseline["config"], variant["config"]
    assert sorted(k for k in a.keys() | b.keys() if a.get(k, "absent") != b.get(k, "absent")) == keys


BAD_CALLS = [
    ("visible", "first_output", (AGENT[0], AGENT[1], [], AGENT[2])),
    ("summary", "first_output", (AGENT[0], AGENT[1], ["summary"], AGENT[2])),
    ("lint", "what_if", (AGENT[0], AGENT[1], {"remove": "lint"}, AGENT[2])),
    ("seconds", "what_if", (AGENT[0], AGENT[1], {"shorten": "plan", "seconds": 3.5}, AGENT[2])),
    ("seconds", "what_if", (AGENT[0], AGENT[1], {"shorten": "plan", "seconds": -0.5}, AGENT[2])),
    ("change", "what_if", (AGENT[0], AGENT[1], {"delete": "plan"}, AGENT[2])),
    ("seconds", "attribute", (BASELINE_RUN, {"config": {}, "seconds": []})),
    ("seconds", "attribute", ({"config": {}, "seconds": [1.0, -1.0]}, BASELINE_RUN)),
]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, fn, args", BAD_CALLS)
def test_bad_arguments_name_the_argument(module, argument, fn, args):
    with pytest.raises(ValueError, match=argument):
        getattr(module, fn)(*args)


# --- stub, hints, points, mutants ---------------------------------------------------------------------------

STUB_CALLS = [("schedule", AGENT), ("critical_path", AGENT), ("what_if", (*AGENT[:2], {"remove": "plan"})),
              ("first_output", (*AGENT[:2], AGENT_VISIBLE)), ("attribute", (BASELINE_RUN, ONE_CHANGE_RUNS[0][1]))]


@pytest.mark.parametrize("fn, args", STUB_CALLS)
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)


def test_stub_signatures_follow_the_contract():
    for fn in FUNCTIONS:
        assert inspect.signature(getattr(stub, fn)) == inspect.signature(getattr(sol, fn)), fn
    for fn in ("schedule", "critical_path", "what_if", "first_output"):
        assert list(inspect.signature(getattr(stub, fn)).parameters)[-1] == "order"


def test_every_function_has_three_hints_and_every_misconception_a_mutant():
    for fn in FUNCTIONS:
        for level in (1, 2, 3):
            assert hints.hint("latency", fn, level)
    assert set(hints.misconception_ids("latency")) == MISCONCEPTIONS == {p.stem for p in MUTANTS.glob("*.py")}


def test_sums_parallel_branches_mutant_adds_every_duration():
    module = mutant("latency", "sums_parallel_branches")
    assert max(end for _, end in module.schedule(*AGENT).values()) == sum(AGENT_DURATIONS.values()) == 50


def test_breaks_dependency_mutant_runs_the_edit_beside_its_read():
    module = mutant("latency", "breaks_dependency")
    for _, pair in DEPENDENT_PAIRS:
        assert "total" in module.what_if(AGENT[0], AGENT[1], {"parallel": pair}, AGENT[2])


def test_first_output_as_total_mutant_reports_the_end():
    module = mutant("latency", "first_output_as_total")
    assert module.first_output(ACK[0], ACK[1], ACK_VISIBLE, ACK[2]) == 44


def test_confounded_change_mutant_credits_one_of_two_changes():
    module = mutant("latency", "confounded_change")
    for _, variant, keys in CONFOUNDED_RUNS:
        if keys:
            assert module.attribute(BASELINE_RUN, variant)["changed"] == keys[0]


@pytest.mark.parametrize("misconception", sorted(MISCONCEPTIONS))
def test_each_mutant_says_its_bug(misconception):
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')


def test_exact_decimal_tie_is_accepted_whatever_the_summation():
    # the reference's total of the decimal tie is 0.1 + 0.2; a submission that ends at 0.3 is just as right
    _, durations, deps, order = next(t for t in TIES if t[0] == "tie of decimals")
    assert critical_difference((0.3, ["a"]), ref.critical_path(durations, deps, order)) is None
    assert 0.1 + 0.2 != 0.3
