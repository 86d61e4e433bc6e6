"""`infergrade gradescope`: the autograder zip, and run_autograder run for real on a simulated /autograder tree.

Every results.json is validated against tests/gradescope_results.schema.json, written from Gradescope's
documented fields (its $comment names the source).
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

import jsonschema
import pytest

from grader import hints, language
from grader.instructor import pins
from grader.instructor.autograder import finalize
from grader.instructor.selftest import SOLUTIONS_DIR

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SAMPLING = (SOLUTIONS_DIR / "sampling.py").read_text()
MUTANT = (ROOT / "tests" / "mutants" / "sampling" / "top_p_drops_crossing_token.py").read_text()


def valid(doc: dict) -> dict:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
    assert errors == []
    return doc


@pytest.fixture(scope="module")
def autograder_zip():
    folder = Path(tempfile.mkdtemp(prefix="infergrade-gs-zip-"))
    out = folder / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "grader", "gradescope", out, "--topic", "sampling"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)  # this checkout's grader
    assert done.returncode == 0, done.stderr
    (folder / "said.txt").write_text(done.stdout)  # what the instructor is told: the total points to set
    yield out
    shutil.rmtree(folder, ignore_errors=True)


def unpack(autograder_zip: Path, root: Path) -> None:
    """Lay `root` out as Gradescope lays out /autograder: source/ (the zip) and run_autograder."""
    with zipfile.ZipFile(autograder_zip) as z:
        z.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):  # zipfile drops the permissions that unzip would keep
        (root / "source" / name).chmod(0o755)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")


@pytest.fixture(scope="module")
def zip_python(autograder_zip):
    """The interpreter of setup.sh's venv, without its downloads: this environment's packages (through a path in
    a .pth file, so not this checkout's editable install of infergrade) and the zip's source installed as setup.sh
    installs it. Nothing of the checkout that the zip leaves out (solutions/, tests/) is importable."""
    folder = Path(tempfile.mkdtemp(prefix="infergrade-gs-venv-"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder / "venv"], check=True, timeout=120)
    python = folder / "venv" / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    here = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (Path(purelib) / "infergrade-dependencies.pth").write_text("\n".join(here) + "\n")
    unpack(autograder_zip, folder / "autograder")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
                           "--no-build-isolation", "--no-index", folder / "autograder" / "source"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    yield python
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def autograder_root(autograder_zip, zip_python):
    root = Path(tempfile.mkdtemp(prefix="infergrade-gs-"))
    unpack(autograder_zip, root)
    (root / "submission").mkdir()
    yield root
    shutil.rmtree(root, ignore_errors=True)


def is_handout(python: Path, root: Path) -> bool:
    """Whether the zip's grader takes itself for the student handout (then it refuses `grade --hidden`)."""
    done = subprocess.run([python, "-c", "from grader.instructor import handout; print(handout.is_handout())"],
                          cwd=root / "source", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip() == "True"


@pytest.fixture
def grading_root(autograder_root, zip_python):
    """An /autograder tree whose grader grades with the hidden checks (it carries the reference, not the solutions)."""
    assert not is_handout(zip_python, autograder_root)
    return autograder_root


def run_autograder(root: Path, python: Path, files: dict[str, str], **env) -> tuple[subprocess.CompletedProcess,
                                                                                   dict]:
    for name, text in files.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_text(text)
    for path in [root, *root.rglob("*")]:  # a root grader's child runs as nobody and must read the submission
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0))
    environment = {**os.environ, "INFERGRADE_AUTOGRADER_ROOT": str(root), "INFERGRADE_PYTHON": str(python),
                   **env}
    done = subprocess.run([root / "run_autograder"], cwd=root, env=environment, capture_output=True, text=True,
                          timeout=300)
    results = root / "results" / "results.json"
    assert done.returncode == 0 and results.exists(), done.stdout + done.stderr
    return done, valid(json.loads(results.read_text()))


def test_the_zip_is_the_instructors_grader(autograder_root, zip_python):
    """Installed as setup.sh installs it, the zip's grader has its reference and hidden checks, and knows it."""
    for name in ("reference", "grader.checks.sampling.test_hidden"):
        done = subprocess.run([zip_python, "-c", f"import {name}"], cwd=autograder_root / "source", timeout=120)
        assert done.returncode == 0, name
    done = subprocess.run([zip_python, "-c", "import solutions"], cwd=autograder_root / "source", timeout=120,
                          capture_output=True)
    assert done.returncode != 0  # the zip leaves the model solutions out, and nothing here brings them back
    assert not is_handout(zip_python, autograder_root), "the zip's grader would refuse `grade --hidden`"


