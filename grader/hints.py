"""Hints (three levels per exercise function) and misconception explanations, from grader/hints/<topic>.toml."""
from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from grader.language import topic_text, tr

HINTS_DIR = Path(__file__).resolve().parent / "hints"
LEVELS = (1, 2, 3)


@functools.cache
def load(topic: str) -> dict:
    path = HINTS_DIR / f"{topic}.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


def hint(topic: str, function: str, level: int) -> str:
    """The hint text; KeyError names what is unknown."""
    functions = load(topic).get("functions", {})
    if function not in functions:
        known = ", ".join(sorted(functions)) or tr("none")
        raise KeyError(tr("no hints for {target}; functions with hints: {known}", target=f"{topic}.{function}",
                          known=known))
    return topic_text(topic, "functions", f"{function}.{level}", functions[function][str(level)].strip())


def after(target: str, shown: int, remembered: int) -> str:
    """What to run for more help after level `shown` of `target`, given the level the progress file now records
    (`remembered`; 0 where it could not be kept): `infergrade hint` again shows the next unread level."""
    said = dict(target=target, shown=shown, next=shown + 1, last=LEVELS[-1])
    if shown == LEVELS[-1]:
        return tr("That was the last level of hints for {target} ({shown} of {last}).", **said)
    if min(remembered + 1, LEVELS[-1]) == shown + 1:
        return tr("Run `infergrade hint {target}` again for level {next} of {last}.", **said)
    return tr("Level {next} of {last}: `infergrade hint {target} --level {next}`.", **said)


def explain(topic: str, misconception: str) -> str | None:
    english = load(topic).get("misconceptions", {}).get(misconception)
    return english and topic_text(topic, "misconceptions", misconception, english.strip())


def misconception_ids(topic: str) -> list[str]:
    return sorted(load(topic).get("misconceptions", {}))
