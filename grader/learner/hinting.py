"""`infergrade hint TOPIC.FUNCTION`: the next unread level of a function's hints (or the one asked for), recorded
in the progress file, and what to run for more."""
from __future__ import annotations

from pathlib import Path

import click

from grader import hints, progress, topics as topic_registry
from grader.language import tr
from grader.wording import fitted, joined, wrap_width


def show(target: str, level: int | None, submission: Path) -> None:
    """Print level `level` (None: the next unread one) of the hints of `target`; click.UsageError where `target`
    names no function with hints."""
    topic, _, function = target.partition(".")
    if topic not in topic_registry.all_topics() or not function:
        meant = [f"{t}.{target}" for t in topic_registry.all_topics() if target in topic_registry.api(t)]
        topics = ", ".join(topic_registry.all_topics())
        raise click.UsageError(
            tr("did you mean `infergrade hint {meant}`? (hints are named TOPIC.FUNCTION)", meant=meant[0]) if meant
            else tr("expected TOPIC.FUNCTION with a topic from: {topics}", topics=topics))
    read = progress.load(submission)["hints"].get(target, 0) if submission.is_dir() else 0
    level = level or min(int(read) + 1, hints.LEVELS[-1])
    try:
        text = hints.hint(topic, function, level)
    except KeyError as exc:
        raise click.UsageError(exc.args[0]) from None
    click.echo(click.style(tr("{target} — hint {level}/{levels}", target=target, level=level,
                              levels=hints.LEVELS[-1]), bold=True))
    click.echo(_fitted(text, level))
    if submission.is_dir():
        progress.record_hint(submission, target, level)
    remembered = progress.load(submission)["hints"].get(target, 0) if submission.is_dir() else 0
    click.echo("\n".join(fitted(hints.after(target, level, remembered), wrap_width(), dim=True)))


def _fitted(text: str, level: int) -> str:
    """The hint as written in English (the terminal folds a long line); in Chinese wrapped to the terminal: a
    level's prose (1, 2) as one paragraph, the lines of level 3's pseudocode each on its own, a line of code
    continuing under its own indentation."""
    width = wrap_width()
    if width is None:
        return text
    lines = text.splitlines()
    if level < hints.LEVELS[-1]:
        lines = [joined(lines)]
    return "\n".join(part for line in lines for part in fitted(line, width, "", "  " if line[:1] == " " else ""))
