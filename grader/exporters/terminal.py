"""A readable summary of a results document for the terminal: each problem said once, the rest counted."""
from __future__ import annotations

import click

from grader import hints
from grader.results import NOT_RUN
from grader.wording import count, fold_repeats, word, wrap

MARKS = {"passed": ("PASS", "green"), "failed": ("FAIL", "red"), "error": ("ERROR", "red"),
         "timeout": ("TIMEOUT", "red"), "skipped": ("SKIP", "yellow")}
TOPIC_COLORS = {"passed": "green", "incomplete": "yellow"}
SHOWN_MESSAGE_LINES = 24
WIDTH = 100  # the misconception's explanation, wrapped at words


def printed_lines(output: str, indent: str, width: int | None = None) -> list[str]:
    """What the student's code printed, as a failure shows it: its last lines, each run of one line repeated said
    once with its count; wrapped to `width` where given."""
    lines = [f"{indent}your code printed (its last lines):"]
    for line in fold_repeats(output.splitlines()):
        lines += [f"{indent}| {line}"] if width is None else wrap(line, width, f"{indent}| ")
    return lines


def summary(doc: dict, verbose: bool = False) -> str:
    lines = []
    explained: set[str] = set()  # each misconception is explained once, then named
    for topic in doc["topics"]:
        lines += _topic_lines(topic, verbose, explained)
    checks = [c for t in doc["topics"] for c in t["checks"]]
    passed = sum(c["status"] == "passed" for c in checks)
    lines.append(click.style(f"score {doc['score']:g}/{doc['max_score']:g}, "
                             f"{passed}/{count(len(checks), 'check')} passed", bold=True))
    if verbose:
        lines.append(f"sandbox: {doc['isolation']['level']}")
    if doc.get("deadline", {}).get("passed"):
        lines.append(click.style(f"the run's deadline of {doc['deadline']['seconds']:g} s passed: the checks after "
                                 f"it timed out and score 0 (a slow import or endless loops?)", fg="red"))
    if doc["incomplete"]:
        lines.append(click.style(f"not a full grade: {doc['incomplete']}", fg="yellow"))
    if doc["status"] == "interrupted":
        unfinished = sum(c["status"] == "interrupted" for c in checks)
        lines.append(click.style(f"grading was {doc['error']}: {count(unfinished, 'check')} did not finish and "
                                 f"score 0", fg="red"))
    elif doc["status"] == "error":
        lines.append(click.style(f"grading did not complete: {doc['error']}", fg="red"))
    return "\n".join(lines)


def _topic_lines(topic: dict, verbose: bool, explained: set[str]) -> list[str]:
    checks = topic["checks"]
    lines = [click.style(f"{topic['id']}: {topic['score']:g}/{topic['max_score']:g}",
                         fg=TOPIC_COLORS.get(topic["status"], "red"), bold=True)]
    not_run = [c for c in checks if c["message"].startswith(NOT_RUN)]  # the topic's error says why, once
    not_run_ids = {c["id"] for c in not_run}
    if topic["status"] == "error" and topic["message"]:
        lines += [f"  {click.style('ERROR', fg='red')} {topic['message'].splitlines()[0]}"]
        lines += [f"    {line}" for line in topic["message"].splitlines()[1:SHOWN_MESSAGE_LINES]]
        if not_run:
            lines.append(f"  {count(len(not_run), 'check')} not run ({sum(c['points'] for c in not_run)} pt)")
    not_started: dict[str, list[dict]] = {}
    interrupted = []
    for c in checks:
        if c["id"] in not_run_ids:
            continue
        if c["status"] == "not_started":
            not_started.setdefault(c["function"] or "hidden checks", []).append(c)
        elif c["status"] == "interrupted":
            interrupted.append(c)
        elif c["status"] != "passed" or verbose:
            lines += _check_lines(topic["id"], c, explained)
    for function, waiting in not_started.items():
        # the hint of the function to write, not of the checks' own (a top_p_filter check waiting on filtered_probs)
        hint = f"{topic['id']}.{function.split('.')[0]}" if waiting[0]["function"] else \
            next((c["hint"] for c in waiting if c["hint"]), None)
        lines.append(f"  {click.style('NOT STARTED', fg='yellow')} {function}: {count(len(waiting), 'check')} "
                     f"({sum(c['points'] for c in waiting)} pt)" + (f" — hint: infergrade hint {hint}" if hint else ""))
        callers = sorted({c["hint"].split(".", 1)[1] for c in waiting if c["function"] and c["hint"]
                          and "." in c["hint"] and c["hint"].split(".", 1)[1].split(".")[0] != function.split(".")[0]})
        if callers:
            lines.append(f"      {' and '.join(callers)} {word(len(callers), 'waits', 'wait')} for {function}: "
                         f"{word(len(callers), 'its', 'their')} checks run once {function} is written")
    if interrupted:
        lines.append(f"  {click.style('INTERRUPTED', fg='red')} {count(len(interrupted), 'check')} did not finish "
                     f"({sum(c['points'] for c in interrupted)} pt)")
    return lines


def _check_lines(topic: str, c: dict, explained: set[str]) -> list[str]:
    mark, fg = MARKS[c["status"]]
    lines = [f"  {click.style(mark, fg=fg)} {c['id']} ({c['points']} pt) {c['title']}"]
    if c["status"] == "passed":
        return lines
    lines += [f"      {line}" for line in c["message"].splitlines()[:SHOWN_MESSAGE_LINES]]
    if c.get("output"):
        lines += printed_lines(c["output"], "      ")
    if c["misconception"]:
        why = "" if c["misconception"] in explained else hints.explain(topic, c["misconception"])
        explained.add(c["misconception"])
        lines += wrap(f"misconception {c['misconception']}" + (f": {why}" if why else " (see above)"), WIDTH, "      ")
    if c["hint"] and c["status"] in ("failed", "error", "timeout"):
        lines.append(f"      hint: infergrade hint {c['hint']}")
    return lines
