"""`infergrade list`: the topics, each with its public checks passed so far and its functions' signatures and
one-line summaries (in Chinese, the catalog's summary; the docstring stays the English contract)."""
from __future__ import annotations

from pathlib import Path

import click

from grader import progress, topics as topic_registry
from grader.language import topic_text, tr
from grader.wording import count, fitted, wrap_width


def lines(submission: Path) -> list[str]:
    """The listing's lines, the topics' names in bold."""
    done = progress.load(submission)["checks"] if submission.is_dir() else {}
    width = wrap_width()
    shown = []
    for topic in topic_registry.all_topics():
        passed = sum(1 for k, v in done.items() if k.startswith(f"{topic}.") and v.get("passed"))
        shown.append(click.style(topic, bold=True) +
                     (tr("  ({checks} passed)", checks=count(passed, "public check")) if passed else ""))
        for name, (sig, doc) in topic_registry.api(topic).items():
            if "." not in name:
                summary = f"  — {topic_text(topic, 'summaries', name, doc)}" if doc else ""
                shown += fitted(sig + summary, width, "  ", "      ")
    return shown
