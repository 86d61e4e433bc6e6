"""The student handout: what `bundle` writes, and how the commands tell a handout from the instructor's tree."""
from __future__ import annotations

import importlib.util
from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"
# A translation of README.md keeps the marker `source: <language.source_hash of README.md>` (tests/test_handout_zh.py),
# and the line FUNCTIONS where the list of every topic's functions goes
FUNCTIONS = "<!-- functions -->"


def readme(lang: str) -> str:
    """The handout's README in `lang` (README.<lang>.md), with every topic's functions listed, each with its
    summary in that language (the stubs' docstrings stay the English contract)."""
    text = README.with_suffix(f".{lang}.md").read_text(encoding="utf-8")
    if text.startswith("<!--"):  # the translators' note with its marker: not the student's
        text = text.split("-->", 1)[1].lstrip("\n")
    return text.replace(FUNCTIONS, functions(), 1)


def functions() -> str:
    """Each topic's stub module, then its functions and classes, each with its signature and one-line summary in this
    run's language (`[summaries]` of the topic's catalog, generated here so that a summary written later is in)."""
    from grader import language, topics

    parts = []
    for topic in topics.all_topics():
        listed = [language.tr("- `{signature}`: {summary}", signature=signature,
                              summary=language.topic_text(topic, "summaries", name, english))
                  for name, (signature, english) in topics.api(topic).items() if "." not in name]
        parts.append(language.tr("### {topic} (`exercises/{topic}.py`)", topic=topic) + "\n\n" + "\n".join(listed))
    return "\n\n".join(parts)


def absent(package: str) -> bool:
    """Whether `package` (the instructor's `reference` or `solutions`) cannot be imported here."""
    try:
        return importlib.util.find_spec(package) is None
    except ImportError:
        return True


def is_handout() -> bool:
    """Whether this installation lacks the reference the hidden checks compare with: the student handout.

    The Gradescope autograder carries the reference without the model solutions, and grades hidden checks.
    """
    return absent("reference")


def refusal(command: str) -> str:
    """What an instructor command says where the instructor's material is missing."""
    return (f"`infergrade {command}` is an instructor command: it needs the instructor's repository (the reference, "
            f"the model solutions and the hidden checks), which the student handout leaves out")
