"""The functions an experiment runs: the learner's where written, else the reference's, saying which."""
from __future__ import annotations

import importlib
import traceback
from contextlib import contextmanager
from types import SimpleNamespace

from grader.language import tr
from grader.submission.notebook import latest_definitions, units

TODO = "NotImplementedError"


def implementations(topic: str) -> SimpleNamespace:
    """Each of the topic's names: this kernel's definition when its latest cell no longer raises
    NotImplementedError, else the reference's (else the solutions', where the reference is not shipped)."""
    from IPython import get_ipython

    shell = get_ipython()
    inputs = list(shell.user_ns["In"])
    cells = latest_definitions(topic, inputs)
    fallback = reference(topic)
    chosen, yours, theirs, waiting = {}, [], [], []
    for name in units(topic):
        if name in cells and TODO not in inputs[cells[name]] and name in shell.user_ns:
            chosen[name] = shell.user_ns[name]
            yours.append(name)
        elif hasattr(fallback, name):
            chosen[name] = getattr(fallback, name)
            theirs.append(name)
        elif name in shell.user_ns:
            chosen[name] = shell.user_ns[name]
            waiting.append(name)
    print(tr("experiments use your {names}", names=", ".join(yours)) if yours
          else tr("experiments use none of your functions yet"))
    if theirs:
        print(tr("and the {package}'s {names} (yours not done yet)", package=fallback.__name__.split(".")[0],
                 names=", ".join(theirs)))
    if waiting:
        print(tr("the figures that need {names} wait for yours (no reference is installed here)",
                 names=", ".join(waiting)))
    return SimpleNamespace(**chosen)


def reference(topic: str):
    """The reference's module of `topic` (else the solutions'), for figures to draw beside the learner's curves;
    None where neither is installed (the student handout)."""
    for package in ("reference", "solutions"):
        try:
            return importlib.import_module(f"{package}.{topic}")
        except ImportError:
            continue
    return None


@contextmanager
def experiment(topic: str):
    """Run one experiment cell; where it reaches a function of `topic` not written yet (its NotImplementedError),
    drop the half-drawn figure and say in one sentence which function to write first, so that "Run All" goes on."""
    import matplotlib.pyplot as plt

    before = set(plt.get_fignums())
    try:
        yield
    except NotImplementedError as exc:
        waiting = _raised_by(topic, exc)
        if waiting is None:  # not a stub of this topic (a library's own NotImplementedError): a real error
            raise
        for number in set(plt.get_fignums()) - before:
            plt.close(number)
        print(tr("This experiment needs your {function}, which is not written yet: write it, run its cell, "
                 "then run this cell again.", function=waiting))


def _raised_by(topic: str, exc: BaseException) -> str | None:
    """The innermost function or method of `topic` in the traceback of `exc` ("top_p_filter",
    "BlockAllocator.append"), or None where no frame is one."""
    names = set(units(topic))
    frames = [frame.f_code for frame, _ in traceback.walk_tb(exc.__traceback__)]
    return next((code.co_qualname for code in reversed(frames) if code.co_qualname.split(".")[0] in names), None)
