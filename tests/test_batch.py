"""`infergrade grade-batch` and `infergrade report`, run for real: a class with good, broken and hostile
submissions and archives, the CSV, the class's seed in OUT/batch.json, --resume, and the HTML report opened in
headless Chromium."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

from grader.results import problems
from grader.sandbox.policy import REPO

SAMPLING = (REPO / "solutions" / "sampling.py").read_text()
STUB = (REPO / "exercises" / "sampling.py").read_text()
MUTANT = (REPO / "tests" / "mutants" / "sampling" / "top_p_drops_crossing_token.py").read_text()


def infergrade(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def zip_with(path: Path, files: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A class of ten, graded once on sampling's public checks; (class folder, out folder, the first run)."""
    root = tmp_path_factory.mktemp("class")
    (root / "class").mkdir()
    for name, source in (("ada", SAMPLING), ("bo", SAMPLING + MUTANT), ("cy", SAMPLING + MUTANT),
                         ("di", "def top_p_filter(:\n"), ("ed", "import os\nos._exit(3)\n"), ("jo", STUB)):
        (root / "class" / name).mkdir()
        (root / "class" / name / "sampling.py").write_text(source)
    zip_with(root / "class" / "fay.zip", {"fay/exercises/sampling.py": SAMPLING})    # nested one level down
    zip_with(root / "class" / "gus.zip", {"../../escaped.py": SAMPLING, "sampling.py": SAMPLING})
    with tarfile.open(root / "class" / "hal.tar.gz", "w:gz") as t:
        link = tarfile.TarInfo("sampling.py")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(link)
    info = tarfile.TarInfo("sampling.py")
    data = SAMPLING.encode()
    info.size = len(data)
    with tarfile.open(root / "class" / "ivy.tgz", "w:gz") as t:
        t.addfile(info, io.BytesIO(data))
    out = root / "out"
    first = infergrade("grade-batch", root / "class", "--out", out, "--topic", "sampling", "--public", "--seed", 7,
                       "--jobs", 2, cwd=root)
    return root, out, first


