"""Red team 4, finding 3: the grader writes through no link a student committed.

An instructor runs `infergrade grade --hidden` inside a student's repository, which holds a committed
`results.json -> ../gradebook.csv`: the results were written into the link's target (as root, any file), also
when the submission was refused for holding that link (the error document went the same way). The same held for
`--export`, for `notebook` (which followed a dangling link, and wrote into a link's target with `--force`) and for
the progress file. Each target here is a file outside the student's folder, and must stay as it was: the link
is replaced by the grader's file. `--out /dev/stdout` is different: the user named their own standard output,
which the shell may have redirected to a file; that file gets the results, /dev/stdout stays a link.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import output, progress
from grader.results import problems

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
GRADEBOOK = "student,score\nada,97\nbo,88\n"


def infergrade(*args, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, env=ENV, text=True,
                          timeout=600, **{"capture_output": True, **kwargs})


def student_repository(tmp_path: Path) -> tuple[Path, Path]:
    """A student's repository beside the instructor's gradebook: its exercises/ solve kv_cache."""
    gradebook = tmp_path / "gradebook.csv"
    gradebook.write_text(GRADEBOOK)
    repo = tmp_path / "student"
    (repo / "exercises").mkdir(parents=True)
    shutil.copy(REPO / "solutions" / "kv_cache.py", repo / "exercises" / "kv_cache.py")
    return repo, gradebook


def replaced_by_results(link: Path) -> dict:
    """The document now in `link`'s place, which must be a regular file."""
    assert not link.is_symlink() and link.is_file()
    doc = json.loads(link.read_text())
    assert problems(doc) == []
    return doc


def test_grade_hidden_in_a_student_repository_leaves_a_linked_target_untouched(tmp_path):
    repo, gradebook = student_repository(tmp_path)
    (repo / "results.json").symlink_to("../gradebook.csv")           # committed by the student
    done = infergrade("grade", "--hidden", "--topic", "kv_cache", "--seed", 1, cwd=repo)
    assert done.returncode == 0, done.stderr[-2000:]
    assert gradebook.read_text() == GRADEBOOK
    doc = replaced_by_results(repo / "results.json")
    assert doc["status"] == "completed" and doc["score"] == doc["max_score"] > 0


def test_a_refused_submission_writes_its_error_document_through_no_link(tmp_path):
    """The link in the submission folder gets it refused; its error document went into the link's target."""
    repo, gradebook = student_repository(tmp_path)
    (repo / "exercises" / "results.json").symlink_to(gradebook)
    done = infergrade("grade", "--hidden", "--topic", "kv_cache", "--seed", 1, cwd=repo / "exercises")
    assert done.returncode != 0 and "symbolic link" in done.stderr
    assert gradebook.read_text() == GRADEBOOK
    assert replaced_by_results(repo / "exercises" / "results.json")["status"] == "error"


