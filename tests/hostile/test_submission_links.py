"""A submission that is, or passes through, a symbolic link, that lies inside the grader's own material, or that
holds a link is refused in plain words (exit 2), never graded at the link's target: `exercises -> ../solutions`
scored full marks, hidden checks included, through `grade`, the Classroom workflow and run_autograder.
Every entry is run as a real process of this checkout's grader."""
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from grader.submission.folder import BadInput, resolve_submission
from grader.sandbox import policy
from grader.instructor.selftest import SOLUTIONS_DIR
from test_gradescope_autograder import autograder_root, autograder_zip, grading_root, run_autograder, zip_python  # noqa: F401

REPO = Path(__file__).resolve().parents[2]
KV = (SOLUTIONS_DIR / "kv_cache.py").read_text()
ENV = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's grader, from any working folder


def infergrade(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=600)


def refused(done: subprocess.CompletedProcess, out: Path | None = None) -> bool:
    """Exit 2 with a message about a symbolic link, and (for `grade`) an error results file that scores nothing."""
    if out is not None:
        doc = json.loads(out.read_text())
        assert doc["status"] == "error" and doc["score"] == 0 and "symbolic link" in doc["error"]
    return done.returncode == 2 and "symbolic link" in done.stderr


@pytest.mark.parametrize("target", ["solutions", "reference"])
def test_an_exercises_folder_that_links_to_the_graders_material_is_refused(open_folder, target):
    (open_folder / "exercises").symlink_to(REPO / target)
    out = open_folder / "results.json"
    done = infergrade("grade", "--submission", "exercises", "--topic", "kv_cache", "--hidden", "--seed", 1,
                      "--out", out, cwd=open_folder)
    assert refused(done, out), done.stderr[-2000:]


def test_a_path_through_a_linked_folder_is_refused(open_folder):
    (open_folder / "repo").symlink_to(REPO)  # a student folder that is a link into the instructor's checkout
    done = infergrade("check", "kv_cache", "--submission", open_folder / "repo" / "solutions", cwd=open_folder)
    assert refused(done), done.stderr[-2000:]
    assert "passes through" in done.stderr


def test_watch_refuses_a_linked_folder(open_folder):
    (open_folder / "exercises").symlink_to(REPO / "solutions")
    proc = subprocess.Popen([sys.executable, "-m", "grader", "watch", "kv_cache", "--submission", "exercises"],
                            cwd=open_folder, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=240)  # refused at once; a watch that started would wait for edits
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2 and "symbolic link" in err, err[-2000:]


def test_a_notebook_that_is_a_link_is_refused(open_folder):
    (open_folder / "instructor").mkdir()
    answers = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(KV, metadata={"tags": ["kv_cache"]})])
    nbformat.write(answers, open_folder / "instructor" / "answers.ipynb")
    (open_folder / "hw.ipynb").symlink_to(Path("instructor") / "answers.ipynb")
    out = open_folder / "results.json"
    done = infergrade("grade", "--submission", "hw.ipynb", "--topic", "kv_cache", "--seed", 1, "--out", out,
                      cwd=open_folder)
    assert refused(done, out), done.stderr[-2000:]


def test_a_folder_holding_a_linked_helper_module_is_refused(open_folder):
    (open_folder / "kv_cache.py").write_text("from helper import *  # noqa\n")
    (open_folder / "helper.py").symlink_to(SOLUTIONS_DIR / "kv_cache.py")
    out = open_folder / "results.json"
    done = infergrade("grade", "--submission", open_folder, "--topic", "kv_cache", "--hidden", "--seed", 1,
                      "--out", out, cwd=open_folder)
    assert refused(done, out), done.stderr[-2000:]
    assert "helper.py" in done.stderr


def test_a_folder_inside_the_graders_material_is_refused(tmp_path, monkeypatch):
    """A folder below the reference, solutions, tests or package of the grader is never a submission (here a
    checkout made in a temporary folder stands for the grader's own)."""
    (tmp_path / "solutions" / "hw").mkdir(parents=True)
    (tmp_path / "solutions" / "hw" / "kv_cache.py").write_text(KV)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "kv_cache.py").write_text(KV)
    monkeypatch.setattr(policy, "REPO", tmp_path)
    assert resolve_submission(tmp_path / "mine")[0].given == (tmp_path / "mine").resolve()
    with pytest.raises(BadInput, match="grader's own"):
        resolve_submission(tmp_path / "solutions" / "hw")
    with pytest.raises(BadInput, match="grader's own"):
        resolve_submission(tmp_path / "solutions")  # the one folder below it that holds a module


