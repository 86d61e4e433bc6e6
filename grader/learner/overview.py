"""`infergrade progress`: every topic's functions as not started, failing or passing, from the progress file."""
from __future__ import annotations

from pathlib import Path

import click

from grader import hints, progress, topics as topic_registry
from grader.language import tr
from grader.wording import count, fitted, wrap_width

BAR = 20
MARKS = {"passing": ("✓", "green"), "failing": ("✗", "red"), "not started": ("·", "yellow"),
         "blocked": ("…", "yellow")}


def function_state(runs: list[dict]) -> str:
    """A function's state from its checks' records: "failing" when a check of its own fails, else "blocked" while
    some checks wait for another, still-stubbed function (they cannot tell yet), else by its own checks."""
    own = [e for e in runs if not progress.blocked_by(e["status"], e["function"], e["waiting_for"])]
    if any(not e["passed"] and e["status"] != "not_started" for e in own):
        return "failing"
    if len(own) < len(runs):
        return "blocked"
    if not own or all(e["status"] == "not_started" for e in own):
        return "not started"
    return "passing" if all(e["passed"] for e in own) else "failing"


def waits_for(runs: list[dict]) -> list[str]:
    """The other, still-stubbed functions that some of a function's checks wait for."""
    return sorted({w for e in runs if (w := progress.blocked_by(e["status"], e["function"], e["waiting_for"]))})


def recorded_runs(folder: Path) -> dict[str, dict[str, list[dict]]]:
    """{topic: {function: the records of its checks}} (a method's checks count for its class)."""
    recorded: dict[str, list[dict]] = {}
    for entry in progress.load(folder)["checks"].values():
        if entry["function"]:
            recorded.setdefault(entry["function"], []).append(entry)
    return {topic: {name: [e for f, es in recorded.items() if f == f"{topic}.{name}" or
                           f.startswith(f"{topic}.{name}.") for e in es]
                    for name in topic_registry.api(topic) if "." not in name}
            for topic in topic_registry.all_topics()}


def states(folder: Path) -> dict[str, dict[str, str]]:
    """{topic: {function: "passing" | "failing" | "not started" | "blocked"}} from the recorded checks."""
    return {topic: {name: function_state(runs) for name, runs in functions.items()}
            for topic, functions in recorded_runs(folder).items()}


def said(state: str, waits: list[str]) -> str:
    """A function's state in words, with the functions some of its checks wait for."""
    waited = tr(" and ").join(waits)
    if state == "blocked":
        return tr("waits for {functions}", functions=waited)
    return tr("{state} (some checks wait for {functions})", state=tr(state), functions=waited) if waits else tr(state)


def render(folder: Path) -> str:
    """The overview: a bar per topic, a mark per function, the hints read and the next suggested exercise."""
    runs, read = recorded_runs(folder), progress.load(folder)["hints"]
    width = wrap_width()
    table = {topic: {name: function_state(r) for name, r in functions.items()} for topic, functions in runs.items()}
    lines, suggestion = [], None
    for topic, functions in table.items():
        done = sum(s == "passing" for s in functions.values())
        filled = round(BAR * done / len(functions)) if functions else 0
        bar = click.style("█" * filled, fg="green") + "░" * (BAR - filled)
        lines.append(f"{click.style(f'{topic:16}', bold=True)} {bar} {done}/{len(functions)}")
        for name, state in functions.items():
            mark, color = MARKS[state]
            hint = read.get(f"{topic}.{name}")
            row = fitted(f"{mark} {name:30} {said(state, waits_for(runs[topic][name]))}" +
                         (tr("  (hints read: {read}/{levels})", read=hint, levels=hints.LEVELS[-1]) if hint
                          else ""), width, "    ", " " * 33)
            lines += [row[0].replace(mark, click.style(mark, fg=color), 1), *row[1:]]
            if suggestion is None and state not in ("passing", "blocked"):
                suggestion = (topic, name, state)
    total = sum(len(f) for f in table.values())
    passing = sum(s == "passing" for f in table.values() for s in f.values())
    counted = dict(passing=passing, functions=count(total, "function"), read=count(len(read), "function"))
    lines += ["", *fitted(tr("{passing} of {functions} passes its public checks; hints read for {read}", **counted)
                          if passing == 1 else
                          tr("{passing} of {functions} pass their public checks; hints read for {read}", **counted),
                          width)]
    if suggestion:
        topic, name, state = suggestion
        said_next = dict(function=f"{topic}.{name}", topic=topic)
        lines += _next_lines(tr("fix {function} — infergrade watch {topic} (stuck? infergrade hint {function})",
                                **said_next) if state == "failing" else
                             tr("write {function} — infergrade watch {topic} (stuck? infergrade hint {function})",
                                **said_next), width)
    else:
        lines += fitted(tr("every function passes its public checks"), width, fg="green")
    source = progress.path_for(folder)
    lines += fitted(tr("(read from {source}; nothing is sent anywhere)", source=source) if source.is_file() else
                    tr("(no progress recorded yet: `infergrade check` in {folder} records it in {file}; nothing is "
                       "sent anywhere)", folder=folder, file=source.name), width)
    return "\n".join(lines)


def _next_lines(what: str, width: int | None) -> list[str]:
    """'next: ' in bold, then what to do next; the lines it continues on are indented under it."""
    head = tr("next: ")
    lines = fitted(head + what, width, "", " " * 6)
    return [click.style(head, bold=True) + lines[0].removeprefix(head), *lines[1:]]
