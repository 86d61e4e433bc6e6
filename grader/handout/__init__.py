"""The student handout: what `bundle` writes, and how the commands tell a handout from the instructor's tree."""
from __future__ import annotations

import importlib.util
from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"
INSTRUCTOR_MATERIAL = ("reference", "solutions")


def is_handout() -> bool:
    """Whether this installation lacks the instructor's material (the reference and the model solutions)."""
    for name in INSTRUCTOR_MATERIAL:
        try:
            if importlib.util.find_spec(name) is None:
                return True
        except ImportError:
            return True
    return False


def refusal(command: str) -> str:
    """What an instructor command says in the student handout."""
    return (f"`infergrade {command}` is an instructor command: it needs the instructor's repository (the reference, "
            f"the model solutions and the hidden checks), which the student handout leaves out")