def test_the_zip_holds_the_two_scripts_at_its_root_and_the_grader_source(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as z:
        infos = {i.filename: i for i in z.infolist()}
        setup = z.read("setup.sh").decode()
        run = z.read("run_autograder").decode()
    for script in ("setup.sh", "run_autograder"):
        assert stat.S_IMODE(infos[script].external_attr >> 16) == 0o755
    names = set(infos)
    assert {"pyproject.toml", "README.md", "grader/cli.py", "grader/checks/sampling/test_hidden.py",
            "grader/instructor/autograder/finalize.py", "exercises/sampling.py", "reference/sampling.py"} <= names
    assert not [n for n in names if n.split("/")[0] in ("solutions", "tests") or "__pycache__" in n
                or n.endswith(".pyc")]
    for text in (setup, run):
        assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0
    # pinned: torch's CPU build first, then every runtime dependency of pyproject.toml and triton, as installed here
    torch_line = f"-m pip install torch=={pins.installed('torch')} --index-url https://download.pytorch.org/whl/cpu"
    assert torch_line in setup and pins.installed("torch").count(".") == 2
    for name in pins.requirements():
        assert f"{name}=={pins.installed(name)}" in setup
    assert "triton==" in setup and '-m pip install "$ROOT/source"' in setup
    assert "--hidden --format gradescope" in run and "--topic sampling" in run


def test_a_nested_solution_gets_full_marks_with_hidden_checks_after_publishing(grading_root, zip_python,
                                                                              autograder_zip):
    done, doc = run_autograder(grading_root, zip_python, {"upload/hw1/sampling.py": SAMPLING})
    assert "the one folder below it that does" in done.stderr
    assert doc["extra_data"]["infergrade_status"] == "completed" and doc["extra_data"]["mode"] == "hidden"
    assert doc["score"] == doc["extra_data"]["max_score"] == sum(t["max_score"] for t in doc["tests"]) > 0
    said = (autograder_zip.parent / "said.txt").read_text()  # the total `gradescope` told the instructor to set
    assert f"total points on Gradescope to {doc['score']:g} " in said, said
    assert all(t["status"] == "passed" for t in doc["tests"])
    visibility = {t["visibility"] for t in doc["tests"] if "hidden" in t["tags"]}
    assert visibility == {"after_published"}
    assert {t["visibility"] for t in doc["tests"] if "public" in t["tags"]} == {"visible"}
    assert doc["stdout_visibility"] == "hidden" and isinstance(doc["execution_time"], int)
    assert "leaderboard" not in doc
    assert [t["number"] for t in doc["tests"][:2]] == ["1.1", "1.2"]


def test_a_whole_handout_repository_is_graded_from_its_exercises_folder(grading_root, zip_python):
    """A GitHub submission uploads the student's whole repository, whose grader/ also holds topic-named modules."""
    stub = (ROOT / "exercises" / "sampling.py").read_text()
    _, doc = run_autograder(grading_root, zip_python, {"exercises/sampling.py": SAMPLING,
                                              "grader/learner/notebooks/topics/sampling.py": stub, "README.md": "hi\n"})
    assert doc["extra_data"]["infergrade_status"] == "completed"
    assert doc["score"] == doc["extra_data"]["max_score"] > 0


def test_a_misconception_is_explained_with_the_hint_to_read(grading_root, zip_python):
    _, doc = run_autograder(grading_root, zip_python, {"sampling.py": SAMPLING + "\n\n" + MUTANT})
    assert doc["extra_data"]["infergrade_status"] == "completed"
    assert 0 < doc["score"] < doc["extra_data"]["max_score"]
    caught = [t for t in doc["tests"] if "top_p_drops_crossing_token" in t["tags"]]
    assert caught and all(t["status"] == "failed" and t["score"] == 0 for t in caught)
    explanation = hints.explain("sampling", "top_p_drops_crossing_token").strip()
    for t in caught:
        assert explanation in t["output"] and "hint: infergrade hint sampling.top_p_filter" in t["output"]
    assert {t["visibility"] for t in caught} == {"visible", "after_published"}


def test_a_chinese_zip_grades_in_chinese_for_the_same_points(autograder_zip, zip_python):
    """`gradescope --lang zh`: what the student reads (titles, explanations, the hint line, the summary) is Chinese,
    the points are the English zip's."""
    folder = Path(tempfile.mkdtemp(prefix="infergrade-gs-zh-"))
    try:
        done = subprocess.run([sys.executable, "-m", "grader", "gradescope", folder / "zh.zip", "--topic", "sampling",
                               "--lang", "zh"], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr
        unpack(folder / "zh.zip", folder / "autograder")
        (folder / "autograder" / "submission").mkdir()
        _, doc = run_autograder(folder / "autograder", zip_python, {"sampling.py": SAMPLING + "\n\n" + MUTANT})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert doc["extra_data"]["infergrade_status"] == "completed" and 0 < doc["score"] < doc["extra_data"]["max_score"]
    said = (autograder_zip.parent / "said.txt").read_text()  # the English zip's total
    assert f"total points on Gradescope to {doc['extra_data']['max_score']:g} " in said
    assert re.fullmatch(r"[\d.]+/[\d.]+ 分（种子 \d+，含隐藏检查）", doc["output"]), doc["output"]
    assert all(re.search(r"[\u4e00-\u9fff]", t["name"]) for t in doc["tests"])  # every check's title
    language.choose("zh")
    try:
        explanation = hints.explain("sampling", "top_p_drops_crossing_token").strip()
    finally:
        language.choose(None)
    caught = [t for t in doc["tests"] if "top_p_drops_crossing_token" in t["tags"]]
    assert caught and all(explanation in t["output"] and "提示：infergrade hint sampling.top_p_filter" in t["output"]
                          for t in caught)


def test_a_module_that_does_not_import_says_where(grading_root, zip_python):
    broken = "def top_p_filter(logits, p):\n    return (\n"
    _, doc = run_autograder(grading_root, zip_python, {"sampling.py": broken})
    first = doc["tests"][0]
    assert first["name"] == "sampling: could not be graded" and first["status"] == "failed"
    assert "sampling.py, line" in first["output"]
    assert doc["score"] == 0 and all(t["status"] == "failed" for t in doc["tests"])


def test_a_grader_that_cannot_start_still_leaves_a_results_file_that_says_grading_failed(autograder_root, zip_python):
    _, doc = run_autograder(autograder_root, zip_python, {"sampling.py": SAMPLING},
                            INFERGRADE_PYTHON="/nonexistent/python")
    assert doc["score"] == 0 and doc["output"].startswith("Grading failed: the grader exited with code 127")
    assert "This is not your grade" in doc["output"]
    assert doc["extra_data"] == {"infergrade_status": "error", "exit_code": 127}
    assert [t["status"] for t in doc["tests"]] == ["failed"]


def test_a_run_past_the_time_limit_is_stopped_and_says_so(autograder_root, zip_python):
    _, doc = run_autograder(autograder_root, zip_python, {"sampling.py": SAMPLING}, INFERGRADE_TIME_LIMIT="1")
    assert "time limit of 1 s" in doc["output"]
    assert doc["extra_data"]["infergrade_status"] in ("error", "timeout")
    assert doc["extra_data"].get("max_score") != doc["score"] or doc["score"] == 0


def test_a_submission_that_hangs_is_stopped_at_the_time_limit_and_scores_only_what_finished(grading_root,
                                                                                           zip_python):
    hang = SAMPLING + "\n\ndef top_p_filter(logits, p):\n    import time\n    time.sleep(60)\n"
    _, doc = run_autograder(grading_root, zip_python, {"sampling.py": hang}, INFERGRADE_TIME_LIMIT="15")
    assert doc["output"].startswith(("Grading was stopped at the time limit of 15 s.", "Grading failed: grading ran "
                                     "past the time limit of 15 s"))  # (the second where startup took it all)
    assert "not a full grade" in doc["output"] or "not your grade" in doc["output"]
    assert doc["extra_data"]["infergrade_status"] in ("timeout", "error")
    assert doc["score"] < sum(t["max_score"] for t in doc["tests"]) or doc["score"] == 0


def test_finalize_keeps_a_usable_document_and_adds_a_leaderboard_only_when_asked(tmp_path):
    path = tmp_path / "results.json"
    doc = {"score": 3, "execution_time": 7, "output": "3/4", "tests": [{"name": "a", "score": 3, "max_score": 4}],
           "extra_data": {"infergrade_status": "completed"}}
    path.write_text(json.dumps(doc))
    assert finalize.finalize(str(path), 0, 540, None, leaderboard=False) == doc
    mask = os.umask(0o022)
    try:
        finalize.write(doc, str(path))
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # the umask's mode, as `grade --out` gives
    board = valid(finalize.finalize(str(path), 0, 540, None, leaderboard=True))["leaderboard"]
    assert board == [{"name": "Score", "value": 3}, {"name": "Grading time (s)", "value": 7, "order": "asc"}]
    for broken in ("{not json", json.dumps({"score": float("inf")}), json.dumps({"score": 1, "tests": [3]})):
        path.write_text(broken)
        failed = valid(finalize.finalize(str(path), 1, 540, None, leaderboard=True))
        assert failed["score"] == 0 and failed["output"].startswith("Grading failed") and "leaderboard" not in failed
