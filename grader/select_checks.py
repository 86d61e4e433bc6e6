"""Run the public checks of some of a topic's functions only, with the warm zygote (watch and notebooks).

pytest loads this module as a plugin (`-p grader.select_checks`, through PYTEST_ADDOPTS, which pytest reads on
every run); its collection hook drops the checks of other functions before the engine scores what is left.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading import grade

_units: set[str] | None = None  # the functions (top-level names) whose checks run; None runs every check


def unit_of(hint: str | None) -> str | None:
    """The top-level name a check belongs to: `BlockAllocator` for the hint `paged_kv.BlockAllocator.append`."""
    return hint.split(".")[1] if hint and "." in hint else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    if _units is not None:
        items[:] = [i for i in items if unit_of(_hint(i)) in _units]


def _hint(item) -> str | None:
    meta = getattr(getattr(item, "obj", None), "__infergrade__", None)
    return f"{Path(str(item.path)).parent.name}.{meta.hint}" if meta is not None and meta.hint else None


def check_units(folder: Path, topic: str, units: set[str] | None, deadline_s: float | None = None) -> dict:
    """The public results of `topic` for the checks of `units` (all checks when None), from this process's zygote."""
    global _units
    _units = units
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYTEST_ADDOPTS", "-p grader.select_checks")
        try:
            return grade(folder, [topic], hidden=False, seed=0, with_progress=False, deadline_s=deadline_s)
        finally:
            _units = None
