"""A readable summary of a results document for the terminal."""
from __future__ import annotations

import textwrap

import click

from grader import hints

MARKS = {"passed": ("PASS", "green"), "failed": ("FAIL", "red"), "error": ("ERROR", "red"),
         "timeout": ("TIMEOUT", "red"), "skipped": ("SKIP", "yellow")}


def summary(doc: dict, verbose: bool = False) -> str:
    lines = []
    explained: set[str] = set()  # each misconception is explained once, then named
    for topic in doc["topics"]:
        color = "green" if topic["status"] == "passed" else "red"
        lines.append(click.style(f"{topic['id']}: {topic['score']:g}/{topic['max_score']:g}", fg=color, bold=True)
                     + (f"  ({topic['message']})" if topic["message"] else ""))
        for c in topic["checks"]:
            if c["status"] == "passed" and not verbose:
                continue
            mark, fg = MARKS[c["status"]]
            lines.append(f"  {click.style(mark, fg=fg)} {c['id']} ({c['points']} pt) {c['title']}")
            if c["status"] == "passed":
                continue
            lines += [f"      {line}" for line in c["message"].splitlines()[:24]]
            if c["misconception"]:
                why = "" if c["misconception"] in explained else hints.explain(topic["id"], c["misconception"])
                explained.add(c["misconception"])
                lines += textwrap.wrap(f"misconception {c['misconception']}" + (f": {why}" if why else " (see above)"),
                                       100, initial_indent="      ", subsequent_indent="        ")
            if c["hint"] and c["status"] in ("failed", "error"):
                lines.append(f"      hint: infergrade hint {c['hint']}")
    passed = sum(c["status"] == "passed" for t in doc["topics"] for c in t["checks"])
    total = sum(c["status"] != "skipped" for t in doc["topics"] for c in t["checks"])
    lines.append(click.style(f"score {doc['score']:g}/{doc['max_score']:g}, {passed}/{total} checks passed",
                             bold=True))
    if doc["status"] == "error":
        lines.append(click.style(f"grading did not complete: {doc['error']}", fg="red"))
    return "\n".join(lines)
