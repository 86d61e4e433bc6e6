"""The topics: a topic is a folder of checks under grader/checks; its API is read from the stub in exercises/."""
from __future__ import annotations

import ast
import copy
import functools
from pathlib import Path

import exercises

CHECKS_DIR = Path(__file__).resolve().parent / "checks"
EXERCISES_DIR = Path(exercises.__file__).resolve().parent

ORDER = ["sampling", "decoding", "kv_cache", "paged_kv", "flash_attention", "speculative", "timeline",
         "prompt_cache", "serving", "latency", "reasoning"]


def all_topics() -> list[str]:
    """Topics that have checks, in the contract's order."""
    found = {p.parent.name for p in CHECKS_DIR.glob("*/test_public.py")}
    return sorted(found, key=lambda t: (ORDER.index(t) if t in ORDER else len(ORDER), t))


def check_files(topic: str, hidden: bool) -> list[Path]:
    names = ["test_public.py"] + (["test_hidden.py"] if hidden else [])
    return [CHECKS_DIR / topic / n for n in names if (CHECKS_DIR / topic / n).exists()]


@functools.cache
def api(topic: str) -> dict[str, tuple[str, str]]:
    """Public functions, classes and methods of the topic's stub: name -> (signature, first docstring line)."""
    path = EXERCISES_DIR / f"{topic}.py"
    if not path.exists():
        return {}
    tree = ast.parse(path.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            out[node.name] = (f"{node.name}({_plain(node.args)})", _first_line(node))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            out[node.name] = (f"class {node.name}", _first_line(node))
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and (not item.name.startswith("_") or item.name == "__init__"):
                    args = _plain(item.args).removeprefix("self, ").removeprefix("self")
                    shown = node.name if item.name == "__init__" else f"{node.name}.{item.name}"
                    out[shown] = (f"{shown}({args})", _first_line(item))
    return out


def _plain(args: ast.arguments) -> str:
    """The parameter list without annotations: `config, dtype_bytes=2`."""
    args = copy.deepcopy(args)
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if a is not None:
            a.annotation = None
    return ast.unparse(args)


def _first_line(node) -> str:
    """The docstring's first sentence: its first line, and the lines after it until one ends the sentence."""
    said = []
    for line in (ast.get_docstring(node) or "").strip().splitlines():
        if not line.strip():
            break
        said.append(line.strip())
        if line.rstrip().endswith((".", ":", "?", "!")):
            break
    return " ".join(said)


def signature(topic: str, name: str) -> str | None:
    entry = api(topic).get(name)
    return entry[0] if entry else None
