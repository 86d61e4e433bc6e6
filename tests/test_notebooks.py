"""Every topic's notebook executed with nbclient on a real kernel, with the solutions pasted in and as stubs;
a notebook graded as a submission without running it."""
import base64
import io
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from grader import topics
from grader.cli import main
from grader.learner.notebooks.build import SHARED, build
from grader.submission.notebook import from_notebook, stub_parts
from grader.learner.notebooks.inline import MIME
from grader.instructor.selftest import SOLUTIONS_DIR

nbclient = pytest.importorskip("nbclient", reason="the dev extra runs the notebooks")
image = pytest.importorskip("matplotlib.image")

WORKERS = 2
VARIANTS = ("solutions", "stubs")
MIN_PNG_SIDE = 200
FIGURES = Path(os.environ["INFERGRADE_FIGURES"]) if os.environ.get("INFERGRADE_FIGURES") else None  # keep them


RESET = "%reset -f"  # a fresh namespace and history (`In`, from which a check cell reads the learner's code)


def execute_in_one_kernel(notebooks: dict, folder: Path) -> dict:
    """Each of `notebooks` ({topic: notebook}) executed in turn on one kernel whose working folder is `folder`,
    each from a reset namespace and history: a kernel, its checking process and their imports of torch cost
    seconds, a notebook about as much."""
    client = nbclient.NotebookClient(nbformat.v4.new_notebook(), timeout=300, kernel_name="python3",
                                     allow_errors=True, resources={"metadata": {"path": str(folder)}})
    with client.setup_kernel():
        for nb in notebooks.values():
            client.nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(RESET)])
            client.execute_cell(client.nb.cells[0], 0)
            client.nb = nb
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
    return notebooks


def _execute(variant: str, notebooks: dict, out: Path) -> dict:
    """The notebooks of one variant executed on one kernel, saved with their figures."""
    folder = out / variant
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    for topic, nb in execute_in_one_kernel(notebooks, folder).items():
        nbformat.write(nb, str(folder / f"{topic}.ipynb"))
        for n, png in enumerate(_pngs(nb)):
            (FIGURES or out / "png").joinpath(f"{topic}-{variant}-{n}.png").write_bytes(png)
    return notebooks


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Every (topic, variant) notebook, executed with a kernel for each variant, the two side by side."""
    out = tmp_path_factory.mktemp("notebooks")
    (FIGURES or out / "png").mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    # Built here, one at a time: CPython 3.11 can raise "AST constructor recursion depth mismatch" when threads
    # parse at once (the builder reads the stubs with ast); the kernels then run side by side.
    built = {v: {t: build(t, SOLUTIONS_DIR / f"{t}.py" if v == "solutions" else None) for t in topics.all_topics()}
             for v in VARIANTS}
    with ThreadPoolExecutor(WORKERS) as pool:
        done = dict(zip(VARIANTS, pool.map(lambda v: _execute(v, built[v], out), VARIANTS)))
    print(f"\n{sum(map(len, built.values()))} notebooks executed in {time.monotonic() - start:.1f} s; figures in "
          f"{FIGURES or out / 'png'}")
    return {(t, v): nb for v, notebooks in done.items() for t, nb in notebooks.items()}


def _code(nb, tag: str):
    return [c for c in nb.cells if c.cell_type == "code" and tag in c.metadata.get("tags", [])]


def _pngs(nb) -> list[bytes]:
    return [base64.b64decode(o["data"]["image/png"]) for c in _code(nb, "experiment") for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]


def _errors(nb) -> list[str]:
    return [f"{c.source.splitlines()[0]}: {o['ename']}: {o['evalue']}" for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if o["output_type"] == "error"]


def _reports(nb) -> list[dict]:
    """The data of each check cell's report, one per check cell (None where it showed none)."""
    return [next((o["data"][MIME] for o in c.get("outputs", []) if MIME in o.get("data", {})), None)
            for c in _code(nb, "check")]


def _assert_figures(nb) -> None:
    shows = sum(c.source.count("plt.show()") for c in _code(nb, "experiment"))
    pngs = _pngs(nb)
    assert shows >= 1 and len(pngs) >= shows, f"{len(pngs)} figures for {shows} plt.show() calls"
    for png in pngs:
        pixels = image.imread(io.BytesIO(png))
        assert min(pixels.shape[:2]) >= MIN_PNG_SIDE, pixels.shape
        assert pixels[..., :3].std() > 0.02, "a blank figure"
        assert (pixels[..., :3] < 0.9).mean() > 0.005, "a nearly empty figure"


