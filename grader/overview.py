"""`infergrade progress`: every topic's functions as not started, failing or passing, from the progress file."""
from __future__ import annotations

from pathlib import Path

import click

from grader import progress, topics as topic_registry

BAR = 20
MARKS = {"passing": ("✓", "green"), "failing": ("✗", "red"), "not started": ("·", "yellow")}


def states(folder: Path) -> dict[str, dict[str, str]]:
    """{topic: {function: "passing" | "failing" | "not started"}} from the recorded checks."""
    recorded: dict[str, list[dict]] = {}
    for entry in progress.load(folder)["checks"].values():
        if entry["function"]:
            recorded.setdefault(entry["function"], []).append(entry)
    out = {}
    for topic in topic_registry.all_topics():
        out[topic] = {}
        for name in topic_registry.api(topic):
            if "." in name:
                continue
            runs = [e for f, es in recorded.items() if f == f"{topic}.{name}" or f.startswith(f"{topic}.{name}.")
                    for e in es]
            out[topic][name] = "not started" if all(e["status"] == "not_started" for e in runs) else \
                "passing" if all(e["passed"] for e in runs) else "failing"
    return out


def render(folder: Path) -> str:
    """The overview: a bar per topic, a mark per function, the hints read and the next suggested exercise."""
    table, read = states(folder), progress.load(folder)["hints"]
    lines, suggestion = [], None
    for topic, functions in table.items():
        done = sum(s == "passing" for s in functions.values())
        filled = round(BAR * done / len(functions)) if functions else 0
        bar = click.style("█" * filled, fg="green") + "░" * (BAR - filled)
        lines.append(f"{click.style(f'{topic:16}', bold=True)} {bar} {done}/{len(functions)}")
        for name, state in functions.items():
            mark, color = MARKS[state]
            hint = read.get(f"{topic}.{name}")
            lines.append(f"    {click.style(mark, fg=color)} {name:30} {state}" +
                         (f"  (hints read: {hint}/3)" if hint else ""))
            if suggestion is None and state != "passing":
                suggestion = (topic, name, state)
    total = sum(len(f) for f in table.values())
    passing = sum(s == "passing" for f in table.values() for s in f.values())
    lines.append(f"\n{passing}/{total} functions pass their public checks; {len(read)} functions' hints read")
    if suggestion:
        topic, name, state = suggestion
        verb = "fix" if state == "failing" else "write"
        lines.append(click.style("next: ", bold=True) + f"{verb} {topic}.{name} — infergrade watch {topic} "
                     f"(stuck? infergrade hint {topic}.{name})")
    else:
        lines.append(click.style("every function passes its public checks", fg="green"))
    lines.append(f"(read from {progress.path_for(folder)}; nothing is sent anywhere)")
    return "\n".join(lines)
