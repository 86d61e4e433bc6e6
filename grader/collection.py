"""Garbage collection in the command line: off while it imports (each collection would scan torch's hundreds of
thousands of module objects again), then those objects frozen out of every later collection, and on again before the
checks run, which make and drop cycles."""
from __future__ import annotations

import gc


def pause() -> None:
    """No collection until `resume` (the command line's start: everything after it is imports)."""
    gc.disable()


def resume() -> None:
    """Collect again, never scanning what exists now (imported modules, the engine): where `pause` held it."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
