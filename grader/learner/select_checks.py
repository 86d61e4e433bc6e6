"""Run the public checks of some of a topic's functions only, with the warm zygote (watch and notebooks)."""
from __future__ import annotations

from pathlib import Path

from grader.grading import grade


def unit_of(hint: str | None) -> str | None:
    """The top-level name a check belongs to: `BlockAllocator` for the hint `paged_kv.BlockAllocator.append`."""
    return hint.split(".")[1] if hint and "." in hint else None


def check_units(folder: Path, topic: str, units: set[str] | None, deadline_s: float | None = None) -> dict:
    """The public results of `topic` for the checks of `units` (all checks when None), from this process's zygote."""
    return grade(folder, [topic], hidden=False, seed=0, with_progress=False, deadline_s=deadline_s, only=units)
