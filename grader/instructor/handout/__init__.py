"""The student handout: what `bundle` writes, and how the commands tell a handout from the instructor's tree."""
from __future__ import annotations

import importlib.util
from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"


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