@pytest.mark.parametrize("topic", topics.all_topics())
def test_solutions_notebook_passes_its_checks_and_draws(executed, topic):
    nb = executed[(topic, "solutions")]
    assert _errors(nb) == []
    order = [t.split(".", 1)[1] for c in nb.cells for t in c.metadata.get("tags", []) if t.startswith(f"{topic}.")]
    reports = _reports(nb)
    assert reports and None not in reports
    for position, report in enumerate(reports):
        assert report["status"] == "completed", report
        here = order.index(report["target"].split(".", 1)[1])
        for check, status in report["statuses"].items():
            waits_for = report["waiting_for"].get(check, "").split(".")[0]
            later = waits_for in order and order.index(waits_for) > here
            assert status in ("passed", "skipped") or (status == "not_started" and later), (check, status)
    _assert_figures(nb)


@pytest.mark.parametrize("topic", topics.all_topics())
def test_stub_notebook_reports_not_started_and_runs_to_the_end(executed, topic):
    nb = executed[(topic, "stubs")]
    assert _errors(nb) == []
    reports = _reports(nb)
    assert reports and None not in reports
    for report in reports:
        assert report["statuses"] and set(report["statuses"].values()) == {"not_started"}, report
    _assert_figures(nb)  # drawn with the reference's functions


def test_a_notebook_is_graded_from_its_tagged_cells_without_running(tmp_path):
    marker = tmp_path / "ran"
    nb = build("kv_cache", SOLUTIONS_DIR / "kv_cache.py")
    nb.cells.append(nbformat.v4.new_code_cell(f"open({str(marker)!r}, 'w').write('ran')",
                                              metadata={"tags": ["experiment"]}))
    nb.cells.append(nbformat.v4.new_code_cell("raise SystemExit('not part of the submission')"))
    path = tmp_path / "kv_cache.ipynb"
    nbformat.write(nb, str(path))
    assert set(from_notebook(nb)) == {"kv_cache"}
    out = tmp_path / "results.json"
    result = CliRunner().invoke(main, ["grade", "--submission", str(path), "--topic", "kv_cache", "--seed", "3",
                                       "--out", str(out)], catch_exceptions=False)
    doc = json.loads(out.read_text())
    assert result.exit_code == 0 and doc["status"] == "completed"
    assert doc["score"] == doc["max_score"] > 0
    assert not marker.exists()


def test_a_stub_notebook_scores_zero_and_untagged_cells_are_ignored(tmp_path):
    nb = build("kv_cache")
    untagged = nbformat.v4.new_code_cell((SOLUTIONS_DIR / "kv_cache.py").read_text())
    nb.cells.append(untagged)  # a whole solution outside the tagged cells is not graded
    path = tmp_path / "stub.ipynb"
    nbformat.write(nb, str(path))
    out = tmp_path / "results.json"
    CliRunner().invoke(main, ["grade", "--submission", str(path), "--topic", "kv_cache", "--seed", "3",
                              "--out", str(out)], catch_exceptions=False)
    doc = json.loads(out.read_text())
    assert doc["status"] == "completed" and doc["score"] == 0
    assert {c["status"] for t in doc["topics"] for c in t["checks"]} == {"not_started"}


@pytest.mark.parametrize("text", ["{not json", '{"cells": [{"cell_type": "code", "metadata": []}], "nbformat": 4}',
                                  json.dumps(nbformat.v4.new_notebook())])
def test_a_broken_or_empty_notebook_is_bad_input(tmp_path, text):
    path = tmp_path / "broken.ipynb"
    path.write_text(text)
    result = CliRunner().invoke(main, ["check", "kv_cache", "--submission", str(path)])
    assert result.exit_code == 2


