"""Which function to fix first: a failing check of a function that calls another contract function whose own
checks fail says so, since the callee's bug is the likelier cause (read from the submission's syntax tree, never run).
"""
from __future__ import annotations

import ast
import functools
import os
import stat
from pathlib import Path

from grader import language, topics as topic_registry

FAILING = ("failed", "error", "timeout")
SOURCE_BYTES = 2**20  # a topic module larger than this is not read for its calls


def contract_calls(source: str, contract: set[str]) -> dict[str, set[str]]:
    """For each contract function or method the module defines, the contract functions it calls by name
    (`top_p_filter(...)`, `self.free(...)` in a class's method); empty where the module does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    calls: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            calls[node.name] = _called(node, None, contract)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    name = node.name if item.name == "__init__" else f"{node.name}.{item.name}"
                    calls[name] = _called(item, node.name, contract)
    return {name: called - {name} for name, called in calls.items() if name in contract}


def _called(function: ast.FunctionDef, owner: str | None, contract: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name):
            found.add(node.func.id)
        elif owner and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == "self":
            found.add(f"{owner}.{node.func.attr}")
    return found & contract


def point_at_callees(results: list, submission: Path) -> None:
    """Charge a failed check whose call of another contract function raised NotImplementedError from a helper not
    written yet (a check of apply_temperature that also calls filtered_probs) to that function, and open each
    failing check's message with the contract functions its function calls that fail their own checks: "check
    `top_p_filter` first: it fails its own checks"."""
    for r in results:
        if r.status == "failed" and r.function is None and r.raised_by and r.raised_by != _function(r):
            r.function = r.raised_by
    failing: dict[str, set[str]] = {}  # topic -> its functions that fail a check calling no other function
    for r in results:
        if r.status in FAILING and r.called - _classes(r.topic) == {_function(r)}:  # a constructor is set-up
            failing.setdefault(r.topic, set()).add(_function(r))
    calls_of: dict[str, dict[str, set[str]]] = {}
    for r in results:
        function = _function(r)
        if r.status not in FAILING or function not in r.called or r.topic not in failing:
            continue
        if r.topic not in calls_of:
            calls_of[r.topic] = contract_calls(_source(submission, r.topic), set(topic_registry.api(r.topic)))
        first = sorted(calls_of[r.topic].get(function, set()) & failing[r.topic])
        if first:
            named = ", ".join(f"`{f}`" for f in first)
            first_line = (language.tr("check {named} first: it fails its own checks, and {function} calls it",
                                      named=named, function=function) if len(first) == 1 else
                          language.tr("check {named} first: they fail their own checks, and {function} calls them",
                                      named=named, function=function))
            r.message = f"{first_line}\n{r.message}"


@functools.cache
def _classes(topic: str) -> frozenset[str]:
    """The topic's contract classes, whose constructors a check calls to set up, not to judge."""
    return frozenset(name for name, (shown, _) in topic_registry.api(topic).items() if shown.startswith("class "))


def _function(result) -> str | None:
    """The contract function a check is about: its hint's (`sampling.top_p_filter` -> `top_p_filter`)."""
    return result.hint.split(".", 1)[1] if result.hint and "." in result.hint else None


def _source(submission: Path, topic: str) -> str:
    """The topic module's text: a regular file only, never through a link, never waiting on a FIFO."""
    try:
        fd = os.open(submission / f"{topic}.py", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return f.read(SOURCE_BYTES).decode("utf-8", "replace")
