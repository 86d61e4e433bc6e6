"""How the student's screens say things: a count with its noun in the right number, a long line wrapped at words
to the terminal's width, a run of identical printed lines said once with its count.

Every screen goes through these, so that a later edition in another language changes one place: `wrap` counts
one column per character for now (a Chinese edition will count wide characters as two here).
"""
from __future__ import annotations

import shutil
import textwrap

FALLBACK_COLUMNS = 100  # not a terminal (a pipe, a file): lines as wide as `check` has always written them


def word(n: int, singular: str, plural: str | None = None) -> str:
    """`singular` when `n` is 1, else `plural` (singular + 's' unless given): a noun, or a verb whose subject is
    counted ('waits' and 'wait')."""
    return singular if n == 1 else plural or singular + "s"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 check', '2 checks', '0 checks': `n` and `noun` in the number `n` asks for (`plural` where it is not
    noun + 's', as in '1 more failing case')."""
    return f"{n} {word(n, noun, plural)}"


def columns() -> int:
    """The terminal's width (COLUMNS where it is set), FALLBACK_COLUMNS when the output is not a terminal."""
    return shutil.get_terminal_size((FALLBACK_COLUMNS, 24)).columns


def wrap(text: str, width: int, indent: str = "", more_indent: str = "  ") -> list[str]:
    """`text` (one line) as lines of at most `width` columns, broken at spaces: the first starts with `indent`, the
    ones it continues on with `indent` + `more_indent`; a word longer than a line (a path, a tensor's repr) is cut.
    An empty `text` is one empty line."""
    return textwrap.wrap(text, max(width, len(indent) + len(more_indent) + 20), initial_indent=indent,
                         subsequent_indent=indent + more_indent, break_on_hyphens=False) or [indent.rstrip()]


def fold_repeats(lines: list[str]) -> list[str]:
    """`lines` with each run of identical consecutive lines said once: 'loss 0.5  (repeated 20×)'."""
    folded: list[str] = []
    run = 0
    for i, line in enumerate(lines):
        run += 1
        if i + 1 == len(lines) or lines[i + 1] != line:
            folded.append(line if run == 1 else f"{line}  (repeated {run}×)")
            run = 0
    return folded
