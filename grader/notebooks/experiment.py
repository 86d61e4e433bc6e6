"""The functions an experiment runs: the learner's where written, else the reference's, saying which."""
from __future__ import annotations

import importlib
from types import SimpleNamespace

from grader.notebooks.extract import latest_definitions, units

TODO = "NotImplementedError"


def implementations(topic: str) -> SimpleNamespace:
    """Each of the topic's names: this kernel's definition when its latest cell no longer raises
    NotImplementedError, else the reference's (else the solutions', where the reference is not shipped)."""
    from IPython import get_ipython

    shell = get_ipython()
    inputs = list(shell.user_ns["In"])
    cells = latest_definitions(topic, inputs)
    fallback = _fallback(topic)
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
    print(f"experiments use your {', '.join(yours)}" if yours else "experiments use none of your functions yet")
    if theirs:
        print(f"and the {fallback.__name__.split('.')[0]}'s {', '.join(theirs)} (yours not done yet)")
    if waiting:
        print(f"the figures that need {', '.join(waiting)} wait for yours (no reference is installed here)")
    return SimpleNamespace(**chosen)


def _fallback(topic: str):
    for package in ("reference", "solutions"):
        try:
            return importlib.import_module(f"{package}.{topic}")
        except ImportError:
            continue
    return None
