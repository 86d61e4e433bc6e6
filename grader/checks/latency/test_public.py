"""Public latency checks: a coding agent's task worked by hand (grader/checks/latency/tasks.py), its what-ifs,
its first output, measured runs to attribute, exact ties and graphs with no schedule; answers from the goldens."""
from functools import partial

from grader.checks.latency.expect import (critical_difference, expect_result, expect_seconds, expect_value_error,
                                          schedule_difference, text_of, what_if_difference)
from grader.checks.latency.misconceptions import (critical_misconception, first_output_misconception,
                                                  schedule_misconception, what_if_misconception)
from grader.checks.latency.tasks import (ACK, ACK_VISIBLE, AGENT, AGENT_DEPS, AGENT_DURATIONS, AGENT_VISIBLE,
                                         AGENT_WHAT_IFS, BAD_TASKS, BASELINE_RUN, CONFOUNDED_RUNS, DEPENDENT_PAIRS,
                                         ONE_CHANGE_RUNS, TIES)
from grader.engine import check, expect_type, fail, golden, reference, tr

TASKS_FILE = "grader/checks/latency/tasks.py"
# name: (task, how its arguments are written in a call)
NAMED_TASKS = {"AGENT": (AGENT, "*AGENT"), "ACK": (ACK, "*ACK"),
               "AGENT without its order edge": ((AGENT_DURATIONS, AGENT_DEPS, None), "AGENT_DURATIONS, AGENT_DEPS")}

def see() -> str:
    """Where a message's AGENT and ACK are written out (after a call, with its space)."""
    return tr(" (AGENT and ACK are in {file})", file=TASKS_FILE)


def labelled(call: str, label: str) -> str:
    """A call with the label of its case, in this run's language."""
    return tr("{call} ({label})", call=call, label=tr(label))


def stored(key: str, fn: str, *args):
    """The golden answer of the reference's `fn(*args)`."""
    return golden(key, lambda: getattr(reference("latency"), fn)(*args))


@check("agent_task_schedule", points=2, hint="schedule",
       title="schedule of a coding agent's task: parallel reads and searches, an order edge, a dependent edit")
def test_agent_task_schedule(sub):
    for name, ((durations, deps, order), text) in NAMED_TASKS.items():
        expected = stored(f"schedule.{name}", "schedule", durations, deps, order)
        got = sub.schedule(durations, deps, order)
        expect_result(got, expected, f"schedule({text}){see()}", schedule_difference,
                      partial(schedule_misconception, durations=durations, expected=expected))


@check("graphs_without_a_schedule", points=1, hint="schedule",
       title="cycles, unknown steps and negative durations raise ValueError naming the step")
def test_graphs_without_a_schedule(sub):
    for label, durations, deps, order, names in BAD_TASKS:
        for fn in ("schedule", "critical_path"):
            expect_value_error(getattr(sub, fn), (durations, deps, order),
                               labelled(f"{fn}({text_of(durations, deps, order)})", label), names)


@check("agent_task_critical_path", points=2, hint="critical_path",
       title="critical path of the agent's task: the searches' order edge is on it, the log read is not")
def test_agent_task_critical_path(sub):
    for name, ((durations, deps, order), text) in NAMED_TASKS.items():
        expected = stored(f"critical_path.{name}", "critical_path", durations, deps, order)
        expect_result(sub.critical_path(durations, deps, order), expected, f"critical_path({text}){see()}",
                      critical_difference, partial(critical_misconception, durations=durations, expected=expected))
    expect_result(sub.critical_path({}, {}), stored("critical_path.empty", "critical_path", {}, {}),
                  "critical_path({}, {})", critical_difference)


@check("tie_rule", points=1, hint="critical_path",
       title="critical_path breaks exact ties by the smallest list of names (zero-second steps, order edges, "
             "decimals)")
def test_tie_rule(sub):
    for label, durations, deps, order in TIES:
        expected = stored(f"critical_path.tie.{label}", "critical_path", durations, deps, order)
        expect_result(sub.critical_path(durations, deps, order), expected,
                      labelled(f"critical_path({text_of(durations, deps, order)})", label), critical_difference)


@check("agent_task_what_ifs", points=2, hint="what_if",
       title="what-ifs on the agent's task: drop a model call, shorten the log read or the tests, parallel "
             "searches")
