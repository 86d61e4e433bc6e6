"""A notebook's submission: the cells that hold a topic's functions, joined into the topic's module.

A cell belongs to topic T when it is tagged `T` (the module code: imports) or `T.<name>` for a top-level name of
T's stub. Nothing is executed: the cells are only read. Inside a kernel the latest executed cell defining each name
stands for it, and the module cell is found by its tag where the frontend sends cell metadata with each execution
(JupyterLab and Notebook 7 do), else by its first line (`from_history`).
"""
from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import nbformat

from grader import topics as topic_registry
from grader.language import tr

MAX_NOTEBOOK_BYTES = 16 * 2**20
MODULE_MARK = "# {topic} module code"  # the imports cell's first line: found by it where no tags reach the kernel


def units(topic: str) -> list[str]:
    """The top-level names of the topic's stub, in file order (a class's methods live in its cell)."""
    return [name for name in topic_registry.api(topic) if "." not in name]


def read_notebook(path: Path, opened: int | None = None) -> nbformat.NotebookNode:
    """The notebook at `path` (read through `opened`, a descriptor of it, where given), read (never executed);
    ValueError says why it cannot be graded."""
    if opened is None and path.is_symlink():
        raise ValueError(tr("notebook {path} is a symbolic link: pass the notebook itself", path=repr(str(path))))
    try:
        fd = os.dup(opened) if opened is not None else os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with open(fd, "rb") as f:  # no link, no FIFO wait
            data = f.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as exc:
        raise ValueError(tr("cannot read notebook {path}: {reason}", path=repr(str(path)), reason=exc.strerror)) \
            from None
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise ValueError(tr("notebook {path} is larger than {mib} MiB", path=repr(str(path)),
                            mib=MAX_NOTEBOOK_BYTES // 2**20))
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        nbformat.validate(nb)  # cells, metadata and sources of the documented shapes before any is read
    except Exception as exc:  # noqa: BLE001 - any unreadable notebook is the submitter's problem
        raise ValueError(tr("{path} is not a valid Jupyter notebook ({error})", path=repr(str(path)),
                            error=type(exc).__name__)) from None
    return nb


def from_notebook(nb: nbformat.NotebookNode) -> dict[str, str]:
    """{topic: module source} for every topic with tagged code cells, cells in notebook order."""
    sources: dict[str, list[str]] = {}
    for cell in nb.get("cells", []):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") != "code" or not isinstance(tags, list):
            continue
        for topic in topic_registry.all_topics():
            if any(tag == topic or (isinstance(tag, str) and tag.startswith(f"{topic}.")
                                    and tag.split(".", 1)[1] in units(topic)) for tag in tags):
                sources.setdefault(topic, []).append(_plain_python(cell.get("source", "")))
                break
    return {topic: "\n\n".join(cells) + "\n" for topic, cells in sources.items()}


def from_history(topic: str, inputs: list[str], tags: dict[int, list[str]] | None = None) -> str:
    """The module a kernel's executed cells (`In`, oldest first) make: the latest module cell of the topic and,
    for each top-level name, the latest cell that defines it; the stub's code for what has not run yet.

    `tags` holds, by index in `inputs`, the tags the frontend sent with a cell: a cell with tags is the module
    cell when tagged `topic` (as grading reads it); one without (a frontend that sends none) when it starts with
    the module mark."""
    mark, tags = MODULE_MARK.format(topic=topic), tags or {}
    stub = stub_parts(topic)
    module = next((inputs[i] for i in range(len(inputs) - 1, -1, -1)
                   if (topic in tags[i] if i in tags else inputs[i].lstrip().startswith(mark))), stub[""])
    cells = latest_definitions(topic, inputs)
    parts = [module] + [stub[name] for name in units(topic) if name not in cells and name in stub]
    parts += [inputs[i] for i in sorted(set(cells.values()))]
    return "\n\n".join(map(_plain_python, parts)) + "\n"


def stub_parts(topic: str, path: Path | None = None) -> dict[str, str]:
    """{top-level name: its source} of the stub (or of `path`), and under "" the rest: imports and helpers."""
    path = path or topic_registry.EXERCISES_DIR / f"{topic}.py"
    text = path.read_text()
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(tr("{path} is not valid Python (line {line}: {error}): fix it first", path=path,
                            line=exc.lineno, error=exc.msg)) from None
    names = set(units(topic))
    lines = text.splitlines()
    parts, rest = {}, []
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        source = "\n".join(lines[first - 1:node.end_lineno])
        if getattr(node, "name", None) in names:
            parts[node.name] = source
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                  and isinstance(node.value.value, str)):
            rest.append(source)
    return {"": "\n".join(rest), **parts}


def latest_definitions(topic: str, inputs: list[str]) -> dict[str, int]:
    """{top-level name: index in `inputs` of the latest cell that defines it}."""
    wanted, found = set(units(topic)), {}
    for i, source in enumerate(inputs):
        found.update({name: i for name in defines(source) & wanted})
    return found


def defines(source: str) -> set[str]:
    """Top-level function and class names a cell defines (none when it does not parse)."""
    try:
        tree = ast.parse(_plain_python(source))
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _plain_python(source: str) -> str:
    """The cell without IPython's magics and shell escapes (lines starting with % or !), which a module lacks."""
    return re.sub(r"(?m)^[ \t]*[%!].*$", "", source if isinstance(source, str) else "".join(source))


def write_modules(nb_path: Path, folder: Path, opened: int | None = None) -> list[str]:
    """Write `<topic>.py` into `folder` for each topic the notebook holds (read through `opened` where given); the
    topics, or ValueError."""
    modules = from_notebook(read_notebook(nb_path, opened))
    if not modules:
        raise ValueError(tr("notebook {path} has no cell tagged with a topic's function (tags like "
                            "'sampling.top_p_filter', as `infergrade notebook` writes them)", path=repr(str(nb_path))))
    for topic, source in modules.items():
        (folder / f"{topic}.py").write_text(source)
    return sorted(modules)