def test_a_batch_student_holding_a_link_gets_an_error_row(open_folder):
    alice = open_folder / "class" / "alice"
    alice.mkdir(parents=True)
    (alice / "kv_cache.py").write_text("from helper import *  # noqa\n")
    (alice / "helper.py").symlink_to(SOLUTIONS_DIR / "kv_cache.py")
    out = open_folder / "out"
    infergrade("grade-batch", "class", "--out", out, "--topic", "kv_cache", "--public", "--seed", 1, "--jobs", 1,
               cwd=open_folder)
    doc = json.loads((out / "alice.json").read_text())
    assert doc["status"] == "error" and doc["score"] == 0 and "symbolic link" in doc["error"], doc.get("error")


def test_a_classroom_repository_whose_exercises_links_to_the_instructors_solutions_is_refused(open_folder):
    """The instructor workflow's own steps, run in its layout (instructor/ beside the class folder): the collect
    step does not take a repository's exercises/ that links to ../instructor/solutions (git keeps the link), and
    the grade step grades what it left, a note, as an error that scores nothing."""
    done = infergrade("init-ci", "--out", open_folder / "ci", cwd=open_folder)
    assert done.returncode == 0, done.stderr
    workflow = yaml.safe_load((open_folder / "ci/instructor/.github/workflows/infergrade-grade.yml").read_text())
    (collect,) = [s["run"] for s in workflow["jobs"]["collect"]["steps"] if s.get("name") == "Collect the submissions"]
    lines = [line.strip() for step in workflow["jobs"]["grade"]["steps"] for line in step.get("run", "").splitlines()
             if line.strip().startswith("infergrade grade-batch")]
    assert lines, "the workflow grades with `infergrade grade-batch`"
    (open_folder / "instructor").symlink_to(REPO)  # the instructor's checkout, as actions/checkout lays it out
    tools = open_folder / "bin"
    tools.mkdir()
    (tools / "gh").write_text('#!/bin/bash\n# gh repo clone REPO DIR: a repository whose exercises/ is a link\n'
                              'mkdir -p "$4" && ln -s ../instructor/solutions "$4/exercises"\n')
    (tools / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')  # the runner's: no site-packages
    for tool in ("gh", "python3"):
        (tools / tool).chmod(0o755)
    env = {**os.environ, "REPOSITORIES": "org/mallory", "REF": "", "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", collect], cwd=open_folder, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    collected = open_folder / "class" / "org--mallory"
    assert sorted(p.name for p in collected.iterdir()) == ["MISSING.txt"]
    assert "symbolic link" in (collected / "MISSING.txt").read_text()
    assert not [p for p in (open_folder / "class").rglob("*") if p.is_symlink()]
    args = shlex.split(lines[0].replace("$SEED", "1").replace("$SHARD", "1"))[1:]
    done = infergrade(*args, "--topic", "kv_cache", cwd=open_folder)
    doc = json.loads((open_folder / "shard-1" / "org--mallory.json").read_text())
    assert doc["status"] == "error" and doc["score"] == 0, done.stderr[-2000:]


def test_run_autograder_does_not_follow_an_exercises_link_to_the_reference(grading_root, zip_python):  # noqa: F811
    (grading_root / "submission" / "exercises").symlink_to(Path("..") / "source" / "reference")
    _, doc = run_autograder(grading_root, zip_python, {"README.md": "hi\n"})
    assert doc["score"] == 0 and doc["extra_data"]["infergrade_status"] == "error"
    assert "symbolic link" in doc["output"]


def test_normal_submissions_are_still_graded(open_folder, monkeypatch):
    """The usual paths still work: the checkout's exercises and solutions, and a folder in the temporary folder."""
    (open_folder / "kv_cache.py").write_text(KV)
    monkeypatch.chdir(REPO)
    for given, folder in ((Path("exercises"), REPO / "exercises"), (Path("solutions"), REPO / "solutions"),
                          (open_folder, open_folder)):
        assert resolve_submission(given)[0].given == folder.resolve()
    done = infergrade("check", "kv_cache", "--submission", open_folder, cwd=REPO)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
