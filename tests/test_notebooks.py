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
from grader.notebooks.build import build
from grader.notebooks.extract import from_notebook
from grader.notebooks.inline import MIME
from grader.selftest import SOLUTIONS_DIR

nbclient = pytest.importorskip("nbclient", reason="the dev extra runs the notebooks")
image = pytest.importorskip("matplotlib.image")

WORKERS = 2
VARIANTS = ("solutions", "stubs")
MIN_PNG_SIDE = 200
FIGURES = Path(os.environ["INFERGRADE_FIGURES"]) if os.environ.get("INFERGRADE_FIGURES") else None  # keep them


def _execute(topic: str, variant: str, nb: nbformat.NotebookNode, out: Path) -> nbformat.NotebookNode:
    folder = out / variant
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(folder)}}).execute()
    nbformat.write(nb, str(folder / f"{topic}.ipynb"))
    for n, png in enumerate(_pngs(nb)):
        (FIGURES or out / "png").joinpath(f"{topic}-{variant}-{n}.png").write_bytes(png)
    return nb


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Every (topic, variant) notebook, executed two at a time; the seconds it took in all."""
    out = tmp_path_factory.mktemp("notebooks")
    (FIGURES or out / "png").mkdir(parents=True, exist_ok=True)
    jobs = [(t, v) for t in topics.all_topics() for v in VARIANTS]
    start = time.monotonic()
    # Built here, one at a time: CPython 3.11 can raise "AST constructor recursion depth mismatch" when threads
    # parse at once (the builder reads the stubs with ast); the kernels then run two at a time.
    built = [build(t, SOLUTIONS_DIR / f"{t}.py" if v == "solutions" else None) for t, v in jobs]
    with ThreadPoolExecutor(WORKERS) as pool:
        done = dict(zip(jobs, pool.map(lambda job, nb: _execute(*job, nb, out), jobs, built)))
    print(f"\n{len(jobs)} notebooks executed in {time.monotonic() - start:.1f} s; figures in {FIGURES or out / 'png'}")
    return done


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
