"""Write a topic's self-study notebook with nbformat: the concept, the stub's functions as tagged cells, an
inline check after each, experiments with figures, then what the technique does not do where the topic says it
(content from grader/learner/notebooks/topics/<topic>.py)."""
from __future__ import annotations

import ast
import os
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader import language, output, topics as topic_registry
from grader.learner.notebooks import texts
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
# The words build.py adds to every notebook, by their key in locale/<lang>/notebooks/notebook.toml
FRAME = {"how": HOW, "exercise": "## The exercise", "module": "(imports, helpers)", "experiments": "## Experiments",
         "does_not_do": "## What this does not do", "shared": SHARED,
         "warm_up": "# the checking process warms up while you read", "beside": "# drawn beside yours; None without it"}


def build(topic: str, source: Path | None = None, lang: str | None = None) -> nbformat.NotebookNode:
    """The notebook of `topic` in `lang` (default: this run's language), its function cells taken from `source`
    (the stub by default; the stub's for a function `source` lacks)."""
    lang = lang or language.current()
    content = texts.content(topic)
    prose = {key: texts.said(topic, key, english, lang) for key, english in texts.prose(topic).items()}
    frame = {key: texts.said(texts.FRAME, key, english, lang) for key, english in FRAME.items()}
    stub = topic_registry.EXERCISES_DIR / f"{topic}.py"
    parts = {**stub_parts(topic), **(stub_parts(topic, source) if source else {})}
    checked = {h.split(".")[0] for h in _hinted(topic)}
    contract = (ast.get_docstring(ast.parse(stub.read_text())) or topic).strip()
    cells = [new_markdown_cell(f"# {topic}\n\n{prose['concept']}"),
             new_markdown_cell(frame["how"].format(topic=topic)),
             new_code_cell(_setup(lang, frame["warm_up"]), metadata={"tags": ["setup"]}),
             new_markdown_cell(f"{frame['exercise']}\n\n```text\n{contract}\n```"),
             new_code_cell(f"{MODULE_MARK.format(topic=topic)} {frame['module']}\n{parts['']}",
                           metadata={"tags": [topic]})]
    for name in units(topic):
        if name not in parts:
            continue
        cells.append(new_markdown_cell(f"### `{name}`\n\n{_summary(topic, name, lang)}"))
        cells.append(new_code_cell(parts[name], metadata={"tags": [f"{topic}.{name}"]}))
        if name in checked:
            cells.append(new_code_cell(f'infergrade.check("{topic}.{name}")', metadata={"tags": ["check"]}))
    cells.append(new_markdown_cell(frame["experiments"]))
    # `%matplotlib inline` first: with matplotlib 3.8 the kernel's first figure otherwise shows as text only.
    cells.append(new_code_cell(f'%matplotlib inline\nimport matplotlib.pyplot as plt\n\n'
                               f'impl = infergrade.implementations("{topic}")\n'
                               f'ref = infergrade.reference("{topic}")  {frame["beside"]}',
                               metadata={"tags": ["experiment"]}))
    if hasattr(content, "SETUP"):  # the inputs every experiment may read: it calls none of the learner's functions
        shared = texts.code(topic, content.SETUP.strip(), lang)
        cells.append(new_code_cell(f"{frame['shared']}\n{shared}", metadata={"tags": ["experiment"]}))
    for intro, code in content.EXPERIMENTS:
        cells.append(new_markdown_cell(prose[f"experiments.{texts.experiment_key(intro)}"]))
        cells.append(new_code_cell(_guarded(topic, texts.code(topic, code.strip(), lang)),
                                   metadata={"tags": ["experiment"]}))
    if "closing" in prose:  # the chapter's completion standard: what the technique does not do
        cells.append(new_markdown_cell(f"{frame['does_not_do']}\n\n{prose['closing']}"))
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "infergrade": {"topic": topic, "lang": lang}})
    nbformat.validate(nb)
    return nb


def write(topic: str, out: Path, overwrite: bool = False, source: Path | None = None, lang: str | None = None) -> Path:
    """Write `<out>/<topic>.ipynb` in `lang` (default: this run's language); FileExistsError rather than overwrite
    a learner's work, or anything else in its place (a link, even one to nothing: replaced with `overwrite`, never
    followed, by `output.write_text`)."""
    path = out / f"{topic}.ipynb"
    if os.path.lexists(path) and not overwrite:
        raise FileExistsError(language.tr("{path} exists: it may hold your work (pass --force to replace it)",
                                          path=path))
    # ended as nbformat.write ends it; the name is the grader's, so a FIFO in its place is replaced too
    output.write_text(nbformat.writes(build(topic, source, lang)) + "\n", path, named=False)
    return path


def _setup(lang: str, warm_up: str) -> str:
    """The setup cell: start the checking process, its reports in the notebook's language whatever shell opens it;
    in Chinese, a font that draws the figures' Chinese."""
    cell = f'import grader.learner.notebooks as infergrade\n\ninfergrade.start(lang="{lang}")  {warm_up}'
    return cell + ("\ninfergrade.use_cjk_font()" if lang == "zh" else "")


def _summary(topic: str, name: str, lang: str) -> str:
    """A function's one-sentence summary in `lang` (the topic's catalog, beside its hints); English without one."""
    english = topic_registry.api(topic)[name][1]
    found = texts.entry(language.catalog(topic, lang), f"summaries.{name}") if lang != "en" else None
    return found["text"].strip() if found else english


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
