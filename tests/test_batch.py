"""`infergrade grade-batch` and `infergrade report`, run for real: a class with good, broken and hostile
submissions and archives, the CSV, --resume, and the HTML report opened in headless Chromium."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from grader.results import problems
from grader.sandbox.policy import REPO

SAMPLING = (REPO / "solutions" / "sampling.py").read_text()
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
    """A class of nine, graded once on sampling's public checks; (class folder, out folder, the first run)."""
    root = tmp_path_factory.mktemp("class")
    (root / "class").mkdir()
    for name, source in (("ada", SAMPLING), ("bo", SAMPLING + MUTANT), ("cy", SAMPLING + MUTANT),
                         ("di", "def top_p_filter(:\n"), ("ed", "import os\nos._exit(3)\n")):
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
    docs = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    assert sorted(docs) == ["ada", "bo", "cy", "di", "ed", "fay", "gus", "hal", "ivy"]
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
    assert rows["gus"]["status"] == "error"


def test_resume_skips_what_was_graded_with_the_same_seed_and_files(graded):
    root, out, _ = graded
    before = (out / "ada.json").stat().st_mtime_ns
    (root / "class" / "bo" / "sampling.py").write_text(SAMPLING)       # bo fixed the bug since
    again = infergrade("grade-batch", root / "class", "--out", out, "--topic", "sampling", "--public", "--seed", 7,
                       "--resume", cwd=root)
    assert "4 already graded" in again.stderr           # ada, cy, di, ed: folders, unchanged; not bo, nor archives
    assert (out / "ada.json").stat().st_mtime_ns == before
    bo = json.loads((out / "bo.json").read_text())
    assert bo["score"] == bo["max_score"]


def test_a_folder_without_submissions_is_a_usage_error(tmp_path):
    result = infergrade("grade-batch", tmp_path, "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2 and "no submission" in result.stderr


def test_the_report_leads_with_the_misconception_the_class_shares(graded, tmp_path):
    _, out, _ = graded
    result = infergrade("report", out, "--out", tmp_path / "report.html", cwd=tmp_path)
    assert result.returncode == 0
    page = (tmp_path / "report.html").read_text()
    docs = [json.loads(p.read_text()) for p in out.glob("*.json")]
    graded = [d for d in docs if d["topics"] and d["topics"][0]["checks"]]      # the bad archives were not
    showed = [d for d in graded if any(c["misconception"] == "top_p_drops_crossing_token"
                                       for c in d["topics"][0]["checks"])]
    assert len(showed) >= 1 and len(graded) == 7
    assert result.stdout.startswith(f"{round(100 * len(showed) / 7)}% of the class ({len(showed)} of 7) showed "
                                    f"sampling: top_p_drops_crossing_token")
    headline = page.index('id="headline"')
    assert headline < page.index("top_p_drops_crossing_token") < page.index('id="checks"')
    assert page.count("data:image/png;base64,") == 2


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
