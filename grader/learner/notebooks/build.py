"""Write a topic's self-study notebook with nbformat: the concept, the stub's functions as tagged cells, an
inline check after each, experiments with figures, then what the technique does not do where the topic says it
(content from grader/learner/notebooks/topics/<topic>.py)."""
from __future__ import annotations

import ast
import importlib
import os
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader import output, topics as topic_registry
from grader.submission.notebook import MODULE_MARK, stub_parts, units

HOW = """**How this notebook works.** Fill in each function cell below (they are your `{topic}.py`) and run the check
cell under it: it runs the grader's public checks of that function in the sandbox, on the code this kernel ran,
with the same messages and hints as `infergrade check {topic}` (`!infergrade hint {topic}.NAME` prints a hint).
Keep helpers inside a function's cell or in the module cell. `infergrade grade --submission {topic}.ipynb` grades
the tagged cells of this notebook without running it. The experiments at the end use your functions where they
are written and the reference's where they are not yet, and say which; where no reference is installed, an
experiment that needs an unwritten function says which to write first. Figures label your curves "yours" and draw
the reference's beside them where it is installed. A function's checks may call one of the
later functions: until you write that one, they report it as not started. `infergrade.check("{topic}")` runs
every public check of the topic."""

SHARED = "# the inputs the experiments below share; none of your functions runs here"
SETUP = ("import grader.learner.notebooks as infergrade\n\n"
         "infergrade.start()  # the checking process warms up while you read")


def build(topic: str, source: Path | None = None) -> nbformat.NotebookNode:
    """The notebook of `topic`, its function cells taken from `source` (the stub by default; the stub's for a
    function `source` lacks)."""
    content = importlib.import_module(f"grader.learner.notebooks.topics.{topic}")
    stub = topic_registry.EXERCISES_DIR / f"{topic}.py"
    parts = {**stub_parts(topic), **(stub_parts(topic, source) if source else {})}
    checked = {h.split(".")[0] for h in _hinted(topic)}
    contract = (ast.get_docstring(ast.parse(stub.read_text())) or topic).strip()
    cells = [new_markdown_cell(f"# {topic}\n\n{content.CONCEPT.strip()}"),
             new_markdown_cell(HOW.format(topic=topic)),
             new_code_cell(SETUP, metadata={"tags": ["setup"]}),
             new_markdown_cell(f"## The exercise\n\n```text\n{contract}\n```"),
             new_code_cell(f"{MODULE_MARK.format(topic=topic)} (imports, helpers)\n{parts['']}",
                           metadata={"tags": [topic]})]
    for name in units(topic):
        if name not in parts:
            continue
        summary = topic_registry.api(topic)[name][1]
        cells.append(new_markdown_cell(f"### `{name}`\n\n{summary}"))
        cells.append(new_code_cell(parts[name], metadata={"tags": [f"{topic}.{name}"]}))
        if name in checked:
            cells.append(new_code_cell(f'infergrade.check("{topic}.{name}")', metadata={"tags": ["check"]}))
    cells.append(new_markdown_cell("## Experiments"))
    # `%matplotlib inline` first: with matplotlib 3.8 the kernel's first figure otherwise shows as text only.
    cells.append(new_code_cell(f'%matplotlib inline\nimport matplotlib.pyplot as plt\n\n'
                               f'impl = infergrade.implementations("{topic}")\n'
                               f'ref = infergrade.reference("{topic}")  # drawn beside yours; None without it',
                               metadata={"tags": ["experiment"]}))
    if hasattr(content, "SETUP"):  # the inputs every experiment may read: it calls none of the learner's functions
        cells.append(new_code_cell(f"{SHARED}\n{content.SETUP.strip()}", metadata={"tags": ["experiment"]}))
    for intro, code in content.EXPERIMENTS:
        cells.append(new_markdown_cell(intro.strip()))
        cells.append(new_code_cell(_guarded(topic, code.strip()), metadata={"tags": ["experiment"]}))
    if hasattr(content, "CLOSING"):  # the chapter's completion standard: what the technique does not do
        cells.append(new_markdown_cell(f"## What this does not do\n\n{content.CLOSING.strip()}"))
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "infergrade": {"topic": topic}})
    nbformat.validate(nb)
    return nb


def write(topic: str, out: Path, overwrite: bool = False, source: Path | None = None) -> Path:
    """Write `<out>/<topic>.ipynb`; FileExistsError rather than overwrite a learner's work, or anything else in its
    place (a link, even one to nothing: replaced with `overwrite`, never followed, by `output.write_text`)."""
    path = out / f"{topic}.ipynb"
    if os.path.lexists(path) and not overwrite:
        raise FileExistsError(f"{path} exists: it may hold your work (pass --force to replace it)")
    # ended as nbformat.write ends it; the name is the grader's, so a FIFO in its place is replaced too
    output.write_text(nbformat.writes(build(topic, source)) + "\n", path, named=False)
    return path


def _guarded(topic: str, code: str) -> str:
    """`code` inside `with infergrade.experiment(topic):`, which says what to write first where it needs an
    unwritten function."""
    guarded = f'with infergrade.experiment("{topic}"):\n{textwrap.indent(code, "    ")}'
    body = ast.Module(body=ast.parse(guarded).body[0].body, type_ignores=[])
    assert ast.dump(body) == ast.dump(ast.parse(code)), "indenting changed the code (a multi-line string?)"
    return guarded


def _hinted(topic: str) -> set[str]:
    """The names the topic's public checks point their hints at (`top_p_filter`, `BlockAllocator.append`)."""
    path = topic_registry.CHECKS_DIR / topic / "test_public.py"
    tree = ast.parse(path.read_text())
    return {kw.value.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            for kw in node.keywords if kw.arg == "hint" and isinstance(kw.value, ast.Constant)
            and isinstance(kw.value.value, str)}
