"""`infergrade progress`: every topic's functions as not started, failing or passing, from the progress file."""
from __future__ import annotations

from pathlib import Path

import click

from grader import progress, topics as topic_registry
from grader.wording import count, word

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
    waited = " and ".join(waits)
    if state == "blocked":
        return f"waits for {waited}"
    return f"{state} (some checks wait for {waited})" if waits else state


def render(folder: Path) -> str:
    """The overview: a bar per topic, a mark per function, the hints read and the next suggested exercise."""
    runs, read = recorded_runs(folder), progress.load(folder)["hints"]
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
            lines.append(f"    {click.style(mark, fg=color)} {name:30} {said(state, waits_for(runs[topic][name]))}" +
                         (f"  (hints read: {hint}/3)" if hint else ""))
            if suggestion is None and state not in ("passing", "blocked"):
                suggestion = (topic, name, state)
    total = sum(len(f) for f in table.values())
    passing = sum(s == "passing" for f in table.values() for s in f.values())
    lines.append(f"\n{passing} of {count(total, 'function')} {word(passing, 'passes', 'pass')} "
                 f"{word(passing, 'its', 'their')} public checks; hints read for {count(len(read), 'function')}")
    if suggestion:
        topic, name, state = suggestion
        verb = "fix" if state == "failing" else "write"
        lines.append(click.style("next: ", bold=True) + f"{verb} {topic}.{name} — infergrade watch {topic} "
                     f"(stuck? infergrade hint {topic}.{name})")
    else:
        lines.append(click.style("every function passes its public checks", fg="green"))
    source = progress.path_for(folder)
    lines.append(f"(read from {source}; nothing is sent anywhere)" if source.is_file() else
                 f"(no progress recorded yet: `infergrade check` in {folder} records it in {source.name}; nothing is "
                 f"sent anywhere)")
    return "\n".join(lines)
