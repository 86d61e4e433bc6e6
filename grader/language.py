"""The language a student reads, chosen once per run, and the Chinese edition's texts.

The choice: `--lang` on any command, else INFERGRADE_LANG, else the handout's own language (`bundle --lang zh`
writes `[tool.infergrade] lang = "zh"` into the handout's pyproject.toml, beside its grader package), else the locale
(LC_ALL, LC_MESSAGES, LANG starting with `zh`), else English. Only words change with it: scores, statuses, ids, seeds
and every value a message quotes are the same in both languages.

The Chinese texts live in TOML under grader/locale/zh/ (read with the standard library's tomllib; no compile step,
and the long multi-line hints were TOML already):
- `screens/*.toml`: the sentences the grader's code says (`tr`), keyed by their English text as it stands in the
  code (as gettext keys by msgid): an English sentence that changes has no translation until one is written for it
  again; `[units]` holds the measure words of counted nouns (`wording.count`).
- `<topic>.toml`: a topic's hints, misconception explanations, check titles and stub summaries, keyed by id; each
  translation keeps `source`, the hash of the English text it translates (`source_hash`), so that an English text
  that changes is seen to need its translation looked at again (tests/test_language.py).
"""
from __future__ import annotations

import functools
import hashlib
import os
import string
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

LANGUAGES = ("en", "zh")
VARIABLE = "INFERGRADE_LANG"
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
# the project the grader package sits in: a handout installed in place (its README's `pip install -e`) or on PYTHONPATH
PROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"

_chosen: str | None = None


def from_environment(environ=os.environ) -> str:
    """INFERGRADE_LANG where it names a language, else the handout's language (`handout_language`), else the first
    locale variable that is set (POSIX's order)."""
    asked = environ.get(VARIABLE, "").strip().lower()
    if asked in LANGUAGES:
        return asked
    if handout := handout_language():
        return handout
    for name in LOCALE_VARIABLES:
        if environ.get(name):
            return "zh" if environ[name].lower().startswith("zh") else "en"
    return "en"


@functools.cache
def handout_language(project: Path = PROJECT, installed: Path | None = None) -> str | None:
    """The language a Chinese handout's commands speak whatever the shell's locale: its pyproject.toml's
    `[tool.infergrade] lang`, else (a wheel carries no pyproject.toml) the `lang` of the grader package's own
    locale/handout.toml, which `bundle` writes beside it; None where neither names one."""
    said = _toml(project).get("tool", {}).get("infergrade", {}).get("lang")
    if said not in LANGUAGES:
        said = _toml(installed or LOCALE_DIR / "handout.toml").get("lang")
    return said if said in LANGUAGES else None


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def choose(lang: str | None) -> str:
    """Make `lang` (None: the environment's) this run's language; the language chosen."""
    global _chosen
    assert lang is None or lang in LANGUAGES, lang
    _chosen = lang or from_environment()
    return _chosen


def current() -> str:
    return _chosen or choose(None)


def _chose(_ctx, _param, value):
    if value is not None:
        choose(value)


@functools.cache
def option() -> click.Option:
    """The --lang option. click is imported here, not with the module: the rest of it is the standard library's, so
    that the scripts run where the grader's dependencies are not installed (instructor/collect.py on the runner's
    python3, the autograder's finalize.py) say their sentences through it."""
    import click

    return click.Option(["--lang"], type=click.Choice(LANGUAGES), default=None, expose_value=False, is_eager=True,
                        callback=_chose, help=f"Language of what is shown: en or zh (default: ${VARIABLE}, else the "
                                              "handout's own, else the locale, else en).")


def add_option(command: click.Command) -> None:
    """Give `command` (and, for a group, each of its commands) the --lang option."""
    if option() not in command.params:
        command.params.append(option())
    for sub in getattr(command, "commands", {}).values():
        add_option(sub)


def source_hash(english: str) -> str:
    """The marker kept beside a translation: the first 12 hex digits of the sha256 of the English text it says."""
    return hashlib.sha256(english.strip().encode()).hexdigest()[:12]


@functools.cache
def catalog(name: str, lang: str = "zh") -> dict:
    path = LOCALE_DIR / lang / f"{name}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


@functools.cache
def screens(lang: str = "zh") -> dict:
    """The sentences of every catalog under locale/<lang>/screens/ (one file per part of the grader), merged; the
    measure words of counted nouns under "units". A sentence two catalogs hold must say the same in both."""
    merged: dict = {"units": {}}
    for path in sorted((LOCALE_DIR / lang / "screens").glob("*.toml")):
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        units = table.pop("units", {})
        for held, new in ((merged["units"], units), (merged, table)):
            clash = sorted(k for k in held.keys() & new.keys() if held[k] != new[k])
            assert not clash, f"{path.name} says {clash} otherwise than another catalog"
            held |= new
    return merged


def tr(english: str, /, **values) -> str:
    """`english` (a sentence of the grader's, with str.format fields) in this run's language, filled with `values`:
    the values themselves (numbers, ids, code) are never translated. An English text with no translation yet is
    said in English."""
    said = screens().get(english, english) if current() == "zh" else english
    return said.format(**values) if values else said


def topic_text(topic: str, kind: str, key: str, english: str) -> str:
    """A topic's text of `kind` (functions' hints as "name.level", misconceptions, titles, summaries) in this
    run's language; `english` where it has no translation."""
    if current() != "zh":
        return english
    entry = catalog(topic).get(kind, {})
    for part in key.split("."):
        entry = entry.get(part, {}) if isinstance(entry, dict) else {}
    return entry["text"].strip() if isinstance(entry, dict) and "text" in entry else english


def fields(text: str) -> set[str]:
    """The str.format fields `text` fills: a translation must fill the same ones."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
