"""What each latency misconception makes a submission return, as tests on its output.

`breaks_dependency` and `confounded_change` show as a normal return where a ValueError is due; the checks name
them at the call. The two below show in the numbers.
"""
from grader.checks.latency.expect import is_seconds, same_seconds


def serial_total(durations: dict) -> float:
    """Every step's duration added up: the total if nothing ran in parallel."""
    return float(sum(durations.values()))


def summed_branches(total, durations: dict, right_total: float) -> str | None:
    """'sums_parallel_branches' when `total` is the serial total and that differs from the right one."""
    serial = serial_total(durations)
    if not same_seconds(serial, right_total) and same_seconds(total, serial):
        return "sums_parallel_branches"
    return None


def schedule_misconception(actual, durations: dict, expected: dict) -> str | None:
    """The misconception a wrong schedule shows: its last end is the sum of every duration."""
    if not isinstance(actual, dict):
        return None
    ends = [pair[1] for pair in actual.values() if isinstance(pair, (list, tuple)) and len(pair) == 2]
    if not ends or not all(is_seconds(end) for end in ends):
        return None
    return summed_branches(max(ends), durations, max(end for _, end in expected.values()))


def critical_misconception(actual, durations: dict, expected: tuple) -> str | None:
    """The misconception a wrong (total, path) shows in its total."""
    if not isinstance(actual, (list, tuple)) or len(actual) != 2:
        return None
    return summed_branches(actual[0], durations, expected[0])


def changed_durations(durations: dict, change: dict) -> dict:
    """The durations after a what-if change (a parallel change keeps them)."""
    if "remove" in change:
        return {step: d for step, d in durations.items() if step != change["remove"]}
    if "shorten" in change:
        return {**durations, change["shorten"]: change["seconds"]}
    return durations


def what_if_misconception(actual, durations: dict, change: dict, expected: dict) -> str | None:
    """The misconception a wrong what-if shows: its total is the changed task's steps added up."""
    if not isinstance(actual, dict) or "total" not in actual:
        return None
    return summed_branches(actual["total"], changed_durations(durations, change), expected["total"])


def first_output_misconception(actual, total: float, expected: float) -> str | None:
    """'first_output_as_total' when the first output is reported at the end of the whole task."""
    if not same_seconds(total, expected) and same_seconds(actual, total):
        return "first_output_as_total"
    return None