def test_every_submission_gets_a_valid_results_file_and_a_row(graded):
    root, out, first = graded
    assert first.returncode == 1, first.stderr                    # some submissions could not be graded
    docs = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json") if p.name != "batch.json"}
    assert sorted(docs) == ["ada", "bo", "cy", "di", "ed", "fay", "gus", "hal", "ivy", "jo"]
    assert all(problems(doc) == [] for doc in docs.values())
    full = docs["ada"]["max_score"]
    assert full > 0 and docs["ada"]["score"] == docs["fay"]["score"] == docs["ivy"]["score"] == full
    assert 0 < docs["bo"]["score"] < full
    assert docs["di"]["score"] == docs["ed"]["score"] == 0 and docs["di"]["status"] == "completed"
    for bad in ("gus", "hal"):
        assert docs[bad]["status"] == "error" and bad in docs[bad]["error"]
    assert not (root / "escaped.py").exists() and not any(root.parent.glob("escaped.py"))
    with (out / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == sorted(docs)
    assert float(rows["ada"]["sampling"]) == float(rows["ada"]["total"]) == full
    assert rows["ada"]["status"] == "completed" and rows["ada"]["reason"] == ""
    for bad in ("gus", "hal"):                            # not 0/0: the maximum stays, with the status and why
        assert rows[bad]["status"] == "error" and float(rows[bad]["max"]) == full
        assert rows[bad]["sampling"] == rows[bad]["total"] == ""   # no score: an average must not count a zero
        assert bad in rows[bad]["reason"] and str(root) not in rows[bad]["reason"]  # no path of this machine
    assert {row["seed"] for row in rows.values()} == {"7"}
    assert rows["fay"]["graded_path"] == "fay/exercises" and rows["ada"]["graded_path"] == "."
    shipped = {name for name in rows if rows[name]["similar_to"] == "sampling: the shipped solutions"}
    assert {"ada", "fay", "ivy"} <= shipped and float(rows["ada"]["similarity"]) >= 0.9  # copies of the solution
    assert rows["jo"]["similarity"] in ("", "0.00") or float(rows["jo"]["similarity"]) < 0.7  # the untouched stub
    assert rows["gus"]["similarity"] == ""                                                  # nothing graded
    with (out / "grades.csv").open() as f:
        header = next(csv.reader(f))
    assert header[:4] == ["student", "sampling", "total", "max"]
    assert header[4:] == ["status", "reason", "seed", "graded_path", "similarity", "similar_to"]


def test_the_output_folder_records_the_class_seed(graded):
    _, out, _ = graded
    manifest = json.loads((out / "batch.json").read_text())
    assert (manifest["seed"], manifest["mode"], manifest["topics"]) == (7, "public", ["sampling"])
    assert manifest["max_scores"]["sampling"] == json.loads((out / "ada.json").read_text())["max_score"]


def test_another_seed_into_the_same_folder_is_refused(graded):
    root, out, _ = graded
    before = (out / "grades.csv").read_bytes()
    refused = infergrade("grade-batch", root / "class", "--out", out, "--seed", 8, cwd=root)
    assert refused.returncode == 2 and "seed 7" in refused.stderr and "--seed 8" in refused.stderr
    assert (out / "grades.csv").read_bytes() == before
    other_mode = infergrade("grade-batch", root / "class", "--out", out, "--hidden", cwd=root)
    assert other_mode.returncode == 2 and "public" in other_mode.stderr


def test_resume_skips_what_was_graded_with_the_same_seed_and_files(graded):
    root, out, _ = graded
    before = (out / "ada.json").stat().st_mtime_ns
    archived = (out / "fay.json").stat().st_mtime_ns
    (root / "class" / "bo" / "sampling.py").write_text(SAMPLING)       # bo fixed the bug since
    again = infergrade("grade-batch", root / "class", "--out", out, "--resume", cwd=root)  # seed, topics: OUT's
    assert "seed 7 (from batch.json)" in again.stderr and "public checks of sampling" in again.stderr
    assert f"{len(os.sched_getaffinity(0))} at once" in again.stderr   # --jobs: the cores available
    assert "7 already graded" in again.stderr      # ada, cy, di, ed, jo (folders) and fay, ivy (archives), unchanged;
    assert (out / "ada.json").stat().st_mtime_ns == before                # not bo, nor gus and hal (errors)
    bo = json.loads((out / "bo.json").read_text())
    assert bo["score"] == bo["max_score"]
    assert (out / "fay.json").stat().st_mtime_ns == archived       # an archive whose files are unchanged is kept


def test_a_folder_without_submissions_is_a_usage_error(tmp_path):
    result = infergrade("grade-batch", tmp_path, "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2 and "no submission" in result.stderr


def test_the_report_leads_with_the_misconception_the_class_shares(graded, tmp_path):
    _, out, _ = graded
    result = infergrade("report", out, "--out", tmp_path / "report.html", cwd=tmp_path)
    assert result.returncode == 0
    page = (tmp_path / "report.html").read_text()
    docs = [json.loads(p.read_text()) for p in out.glob("*.json") if p.name != "batch.json"]
    graded = [d for d in docs if d["topics"] and d["topics"][0]["checks"]]      # the bad archives were not
    showed = [d for d in graded if any(c["misconception"] == "top_p_drops_crossing_token"
                                       for c in d["topics"][0]["checks"])]
    assert len(showed) >= 1 and len(graded) == 8
    assert result.stdout.startswith(f"{round(100 * len(showed) / 8)}% of the class ({len(showed)} of 8) showed "
                                    f"sampling: top_p_drops_crossing_token")
    headline = page.index('id="headline"')
    assert headline < page.index("top_p_drops_crossing_token") < page.index('id="checks"')
    assert page.count("data:image/png;base64,") == 2
    lost = page[page.index('id="ungradable"'):page.index("</table>", page.index('id="ungradable"'))]
    assert "<td>gus</td>" in lost and "<td>hal</td>" in lost and "<td>ada</td>" not in lost
    students = page[page.index('id="students"'):page.index("</table>", page.index('id="students"'))]
    assert "<td>cy</td>" in students and "<td>ada</td>" not in students and "top_p_drops_crossing_token" in students


def test_the_anonymous_report_names_no_student(graded, tmp_path):
    _, out, _ = graded
    result = infergrade("report", out, "--anonymous", cwd=tmp_path)
    assert result.returncode == 0
    page = (out / "report-anonymous.html").read_text()
    names = [p.stem for p in out.glob("*.json") if p.name != "batch.json"]
    assert len(names) == 10 and not [n for n in names if f">{n}<" in page]
    assert "gus.zip" not in page and "hal.tar.gz" not in page              # the reasons name the uploads
    assert "top_p_drops_crossing_token" in page and 'id="students"' not in page


def test_the_check_table_leads_with_the_most_failed_and_counts_stubs_apart(graded):
    _, out, _ = graded
    from grader.instructor import report

    docs = report.load(out)
    rates = report.pass_rates(docs)
    failed = [r.failed for r in rates]
    assert failed == sorted(failed, reverse=True) and failed[0] > 0
    stubbed = {c["id"] for c in docs["jo"]["topics"][0]["checks"] if c["status"] == "not_started"}
    assert stubbed and all(r.not_started >= 1 for r in rates if r.id in stubbed)
    for r in rates:                                 # a stub is not a failure: each outcome is counted once
        ran = [c for d in docs.values() for t in d["topics"] for c in t["checks"] if c["id"] == r.id]
        assert r.failed == sum(c["status"] in ("failed", "error", "timeout") for c in ran)
        assert r.passed + r.failed + r.not_started <= r.students == len(ran)


def test_the_report_warns_about_mixed_seeds(graded, tmp_path):
    _, out, _ = graded
    for name, seed in (("ada", 7), ("bo", 8)):
        doc = json.loads((out / f"{name}.json").read_text())
        (tmp_path / f"{name}.json").write_text(json.dumps(doc | {"seed": seed}))
    result = infergrade("report", tmp_path, cwd=tmp_path)
    assert result.returncode == 0 and "7" in result.stderr and "8" in result.stderr and "seed" in result.stderr
    assert 'id="warning"' in (tmp_path / "report.html").read_text()
    single = infergrade("report", out, "--out", tmp_path / "one.html", cwd=tmp_path)
    assert "seed" not in single.stderr and 'id="warning"' not in (tmp_path / "one.html").read_text()


def test_help_list_hint_and_the_batch_parent_import_no_torch(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "x.zip").write_text("not a zip")             # graded (refused) by a worker
    script = textwrap.dedent(f"""
        import sys
        from click.testing import CliRunner
        from grader.cli import main
        for args in (["--help"], ["list"], ["hint", "sampling.top_p_filter", "--submission", {str(tmp_path)!r}],
                     ["grade-batch", {str(tmp_path / "class")!r}, "--out", {str(tmp_path / "out")!r}, "--public",
                      "-t", "sampling"]):
            result = CliRunner().invoke(main, args)
            print(args[0], result.exit_code, "torch" in sys.modules)
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ran = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert ran.stdout.split("\n")[:4] == ["--help 0 False", "list 0 False", "hint 0 False", "grade-batch 1 False"], \
        ran.stdout + ran.stderr
    with (tmp_path / "out" / "grades.csv").open() as f:
        (row,) = csv.DictReader(f)
    assert row["status"] == "error" and float(row["max"]) > 0         # the worker read the maximum


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it as root)")
def test_the_report_renders_in_a_browser(graded, tmp_path):
    _, out, _ = graded
    report = tmp_path / "report.html"
    infergrade("report", out, "--out", report, cwd=tmp_path)
    browser = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--virtual-time-budget=5000"]
    dom = subprocess.run([*browser, "--dump-dom", report.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    rendered = [int(v) for v in __import__("re").findall(r'data-rendered="(\d+)"', dom)]
    assert len(rendered) == 2 and all(width > 100 for width in rendered)   # both PNGs decoded by the browser
    assert "showed sampling: top_p_drops_crossing_token" in dom
    shot = tmp_path / "report.png"
    subprocess.run([*browser, f"--screenshot={shot}", "--window-size=1200,1600", report.as_uri()],
                   capture_output=True, timeout=120)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)                                # [H, W, channels]
    assert pixels.shape[0] == 1600 and len({tuple(p) for p in pixels.reshape(-1, pixels.shape[-1])[::97]}) > 20
    print(f"report screenshot: {shot}")


def test_a_name_that_starts_like_a_formula_is_text_in_grades_csv():
    from grader.instructor.grades import _cell

    assert [_cell(n) for n in ("=HYPERLINK(1)", "+1", "@x", "ada")] == ["'=HYPERLINK(1)", "'+1", "'@x", "ada"]


def test_a_linked_entry_gets_an_error_row_naming_the_link_and_is_never_followed(tmp_path):
    """A class folder's links (to a classmate's folder, to an archive elsewhere, to nothing) were dropped: the student
    had no row at all in grades.csv. Each now gets an error row that names the link; none is graded nor unpacked."""
    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "class" / "ada" / "sampling.py").write_text(SAMPLING)
    (tmp_path / "elsewhere").mkdir()
    zip_with(tmp_path / "elsewhere" / "answers.zip", {"sampling.py": SAMPLING})
    (tmp_path / "class" / "bo").symlink_to("ada")                                 # a classmate's folder
    (tmp_path / "class" / "cy.zip").symlink_to(tmp_path / "elsewhere" / "answers.zip")
    (tmp_path / "class" / "di").symlink_to("nowhere")                             # dangling
    out = tmp_path / "out"
    done = infergrade("grade-batch", tmp_path / "class", "--out", out, "--topic", "sampling", "--public", "--seed", 3,
                      "--jobs", 1, cwd=tmp_path)
    assert done.returncode == 1, done.stderr                 # some submissions could not be graded
    with (out / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == ["ada", "bo", "cy", "di"]
    full = json.loads((out / "ada.json").read_text())["max_score"]
    assert rows["ada"]["status"] == "completed" and float(rows["ada"]["total"]) == full > 0
    for name, target in (("bo", "ada"), ("cy", str(tmp_path / "elsewhere" / "answers.zip")), ("di", "nowhere")):
        doc = json.loads((out / f"{name}.json").read_text())
        assert problems(doc) == [] and doc["status"] == "error" and doc["score"] == 0
        assert doc["submission"]["files"] == {}  # nothing was read through the link
        assert "symbolic link" in doc["error"] and repr(target) in doc["error"], doc["error"]
        assert rows[name]["status"] == "error" and float(rows[name]["max"]) == full


def test_a_class_of_archives_interrupted_is_resumed_without_regrading_what_was_done(tmp_path):
    """An LMS export is all archives: Ctrl-C after the first, then --resume grades only the rest."""
    import signal
    import time

    klass = tmp_path / "class"
    klass.mkdir()
    for name in ("ann", "bob", "cy"):
        zip_with(klass / f"{name}.zip", {f"{name}/sampling.py": SAMPLING})
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.Popen([sys.executable, "-m", "grader", "grade-batch", str(klass), "--out", str(out), "--topic",
                            "sampling", "--public", "--seed", "5", "--jobs", "1"], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not (out / "ann.json").exists() and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.1)
        assert (out / "ann.json").exists(), "ann was never graded"
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 130, stderr
    graded = json.loads((out / "ann.json").read_text())
    kept = (out / "ann.json").stat().st_mtime_ns
    again = infergrade("grade-batch", klass, "--out", out, "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "1 already graded" in again.stderr and (out / "ann.json").stat().st_mtime_ns == kept
    assert json.loads((out / "ann.json").read_text()) == graded
    with (out / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert {r["status"] for r in rows.values()} == {"completed"} and rows["bob"]["graded_path"] == "bob"
