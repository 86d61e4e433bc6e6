"""Which topics a student has started: a module with at least one of the contract's functions whose body does more
than raise NotImplementedError (read, never run), so that a repository's checks on every push judge only what was
begun."""
from __future__ import annotations

import ast
from pathlib import Path

from grader import topics as topic_registry


def started_topics(folder: Path, topics: list[str]) -> list[str]:
    """The topics of `topics` whose module in `folder` has one of the contract's functions or methods written (a
    helper of the stub's own, such as a kernel's scaffold, does not count); a module that does not parse counts
    as started: its error is what the student must see."""
    return [t for t in topics if _started(folder / f"{t}.py", set(topic_registry.api(t)))]


def _started(path: Path, contract: set[str]) -> bool:
    try:
        tree = ast.parse(path.read_text())
    except OSError:
        return False
    except (SyntaxError, ValueError):
        return True
    return any(not _stub_body(f.body) for name, f in _functions(tree.body, "") if name in contract)


def _functions(body: list[ast.stmt], prefix: str):
    """(name, node) of the module's top-level functions and of its classes' methods ("Class.method")."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{node.name}", node
        elif isinstance(node, ast.ClassDef) and not prefix:
            yield from _functions(node.body, f"{node.name}.")


def _stub_body(body: list[ast.stmt]) -> bool:
    """A docstring, `pass` or `...`, then `raise NotImplementedError` (with or without a message), nothing else."""
    rest = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) and
            not isinstance(s, ast.Pass)]
    return len(rest) == 1 and isinstance(rest[0], ast.Raise) and _names_not_implemented(rest[0].exc)


def _names_not_implemented(exc: ast.expr | None) -> bool:
    target = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(target, ast.Name) and target.id == "NotImplementedError"