def test_the_notebook_command_writes_a_valid_notebook_and_keeps_work(tmp_path):
    run = CliRunner().invoke
    assert run(main, ["notebook", "speculative", "--out", str(tmp_path)]).exit_code == 0
    nb = nbformat.read(str(tmp_path / "speculative.ipynb"), as_version=4)
    nbformat.validate(nb)
    tagged = {t for c in nb.cells for t in c.metadata.get("tags", []) if t.startswith("speculative.")}
    assert tagged == {f"speculative.{name}" for name in topics.api("speculative") if "." not in name}
    assert run(main, ["notebook", "speculative", "--out", str(tmp_path)]).exit_code == 2  # the work stays
    assert run(main, ["notebook", "speculative", "--out", str(tmp_path), "--force"]).exit_code == 0
    assert run(main, ["notebook", "nope", "--out", str(tmp_path)]).exit_code == 2


def _lab_client(nb, folder: Path) -> "nbclient.NotebookClient":
    """A client that sends each cell's metadata and id with its execution request, as JupyterLab and Notebook 7
    do (nbclient itself sends neither)."""
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(folder)}})

    def send_metadata(cell, cell_index):
        def execute(code, store_history=True, stop_on_error=True):
            content = {"code": code, "silent": False, "store_history": store_history, "user_expressions": {},
                       "allow_stdin": False, "stop_on_error": stop_on_error}
            msg = client.kc.session.msg("execute_request", content, metadata={**cell.metadata, "cellId": cell.id})
            client.kc.shell_channel.send(msg)
            return msg["header"]["msg_id"]
        client.kc.execute = execute

    client.on_cell_execute = send_metadata
    return client


# Run after the experiments' `%matplotlib inline`: each figure's legend labels and titles, as plt.show() shows it.
FIGURE_TEXTS = """import json
shown = []
_show = plt.show
def _recording_show(*args, **kwargs):
    fig = plt.gcf()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    shown.append({"legend": [t.get_text() for legend in legends for t in legend.get_texts()],
                  "titles": [ax.get_title() for ax in fig.axes] + [fig.get_suptitle()]})
    return _show(*args, **kwargs)
plt.show = _recording_show"""


def test_the_module_cell_is_found_by_its_tag_and_figures_draw_the_reference_beside_yours(tmp_path):
    """Its first comment line changed, the module cell (which holds a helper top_p_filter calls) still counts, as
    it does in grading; the experiments, on the learner's functions, draw the reference's curves beside them."""
    nb = build("sampling", SOLUTIONS_DIR / "sampling.py")
    (module,) = _code(nb, "sampling")
    module.source = module.source.replace("# sampling module code", "# my imports and helpers", 1)
    assert "_prob_dtype" in module.source and "# sampling module code" not in module.source
    checks = _code(nb, "check")
    nb.cells = [c for c in nb.cells if c not in checks[:2] + checks[3:]]  # one check cell: top_p_filter's
    assert _code(nb, "check")[0].source == 'infergrade.check("sampling.top_p_filter")'
    first = nb.cells.index(_code(nb, "experiment")[0])
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell(FIGURE_TEXTS))
    nb.cells.append(nbformat.v4.new_code_cell("print(json.dumps(shown))"))
    tmp_path.chmod(0o755)
    _lab_client(nb, tmp_path).execute()
    (report,) = _reports(nb)
    assert report["status"] == "completed" and report["statuses"]
    assert set(report["statuses"].values()) <= {"passed", "not_started"} and "passed" in report["statuses"].values()
    figures = json.loads(nb.cells[-1].outputs[0]["text"])
    assert len(figures) == sum(c.source.count("plt.show()") for c in _code(nb, "experiment")) >= 3
    for figure in figures:
        assert any("reference" in label for label in figure["legend"]), figure
        assert any("your" in text for text in figure["legend"] + figure["titles"]), figure  # your / yours


# The handout's kernel: the repository's reference and solutions packages cannot be imported.
NO_REFERENCE = """import sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("reference", "solutions"):
            raise ImportError(f"{name} is not in the student handout")
sys.meta_path.insert(0, Absent())"""


