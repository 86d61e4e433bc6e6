"""How the student's screens say things: a count with its noun in the right number, a long line wrapped at words
to the terminal's width, a run of identical printed lines said once with its count.

Every screen goes through these, so that the Chinese edition changes one place: `wrap` and `display_width` count a
wide (East Asian) character as two columns, and a Chinese line may break between any two of its characters.
"""
from __future__ import annotations

import re
import shutil
import textwrap
import unicodedata

from grader import language

FALLBACK_COLUMNS = 100  # not a terminal (a pipe, a file): lines as wide as `check` has always written them


def word(n: int, singular: str, plural: str | None = None) -> str:
    """`singular` when `n` is 1, else `plural` (singular + 's' unless given): a noun, or a verb whose subject is
    counted ('waits' and 'wait')."""
    return singular if n == 1 else plural or singular + "s"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 check', '2 checks', '0 checks': `n` and `noun` in the number `n` asks for (`plural` where it is not
    noun + 's', as in '1 more failing case'); in Chinese, `n` and the noun's measure word ('3 项检查')."""
    if language.current() == "zh" and noun in (units := language.screens()["units"]):
        return f"{n} {units[noun]}"
    return f"{n} {word(n, noun, plural)}"


def display_width(text: str) -> int:
    """The columns `text` takes on a terminal: two for a wide or full-width character, none for a combining one."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# the pieces a line may break between: a run of spaces, a wide character, or a run of anything else (a word)
_WIDE = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"  # CJK, its punctuation, full-width forms
_PIECES = re.compile(rf"\s+|[{_WIDE}]|[^\s{_WIDE}]+")
_NO_LINE_START = set("，。、；：？！）》」』】,.;:?!)")  # never first on a line (kinsoku): kept with what precedes
_NO_LINE_END = set("（《「『【")  # never last on a line: kept with what follows


def joined(lines: list[str]) -> str:
    """The lines of one paragraph as one line (to be wrapped again): joined with a space, except between two wide
    characters, where Chinese breaks a line without one."""
    return re.sub(rf"(?<=[{_WIDE}]) (?=[{_WIDE}])", "", " ".join(line.strip() for line in lines))


def columns() -> int:
    """The terminal's width (COLUMNS where it is set), FALLBACK_COLUMNS when the output is not a terminal."""
    return shutil.get_terminal_size((FALLBACK_COLUMNS, 24)).columns


def screen_width() -> int:
    """The columns a wrapped line of a screen may fill: the terminal's, less in Chinese the two that a full-width
    closing mark hanging past the line (`wrap`) takes, so that it never spills onto a line of its own."""
    return columns() - (2 if language.current() == "zh" else 0)


def wrap_width() -> int | None:
    """What `check`, `progress`, `list` and `hint` wrap their lines to: None in English (each line written whole,
    as these screens always have), `screen_width` in Chinese, whose characters take two columns each."""
    return screen_width() if language.current() == "zh" else None


def pad(text: str, width: int) -> str:
    """`text` followed by spaces up to `width` display columns (str.ljust counts a Chinese character as one)."""
    return text + " " * (width - display_width(text))


def wrap(text: str, width: int, indent: str = "", more_indent: str = "  ") -> list[str]:
    """`text` (one line) as lines of at most `width` columns, broken at spaces (and, in Chinese, between wide
    characters; closing punctuation never starts a line, and hangs past `width` where it must): the first starts
    with `indent`, the ones it continues on with `indent` + `more_indent`; a word longer than a line (a path, a
    tensor's repr) is cut. An empty `text` is one empty line."""
    limit = max(width, len(indent) + len(more_indent) + 20)
    if display_width(text) == len(text):  # no wide character: the standard library's wrapping
        return textwrap.wrap(text, limit, initial_indent=indent, subsequent_indent=indent + more_indent,
                             break_on_hyphens=False) or [indent.rstrip()]
    lines, line, space = [], indent, ""
    for piece in _opened(_PIECES.findall(text.strip())):
        if piece.isspace():
            space = piece
            continue
        longer = line + (space if line.strip() else "") + piece
        space = ""
        if display_width(longer) <= limit or not line.strip() or piece[0] in _NO_LINE_START:
            line = longer
        else:
            lines.append(line)
            line = indent + more_indent + piece
        hanging = piece in _NO_LINE_START and display_width(line) - display_width(piece) <= limit
        while display_width(line) > limit and not hanging:  # a word longer than a line is cut
            cut = _fitting(line, limit)
            lines.append(line[:cut])
            line = indent + more_indent + line[cut:]
    return lines + [line] if line.strip() else lines or [indent.rstrip()]


def fitted(text: str, width: int | None, indent: str = "", more_indent: str = "  ", **style) -> list[str]:
    """`text` after `indent`: one line where `width` is None (the English screens, written whole as they always
    were), else wrapped to `width` with its own leading spaces kept as indentation; each line `click.style`d."""
    import click  # here only: the rest of this module, as of language.py, is the standard library's

    lead = text[:len(text) - len(text.lstrip(" "))]
    parts = [indent + text] if width is None else wrap(text[len(lead):], width, indent + lead, more_indent)
    return [click.style(part, **style) for part in parts] if style else parts


def _opened(pieces: list[str]) -> list[str]:
    """`pieces` with each opening bracket joined to the piece after it."""
    joined: list[str] = []
    for piece in pieces:
        if joined and joined[-1][-1] in _NO_LINE_END and not piece.isspace():
            joined[-1] += piece
        else:
            joined.append(piece)
    return joined


def _fitting(line: str, limit: int) -> int:
    """How many characters of `line` fit in `limit` columns (at least one)."""
    taken = 0
    for i, c in enumerate(line):
        taken += display_width(c)
        if taken > limit:
            return max(i, 1)
    return len(line)


def fold_repeats(lines: list[str]) -> list[str]:
    """`lines` with each run of identical consecutive lines said once: 'loss 0.5  (repeated 20×)'."""
    folded: list[str] = []
    run = 0
    for i, line in enumerate(lines):
        run += 1
        if i + 1 == len(lines) or lines[i + 1] != line:
            folded.append(line if run == 1 else language.tr("{line}  (repeated {run}×)", line=line, run=run))
            run = 0
    return folded