def test_agent_task_what_ifs(sub):
    durations, deps, order = AGENT
    for label, change in AGENT_WHAT_IFS:
        expected = stored(f"what_if.{label}", "what_if", durations, deps, change, order)
        wrong = partial(what_if_misconception, durations=durations, change=change, expected=expected)
        expect_result(sub.what_if(durations, deps, change, order), expected,
                      f"{labelled(f'what_if(*AGENT[:2], {change!r}, order=AGENT[2])', label)}{see()}",
                      what_if_difference, wrong)


@check("what_if_refusals", points=1, hint="what_if",
       title="what_if refuses to run a step beside one whose output it needs, and names a bad change")
def test_what_if_refusals(sub):
    durations, deps, order = AGENT
    for label, pair in DEPENDENT_PAIRS:
        change = {"parallel": pair}
        expect_value_error(sub.what_if, (durations, deps, change, order),
                           labelled(f"what_if(*AGENT[:2], {change!r}, order=AGENT[2])", label), pair,
                           "breaks_dependency")
    bad_changes = [({"remove": "lint"}, ["lint"]), ({"shorten": "ci_wait", "seconds": 1.0}, ["ci_wait"]),
                   ({"parallel": ["plan", "deploy"]}, ["deploy"]),
                   ({"shorten": "read_log", "seconds": 6.0}, ["seconds"]),
                   ({"shorten": "read_log", "seconds": -1.0}, ["seconds"]),
                   ({}, ["change"]), ({"remove": "plan", "shorten": "plan", "seconds": 1.0}, ["change"])]
    for change, names in bad_changes:
        expect_value_error(sub.what_if, (durations, deps, change, order),
                           f"what_if(*AGENT[:2], {change!r}, order=AGENT[2])", names)


@check("first_output_is_not_the_total", points=1, hint="first_output",
       title="first_output is when the first visible step ends: an acknowledgement moves it, not the total")
def test_first_output_is_not_the_total(sub):
    for name, visible in (("AGENT", AGENT_VISIBLE), ("ACK", ACK_VISIBLE)):
        (durations, deps, order), _ = NAMED_TASKS[name]
        expected = stored(f"first_output.{name}", "first_output", durations, deps, visible, order)
        total = stored(f"critical_path.{name}", "critical_path", durations, deps, order)[0]
        got = sub.first_output(durations, deps, visible, order)
        expect_seconds(got, expected, f"first_output(*{name}[:2], {visible!r}, order={name}[2]){see()}",
                       first_output_misconception(got, total, expected))
    for visible, names in (([], ["visible"]), (["plan", "summary"], ["summary"])):
        expect_value_error(sub.first_output, (*AGENT[:2], visible, AGENT[2]),
                           f"first_output(*AGENT[:2], {visible!r}, order=AGENT[2])", names)


@check("attribute_one_change", points=1, hint="attribute",
       title="attribute names the one changed setting and the saving of medians (odd and even counts)")
def test_attribute_one_change(sub):
    for label, variant in ONE_CHANGE_RUNS:
        expected = stored(f"attribute.{label}", "attribute", BASELINE_RUN, variant)
        what = labelled(f"attribute({BASELINE_RUN!r}, {variant!r})", label)
        got = sub.attribute(BASELINE_RUN, variant)
        expect_type(got, dict, what)
        if got.get("changed") != expected["changed"]:
            fail(tr("{what}: 'changed' = {got!r}, expected {expected!r}", what=what, got=got.get('changed'),
                    expected=expected['changed']))
        expect_seconds(got.get("median_saving"), expected["median_saving"], f"{what}['median_saving']")


@check("attribute_refuses_confounded_runs", points=1, hint="attribute",
       title="attribute refuses runs in which two settings changed, naming both, or none changed")
def test_attribute_refuses_confounded_runs(sub):
    for label, variant, keys in CONFOUNDED_RUNS:
        what = labelled(f"attribute({BASELINE_RUN!r}, {variant!r})", label)
        message = expect_value_error(sub.attribute, (BASELINE_RUN, variant), what, keys,
                                     "confounded_change" if keys else None)
        unnamed = [key for key in keys if key not in message]
        if unnamed:
            fail(tr("{what} raised ValueError({message!r}); the message should name every changed setting, also "
                    "{unnamed}", what=what, message=message, unnamed=unnamed))