def test_run_all_in_the_handout_draws_what_is_written_and_says_what_to_write_first(tmp_path):
    """No reference installed, sample not written: "Run All" (no errors allowed) reaches the last cell; the
    figures of the written functions draw and the one that needs sample says so in a sentence."""
    nb = build("sampling")
    written = stub_parts("sampling", SOLUTIONS_DIR / "sampling.py")
    for name in ("apply_temperature", "top_k_filter", "top_p_filter", "filtered_probs"):
        _code(nb, f"sampling.{name}")[0].source = written[name]
    (module,) = _code(nb, "sampling")
    module.source = f"# sampling module code\n{written['']}"
    # no checking process: no check cells
    _code(nb, "setup")[0].source = "import grader.learner.notebooks as infergrade"
    nb.cells = [nbformat.v4.new_code_cell(NO_REFERENCE)] + [c for c in nb.cells if c not in _code(nb, "check")]
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()  # raises on any error
    setup, *figures = [c for c in _code(nb, "experiment") if not c.source.startswith(SHARED)]  # not the inputs
    said = ["".join(o.get("text", "") for o in c.outputs if o["output_type"] == "stream") for c in figures]
    drawn = [any("image/png" in o.get("data", {}) for o in c.outputs) for c in figures]
    assert drawn == [True, True, False], said
    assert "sample" in said[2] and "not written" in said[2] and said[2].count("\n") == 1, said[2]
    assert "filtered_probs" in "".join(o.get("text", "") for o in setup.outputs)  # the experiments use yours


def test_the_notebook_command_starts_from_the_students_changed_file(tmp_path, monkeypatch):
    stub = (topics.EXERCISES_DIR / "speculative.py").read_text()
    written = stub_parts("speculative", SOLUTIONS_DIR / "speculative.py")["acceptance_rate"]
    (tmp_path / "exercises").mkdir()
    mine = tmp_path / "exercises" / "speculative.py"
    mine.write_text(stub.replace(stub_parts("speculative")["acceptance_rate"], written))
    monkeypatch.chdir(tmp_path / "exercises")  # found from where the student stands, as check finds it
    result = CliRunner().invoke(main, ["notebook", "speculative", "--out", str(tmp_path / "nb")])
    assert result.exit_code == 0 and str(mine) in result.output, result.output
    nb = nbformat.read(str(tmp_path / "nb" / "speculative.ipynb"), as_version=4)
    assert _code(nb, "speculative.acceptance_rate")[0].source == written
    assert _code(nb, "speculative.verify")[0].source == stub_parts("speculative")["verify"]
    mine.write_text(stub + "\ndef broken(:\n")
    result = CliRunner().invoke(main, ["notebook", "speculative", "--out", str(tmp_path / "nb"), "--force"])
    assert result.exit_code == 2 and "speculative.py" in result.output and "line" in result.output


def _check(id_: str, status: str, message: str = "") -> dict:
    return {"id": id_, "status": status, "points": 1, "title": id_, "message": message, "output": "",
            "misconception": None, "hint": f"sampling.{id_}", "function": f"sampling.{id_}"}


def test_a_check_report_shows_as_html_without_terminal_codes():
    import html
    import re

    from grader.learner.notebooks.inline import COLOURS, Report

    checks = [_check("top_p_filter", "failed", "expected [0.5 <= x] & y, got 1 < 2"), _check("sample", "not_started")]
    doc = {"topics": [{"id": "sampling", "score": 0, "max_score": 2, "status": "failed", "message": "",
                       "checks": checks}],
           "score": 0, "max_score": 2, "status": "completed", "error": None, "incomplete": None, "deadline": {}}
    shown = Report("sampling.top_p_filter", doc)._repr_mimebundle_()
    assert "\x1b" not in shown["text/html"] and "\x1b" not in shown["text/plain"]
    assert html.unescape(re.sub(r"<[^>]+>", "", shown["text/html"])) == shown["text/plain"]
    assert checks[0]["message"] in shown["text/plain"] and "&lt;" in shown["text/html"]  # the message, escaped
    assert f'<span style="color:{COLOURS[31]};">FAIL</span>' in shown["text/html"]  # click's red and yellow
    assert f'<span style="color:{COLOURS[33]};">NOT STARTED</span>' in shown["text/html"]


def test_notebooks_written_before_the_move_keep_their_import():
    """A notebook made before the learner's tools moved says `import grader.notebooks as infergrade`: the same
    functions answer it."""
    import grader.learner.notebooks as new
    import grader.notebooks as old

    assert old.__all__ == new.__all__
    assert all(getattr(old, name) is getattr(new, name) for name in new.__all__)