def test_exports_and_out_replace_links_and_leave_their_targets(tmp_path):
    repo, gradebook = student_repository(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    targets = {name: outside / name for name in ("out.json", "junit.xml", "gradescope.json")}
    for name, target in targets.items():
        target.write_text(f"the instructor's {name}\n")
        (repo / name).symlink_to(target)
    (repo / "classroom.json").symlink_to(outside / "missing.json")   # a dangling link: nothing is created there
    done = infergrade("check", "kv_cache", "--out", "out.json", "--export", "junit=junit.xml",
                      "--export", "gradescope=gradescope.json", "--export", "classroom=classroom.json", cwd=repo)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {name: t.read_text() for name, t in targets.items()} == {n: f"the instructor's {n}\n" for n in targets}
    assert sorted(os.listdir(outside)) == sorted(targets)
    assert replaced_by_results(repo / "out.json")["status"] == "completed"
    for name in ("junit.xml", "gradescope.json", "classroom.json"):
        assert not (repo / name).is_symlink() and (repo / name).stat().st_size > 0


def test_notebook_follows_no_dangling_link(tmp_path):
    repo, _ = student_repository(tmp_path)
    planted = tmp_path / "elsewhere" / "planted.ipynb"
    planted.parent.mkdir()
    (repo / "sampling.ipynb").symlink_to(planted)
    done = infergrade("notebook", "sampling", cwd=repo)
    assert done.returncode != 0 and "--force" in done.stderr          # something is there: not replaced unasked
    assert not planted.exists()
    done = infergrade("notebook", "sampling", "--force", cwd=repo)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not planted.exists() and os.listdir(planted.parent) == []
    notebook = repo / "sampling.ipynb"
    assert not notebook.is_symlink() and json.loads(notebook.read_text())["metadata"]["infergrade"]["topic"] == \
        "sampling"


def test_notebook_force_replaces_a_link_and_leaves_its_target(tmp_path):
    repo, gradebook = student_repository(tmp_path)
    (repo / "sampling.ipynb").symlink_to(gradebook)
    done = infergrade("notebook", "sampling", "--force", cwd=repo)
    assert done.returncode == 0, done.stderr[-2000:]
    assert gradebook.read_text() == GRADEBOOK
    assert not (repo / "sampling.ipynb").is_symlink()


def test_the_progress_file_as_a_link_is_replaced_and_its_target_kept(tmp_path):
    """`hint` records the hint read in the submission folder's progress file (`check` refuses a folder holding a
    link before it records anything)."""
    repo, gradebook = student_repository(tmp_path)
    (repo / "exercises" / progress.FILE).symlink_to(gradebook)
    done = infergrade("hint", "kv_cache.kv_bytes_per_token", cwd=repo)
    assert done.returncode == 0, done.stderr[-2000:]
    assert gradebook.read_text() == GRADEBOOK
    assert not progress.path_for(repo / "exercises").is_symlink()
    assert progress.load(repo / "exercises")["hints"] == {"kv_cache.kv_bytes_per_token": 1}  # recorded in its place


def test_a_report_out_through_a_link_leaves_its_target(tmp_path):
    """`report --out` and the files of grade-batch's folder are written by the same writer."""
    _, gradebook = student_repository(tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    doc = json.loads(infergrade("grade", "--submission", REPO / "solutions", "--topic", "kv_cache", "--seed", 1,
                                "--out", "-", cwd=tmp_path).stdout)
    (results / "ada.json").write_text(json.dumps(doc))
    (results / "report.html").symlink_to(gradebook)
    done = infergrade("report", results, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert gradebook.read_text() == GRADEBOOK
    assert "<html" in (results / "report.html").read_text() and not (results / "report.html").is_symlink()


@pytest.mark.parametrize("redirect", ["w", "a"])
def test_out_dev_stdout_writes_into_the_shells_redirect(tmp_path, redirect):
    """`--out /dev/stdout > file` (or `>>`) puts the results, alone, in the file the shell opened, at its offset
    and in its mode: appended after what `>>` kept. /dev/stdout itself is never replaced."""
    log = tmp_path / "log"
    log.write_text("kept\n")
    with log.open(redirect) as stdout:
        done = infergrade("grade", "--submission", REPO / "solutions", "--topic", "kv_cache", "--seed", 1,
                          "--out", "/dev/stdout", cwd=tmp_path, capture_output=False, stdout=stdout,
                          stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr[-2000:]
    text = log.read_text()
    if redirect == "a":
        assert text.startswith("kept\n")
        text = text.removeprefix("kept\n")
    doc = json.loads(text)                                              # the results only: the summary is on stderr
    assert problems(doc) == [] and doc["score"] == doc["max_score"] > 0
    assert "kv_cache" in done.stderr
    assert os.path.islink("/dev/stdout") or not os.path.exists("/dev/stdout")


def test_a_link_elsewhere_named_like_a_descriptor_is_still_replaced(tmp_path):
    """Only the process's own descriptor names are written through (/dev/stdout, /dev/fd/N, /proc/self/fd/N),
    never a path that merely ends like one: a `dev/stdout` link in a student's folder is a link like any other."""
    log = tmp_path / "log"
    log.write_text("the instructor's\n")
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "stdout").symlink_to(log)
    output.write_text("{}\n", tmp_path / "dev" / "stdout")
    assert log.read_text() == "the instructor's\n"
    assert (tmp_path / "dev" / "stdout").read_text() == "{}\n" and not (tmp_path / "dev" / "stdout").is_symlink()


def test_a_link_to_a_character_device_in_a_students_folder_is_replaced(tmp_path):
    """A committed `results.json -> /dev/tty` (or, as root, a device such as /dev/port) is not written into."""
    (tmp_path / "results.json").symlink_to("/dev/null")
    output.write_text("{}\n", tmp_path / "results.json")
    assert (tmp_path / "results.json").read_text() == "{}\n" and not (tmp_path / "results.json").is_symlink()


def test_a_link_in_a_system_folder_is_refused_never_replaced():
    """/dev/stdin is a link in /dev and not an output: renamed over, /dev would hold a file in its place."""
    if not os.path.islink("/dev/stdin"):
        pytest.skip("/dev/stdin is not a link here")
    with pytest.raises(OSError, match="system folder"):
        output.write_text("{}\n", Path("/dev/stdin"))
    assert os.path.islink("/dev/stdin")
