"""A readable summary of a results document for the terminal: each problem said once, the rest counted.

In English each line is written whole, as it always was (a pipe or a wide terminal gets it unbroken); in Chinese,
whose characters take two columns each, a line is wrapped to the terminal's width (`wording.wrap`), its marks
padded to one width so that the check ids line up.
"""
from __future__ import annotations

import click

from grader import hints, language
from grader.language import tr
from grader.results import is_not_run
from grader.wording import count, display_width, fitted, fold_repeats, pad, wrap, wrap_width

MARKS = {"passed": ("PASS", "green"), "failed": ("FAIL", "red"), "error": ("ERROR", "red"),
         "timeout": ("TIMEOUT", "red"), "skipped": ("SKIP", "yellow")}
NOT_STARTED, INTERRUPTED = ("NOT STARTED", "yellow"), ("INTERRUPTED", "red")
TOPIC_COLORS = {"passed": "green", "incomplete": "yellow"}
SHOWN_MESSAGE_LINES = 24
WIDTH = 100  # the misconception's explanation, wrapped at words


def _mark(word: str) -> str:
    """A status mark as shown: the English word, or its Chinese padded to the widest Chinese mark."""
    if language.current() != "zh":
        return word
    widest = max(display_width(tr(w)) for w, _ in (*MARKS.values(), NOT_STARTED, INTERRUPTED))
    return pad(tr(word), widest)


def _marked(mark: tuple[str, str], rest: str, indent: str, width: int | None) -> list[str]:
    """`indent`, the coloured mark, then `rest`; a line it continues on starts under `rest`."""
    word, fg = mark
    shown = _mark(word)
    lines = fitted(f"{shown} {rest}", width, indent, " " * (display_width(shown) + 1))
    said = shown.rstrip()
    return [lines[0].replace(said, click.style(said, fg=fg), 1), *lines[1:]]


def printed_lines(output: str, indent: str, width: int | None = None) -> list[str]:
    """What the student's code printed, as a failure shows it: its last lines, each run of one line repeated said
    once with its count; wrapped to `width` where given."""
    lines = [indent + tr("your code printed (its last lines):")]
    for line in fold_repeats(output.splitlines()):
        lines += [f"{indent}| {line}"] if width is None else wrap(line, width, f"{indent}| ")
    return lines


def summary(doc: dict, verbose: bool = False) -> str:
    width = wrap_width()
    lines = []
    explained: set[str] = set()  # each misconception is explained once, then named
    for topic in doc["topics"]:
        lines += _topic_lines(topic, verbose, explained, width)
    checks = [c for t in doc["topics"] for c in t["checks"]]
    passed = sum(c["status"] == "passed" for c in checks)
    lines += fitted(tr("score {score}/{max_score}, {passed}/{checks} passed", score=f"{doc['score']:g}",
                       max_score=f"{doc['max_score']:g}", passed=passed, checks=count(len(checks), "check")),
                    width, bold=True)
    if verbose:
        lines += fitted(tr("sandbox: {level}", level=doc["isolation"]["level"]), width)
    if doc.get("deadline", {}).get("passed"):
        lines += fitted(tr("the run's deadline of {seconds} s passed: the checks after it timed out and score 0 (a "
                           "slow import or endless loops?)", seconds=f"{doc['deadline']['seconds']:g}"),
                        width, fg="red")
    if doc["incomplete"]:
        lines += fitted(tr("not a full grade: {reason}", reason=doc["incomplete"]), width, fg="yellow")
    if doc["status"] == "interrupted":
        unfinished = sum(c["status"] == "interrupted" for c in checks)
        lines += fitted(tr("grading was {reason}: {checks} did not finish and score 0", reason=doc["error"],
                           checks=count(unfinished, "check")), width, fg="red")
    elif doc["status"] == "error":
        lines += fitted(tr("grading did not complete: {error}", error=doc["error"]), width, fg="red")
    return "\n".join(lines)


def _topic_lines(topic: dict, verbose: bool, explained: set[str], width: int | None = None) -> list[str]:
    checks = topic["checks"]
    lines = [click.style(f"{topic['id']}: {topic['score']:g}/{topic['max_score']:g}",
                         fg=TOPIC_COLORS.get(topic["status"], "red"), bold=True)]
    not_run = [c for c in checks if is_not_run(c["message"])]  # the topic's error says why, once
    not_run_ids = {c["id"] for c in not_run}
    if topic["status"] == "error" and topic["message"]:
        lines += _marked(MARKS["error"], topic["message"].splitlines()[0], "  ", width)
        lines += [part for line in topic["message"].splitlines()[1:SHOWN_MESSAGE_LINES]
                  for part in fitted(line, width, "    ")]
        if not_run:
            lines += fitted(tr("{checks} not run ({points} pt)", checks=count(len(not_run), "check"),
                               points=sum(c["points"] for c in not_run)), width, "  ")
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
            lines += _check_lines(topic["id"], c, explained, width)
    for function, waiting in not_started.items():
        # the hint of the function to write, not of the checks' own (a top_p_filter check waiting on filtered_probs)
        hint = f"{topic['id']}.{function.split('.')[0]}" if waiting[0]["function"] else \
            next((c["hint"] for c in waiting if c["hint"]), None)
        said = tr("{function}: {checks} ({points} pt)", function=function if waiting[0]["function"] else
                  tr("hidden checks"), checks=count(len(waiting), "check"), points=sum(c["points"] for c in waiting))
        lines += _marked(NOT_STARTED, said + (tr(" — hint: infergrade hint {hint}", hint=hint) if hint else ""),
                         "  ", width)
        callers = sorted({c["hint"].split(".", 1)[1] for c in waiting if c["function"] and c["hint"]
                          and "." in c["hint"] and c["hint"].split(".", 1)[1].split(".")[0] != function.split(".")[0]})
        if callers:
            said = (tr("{callers} waits for {function}: its checks run once {function} is written", callers=callers[0],
                       function=function) if len(callers) == 1 else
                    tr("{callers} wait for {function}: their checks run once {function} is written",
                       callers=tr(" and ").join(callers), function=function))
            lines += fitted(said, width, "      ")
    if interrupted:
        said = tr("{checks} did not finish ({points} pt)", checks=count(len(interrupted), "check"),
                  points=sum(c["points"] for c in interrupted))
        lines += _marked(INTERRUPTED, said, "  ", width)
    return lines


def _check_lines(topic: str, c: dict, explained: set[str], width: int | None) -> list[str]:
    lines = _marked(MARKS[c["status"]], tr("{id} ({points} pt) {title}", id=c["id"], points=c["points"],
                                            title=c["title"]), "  ", width)
    if c["status"] == "passed":
        return lines
    lines += [part for line in c["message"].splitlines()[:SHOWN_MESSAGE_LINES]
              for part in fitted(line, width, "      ")]
    if c.get("output"):
        lines += printed_lines(c["output"], "      ", width)
    if c["misconception"]:
        why = "" if c["misconception"] in explained else hints.explain(topic, c["misconception"])
        explained.add(c["misconception"])
        said = tr("misconception {id}: {why}", id=c["misconception"], why=why) if why else \
            tr("misconception {id} (see above)", id=c["misconception"])
        lines += wrap(said, min(WIDTH, width or WIDTH), "      ")
    if c["hint"] and c["status"] in ("failed", "error", "timeout"):
        lines += fitted(tr("hint: infergrade hint {hint}", hint=c["hint"]), width, "      ")
    return lines
