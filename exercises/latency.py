"""Latency of an agent task: optimise the whole task's time on its critical path, not an isolated token metric.

A task is a graph of steps (model calls, tool round trips, searches, file reads and edits, test runs):
- `durations` {step: seconds >= 0};
- `deps` {step: [steps whose output it needs]} (a step absent from `deps` needs nothing);
- `order` {step: [steps it merely waits for]} (optional, None for none): a habit, not a need, e.g. two searches
  run one after the other although neither uses the other's result.
A step starts as soon as every step it waits for, through `deps` or `order`, has ended; steps with no path
between them run in parallel. A chain runs from a step that waits for nothing to a step that nothing waits for.

Every function that takes a task raises ValueError naming the step when a step named in `deps` or `order` (as
a key or in a list) has no duration, when steps wait for each other in a cycle (the message names a step on the
cycle), and naming `durations` and the step when a duration is negative.

Sums of seconds that decide something (does this chain reach the total?) compare with a relative tolerance of
1e-9: mathematically equal sums of exact decimals (0.1 + 0.2 and 0.3) are equal.
"""


def schedule(durations, deps, order=None):
    """Each step's earliest start and end.

    Args:
        durations, deps, order: the task (see the module docstring).
    Returns:
        {step: (start, end)} for every step of `durations`: start = the latest end among the steps it waits for
        (0.0 when it waits for none), end = start + its duration.
    Raises:
        ValueError naming the step for an unknown step, a cycle or a negative duration.
    """
    raise NotImplementedError("TODO: schedule — visit steps after the steps they wait for; start at their last end")


def critical_path(durations, deps, order=None):
    """The task's total time and one chain of steps that takes all of it.

    Args:
        durations, deps, order: the task.
    Returns:
        (total, path): total = the end of the last step to end (0.0 for no steps); path = a chain
        [first, ..., last] in which each step waits for the one before it (through deps or order), `first` waits
        for nothing, nothing waits for `last`, and the durations along it add up to `total`. When several chains
        do, the lexicographically smallest list of step names (Python's list comparison: ["a", "z"] < ["b"]).
        ([] for no steps.)
    Raises:
        ValueError as `schedule` does.
    """
    raise NotImplementedError("TODO: critical_path — the longest chain; ties go to the smallest list of names")


def what_if(durations, deps, change, order=None):
    """What one change does to the task's total time.

    Args:
        durations, deps, order: the task.
        change: exactly one of
            {"remove": s}                  s disappears; every step that waited for s now waits for what s waited
                                           for (its deps and its order);
            {"shorten": s, "seconds": x}   s now lasts x seconds, 0 <= x <= its duration;
            {"parallel": [a, b]}           drop any `order` edge between a and b, either way (none: nothing
                                           changes, saving 0).
    Returns:
        {"total": the changed task's total, "saving": the unchanged total minus it,
         "path": the changed task's critical path (as `critical_path`)}.
    Raises:
        ValueError when a and b cannot run in parallel because one needs the other's output through `deps`,
        directly or through other steps: a dependent read and edit can never be reordered for speed.
        ValueError naming the step when a step in `change` is unknown, naming `seconds` when x is outside
        [0, duration], naming `change` when it holds no known kind or more than one; and as `schedule` does.
    """
    raise NotImplementedError("TODO: what_if — change a copy of the task, then compare the two critical paths")


def first_output(durations, deps, visible, order=None):
    """When the user first sees something: the earliest end among the steps in `visible`.

    A faster first sentence and a faster finished task are different goals: this is not the total.

    Args:
        durations, deps, order: the task.
        visible: list of the steps whose output the user sees (at least one).
    Returns:
        The smallest end time, per `schedule`, of a step in `visible` (float seconds).
    Raises:
        ValueError naming `visible` when it is empty, naming the step when one is unknown; as `schedule` does.
    """
    raise NotImplementedError("TODO: first_output — schedule the task, then the earliest end of a visible step")


def attribute(baseline, variant):
    """Attribute a measured saving to the one setting that changed between two runs.

    Args:
        baseline, variant: {"config": {setting: value}, "seconds": [measured seconds >= 0, at least one]}.
    Returns:
        {"changed": the config key whose value differs (a key present in only one config differs too),
         "median_saving": median(baseline seconds) - median(variant seconds)} (the median of an even count is
        the mean of the two middle values; positive when the variant is faster).
    Raises:
        ValueError naming every changed key when more than one setting changed, and ValueError when none did:
        change one mechanism at a time, then measure again.
        ValueError naming `seconds` when a list is empty or holds a negative time.
    """
    raise NotImplementedError("TODO: attribute — find the keys whose values differ; exactly one may")
