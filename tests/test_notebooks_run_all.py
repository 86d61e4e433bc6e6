""""Run All" in the student handout, where no reference is installed: every topic's notebook reaches its last cell
with nothing written, and with each single function written (the solution's, pasted into its cell, the stubs
elsewhere), every experiment drawing or saying in one sentence which unwritten function it waits for. One kernel
runs every variant of every topic, its namespace and history reset between them (a kernel and its imports cost
seconds, a variant about two); and no experiment reads a name that another experiment made (read from the code,
without a kernel)."""
import builtins
import importlib
import re
import symtable
import time

import nbformat
import pytest
from test_notebooks import NO_REFERENCE, RESET

from grader import topics
from grader.instructor.selftest import SOLUTIONS_DIR
from grader.learner.notebooks.build import SHARED, build
from grader.submission.notebook import stub_parts, units

nbclient = pytest.importorskip("nbclient", reason="the dev extra runs the notebooks")

PREAMBLE = {"plt", "impl", "ref", "infergrade"}  # what the notebook's own cells give every experiment
WAITS = re.compile(r"This experiment needs your (\S+), which is not written yet")
USES = re.compile(r"experiments use (?:your (.+)|none of your functions yet)$", re.MULTILINE)


def _free_names(code: str) -> set[str]:
    """The global names `code` reads and never binds at its top level: what it expects an earlier cell to make."""
    top = symtable.symtable(code, "<cell>", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    read, tables = set(), [top]
    while tables:
        table = tables.pop()
        tables += table.get_children()
        read |= {s.get_name() for s in table.get_symbols()
                 if s.is_referenced() and (table is top or s.is_global())}
    return read - bound - set(dir(builtins))


def test_free_names_are_the_names_a_cell_expects_from_another():
    code = "import torch\nx = [alloc.seq_len(s) for s in range(4)]\ndef f(a):\n    return model(a) + x\nf(torch)"
    assert _free_names(code) == {"alloc", "model"}


@pytest.mark.parametrize("topic", topics.all_topics())
def test_no_experiment_reads_what_another_experiment_made(topic):
    """An experiment skipped for an unwritten function makes nothing: the next one must not need it. The shared
    set-up runs none of the learner's functions, so it is never skipped."""
    content = importlib.import_module(f"grader.learner.notebooks.topics.{topic}")
    setup = getattr(content, "SETUP", "")
    assert _free_names(setup) <= {"plt"}, "the set-up may not use impl or ref: it would stop at an unwritten function"
    shared = PREAMBLE | {s.get_name() for s in symtable.symtable(setup, "<setup>", "exec").get_symbols()
                         if s.is_assigned() or s.is_imported()}
    for intro, code in content.EXPERIMENTS:
        assert _free_names(code) - shared == set(), intro.strip().splitlines()[0]


def _variant(topic: str, written: str | None) -> nbformat.NotebookNode:
    """The handout's notebook of `topic` with `written` (and the solution's module cell, which holds its helpers)
    pasted in, the stubs elsewhere; the check cells, which need the checking process, left out (test_notebooks.py
    runs them)."""
    nb = build(topic)
    solution = stub_parts(topic, SOLUTIONS_DIR / f"{topic}.py")
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if written and (f"{topic}.{written}" in tags or topic in tags):
            part = solution[written] if f"{topic}.{written}" in tags else solution[""]
            cell.source = part if f"{topic}.{written}" in tags else f"{cell.source.splitlines()[0]}\n{part}"
        if "setup" in tags:
            cell.source = "import grader.learner.notebooks as infergrade"
    nb.cells = [nbformat.v4.new_code_cell(RESET)] + [c for c in nb.cells if c.cell_type == "code"
                                                     and "check" not in c.metadata.get("tags", [])]
    return nb


def _first_line(cell) -> str:
    """The line that names a cell: an experiment's first inside its `with infergrade.experiment(...)`."""
    lines = cell.source.splitlines()
    return lines[1].strip() if lines[0].startswith("with infergrade.experiment(") and len(lines) > 1 else lines[0]


def _judge(topic: str, written: str | None, nb: nbformat.NotebookNode) -> list[str]:
    """What went wrong in one executed variant, as sentences."""
    name = f"{topic} with {written or 'nothing'} written"
    problems = [f"{name}: the cell {_first_line(c)!r} raised {o['ename']}: {o['evalue']}" for c in nb.cells
                for o in c.get("outputs", []) if o["output_type"] == "error"]
    stubbed = {unit for unit in units(topic) for c in nb.cells
               if f"{topic}.{unit}" in c.metadata.get("tags", []) and "NotImplementedError" in c.source}
    preamble, *experiments = [c for c in nb.cells if "experiment" in c.metadata.get("tags", [])]
    said = "".join(o.get("text", "") for o in preamble.outputs if o["output_type"] == "stream")
    used = USES.search(said)
    yours = set(used.group(1).split(", ")) if used and used.group(1) else set()
    if not used or yours != set(units(topic)) - stubbed:
        problems.append(f"{name}: the experiments say they use {said.strip()!r}, "
                        f"not the functions written ({sorted(set(units(topic)) - stubbed)})")
    for cell in experiments:
        text = "".join(o.get("text", "") for o in cell.outputs if o["output_type"] == "stream")
        drew = any("image/png" in o.get("data", {}) for o in cell.outputs)
        waits = WAITS.findall(text)
        if waits and not {w.split(".")[0] for w in waits} <= stubbed:
            problems.append(f"{name}: an experiment waits for {waits}, which is written")
        if not (drew or waits or cell.source.startswith(SHARED)):
            problems.append(f"{name}: the experiment {_first_line(cell)!r} neither drew nor said what "
                            f"it waits for: {text[-300:]!r}")
    return problems


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """One kernel for every topic's variants, as the handout's: the reference and the solutions cannot be imported
    in it. A variant starts from a reset namespace and history, so nothing of the one before it stays."""
    folder = tmp_path_factory.mktemp("run_all")
    folder.chmod(0o755)
    client = nbclient.NotebookClient(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(NO_REFERENCE)]),
                                     timeout=300, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(folder)}})
    with client.setup_kernel():
        client.execute_cell(client.nb.cells[0], 0)
        assert not [o for o in client.nb.cells[0].outputs if o["output_type"] == "error"]
        yield client


@pytest.mark.parametrize("topic", topics.all_topics())
def test_run_all_in_the_handout_reaches_the_last_cell_whatever_is_written(kernel, topic):
    """Nothing written, then each single function written: every variant runs to its last cell without an
    error, each experiment drawing or naming the unwritten function it waits for."""
    problems, start = [], time.monotonic()
    variants = [None] + units(topic)
    for written in variants:
        kernel.nb, began = _variant(topic, written), time.monotonic()
        for index, cell in enumerate(kernel.nb.cells):
            kernel.execute_cell(cell, index)
        problems += _judge(topic, written, kernel.nb)
        print(f"{topic} with {written or 'nothing'} written: {time.monotonic() - began:.1f} s")
    print(f"{topic}: {len(variants)} variants, {time.monotonic() - start:.1f} s in all")
    assert problems == [], "\n".join(problems)
