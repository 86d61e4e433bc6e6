"""Sandbox v3, red team (regression guard): hidden material is not in the child's memory either.

The zygote imports the grader's sandbox package before it forks, and a submission can walk every object of its
interpreter (`gc.get_objects()`), whatever `sys.modules` shows. None of them may come from the checks, the engine,
the reference or the solutions, and `make` may only run grader.toys. Holds today.
"""
import sys

import pytest

from grader.engine.runner import zygote
from grader.sandbox.policy import sandbox_config
from grader.sandbox.pool import ChildPool
from grader.sandbox.remote import Submission

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
HIDDEN = ("grader.checks", "grader.engine", "reference", "solutions")

PROBES = f'''
import gc
import sys
import types

HIDDEN = {HIDDEN!r}


def hidden_objects():
    found = set(m for m in sys.modules if m.startswith(HIDDEN))
    for obj in gc.get_objects():
        if isinstance(obj, types.ModuleType) and str(getattr(obj, "__name__", "")).startswith(HIDDEN):
            found.add(obj.__name__)
        elif isinstance(obj, (types.FunctionType, type)) and str(getattr(obj, "__module__", "")).startswith(HIDDEN):
            found.add(f"{{obj.__module__}}.{{obj.__qualname__}}")
    factories = sys.modules["grader.sandbox.child"]._factories
    return sorted(found), sorted(name for name in factories if not name.startswith("grader.toys."))
'''


@linux_only
def test_the_childs_memory_holds_nothing_of_the_checks_or_the_reference(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "demo.py").write_text(PROBES)
    sub = Submission(ChildPool(zygote()), {**sandbox_config(folder, 2**30, 2**20), "topic": "demo", "forbidden": []})
    found, factories = sub.hidden_objects()
    assert found == [] and factories == []
    sub.close()
