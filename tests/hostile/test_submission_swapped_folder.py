"""A student who can write to their own folder while it is graded (a shared server, a home folder, NFS) swaps it, after
the link check, for a link to solutions/: the stub scored 105/105 in 7 runs of 7, its own hashes recorded; swapped
between the phases, the public checks graded the stub and the hidden ones the solutions. The grader now grades one
copy taken before any check; each swap here is made at a fixed point of the run, in the grading process itself."""
import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import grading
from grader.cli import main
from grader.engine import plugin
from grader.instructor.selftest import SOLUTIONS_DIR
from grader.topics import EXERCISES_DIR

STUB = (EXERCISES_DIR / "kv_cache.py").read_bytes()


@pytest.fixture
def student(tmp_path, monkeypatch):
    """A student's repository whose exercises/ holds the kv_cache stub, as the working folder."""
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "kv_cache.py").write_bytes(STUB)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    return tmp_path


def swap_folder(student: Path) -> None:
    """exercises/ becomes a link to the model solutions (the student's own files moved beside it)."""
    (student / "exercises").rename(student / "mine")
    (student / "exercises").symlink_to(SOLUTIONS_DIR)


def swap_file(student: Path) -> None:
    """exercises/kv_cache.py becomes a link to the model solution's."""
    (student / "exercises" / "kv_cache.py").unlink()
    (student / "exercises" / "kv_cache.py").symlink_to(SOLUTIONS_DIR / "kv_cache.py")


def graded(student: Path, hidden: bool) -> dict:
    """`infergrade grade` of exercises/ (kv_cache, seed 1), run in this process; its results document."""
    out = student / "results.json"
    args = ["grade", "--submission", "exercises", "--topic", "kv_cache", "--seed", "1", "--out", str(out)]
    done = CliRunner().invoke(main, args + (["--hidden"] if hidden else []))
    assert out.exists(), done.output
    return json.loads(out.read_text())


def swapped_before_the_checks(monkeypatch, swap) -> None:
    """Run `swap` once the submission has been checked and found, just before the checks start."""
    real = grading.run_checks

    def swap_then_run(*args, **kwargs):
        swap()
        return real(*args, **kwargs)
    monkeypatch.setattr(grading, "run_checks", swap_then_run)


def assert_the_stub_was_graded(doc: dict) -> None:
    assert doc["status"] == "completed" and doc["max_score"] > 0
    assert doc["score"] == 0, f"the swapped folder scored {doc['score']}/{doc['max_score']}"
    assert doc["submission"]["files"] == {"kv_cache.py": hashlib.sha256(STUB).hexdigest()}


@pytest.mark.parametrize("hidden", [False, True], ids=["public", "hidden"])
def test_a_folder_swapped_for_a_link_after_the_check_is_not_graded_as_the_link(student, monkeypatch, hidden):
    swapped_before_the_checks(monkeypatch, lambda: swap_folder(student))
    doc = graded(student, hidden)
    assert (student / "exercises").is_symlink()  # the swap was made
    assert_the_stub_was_graded(doc)


def test_a_folder_swapped_between_the_public_and_the_hidden_checks(student, monkeypatch):
    """At the first hidden check the folder is swapped and the topic's sandbox rebuilt (as after a check that broke
    it): the hidden checks still grade the stub."""
    real = plugin.ScorePlugin.pytest_runtest_setup
    done = []

    @pytest.hookimpl(tryfirst=True)
    def swap_at_the_hidden_phase(self, item):
        if not done and item.stash[plugin.RESULT_KEY].visibility == "hidden":
            done.append(item.nodeid)
            swap_folder(student)
            for sandbox in list(self.pool.sandboxes.values()):
                self.pool._close_sandbox(sandbox)
        return real(self, item)
    monkeypatch.setattr(plugin.ScorePlugin, "pytest_runtest_setup", swap_at_the_hidden_phase)
    doc = graded(student, hidden=True)
    assert done and (student / "exercises").is_symlink()
    assert_the_stub_was_graded(doc)


def test_a_file_swapped_for_a_link_after_the_check_is_not_graded_nor_hashed_as_the_link(student, monkeypatch):
    swapped_before_the_checks(monkeypatch, lambda: swap_file(student))
    doc = graded(student, hidden=True)
    assert (student / "exercises" / "kv_cache.py").is_symlink()
    assert_the_stub_was_graded(doc)


def test_a_watched_folder_swapped_for_a_link_is_refused_at_the_next_check(student):
    """`watch` re-checks the folder on every save, each time from a copy of its own taken without following a link."""
    from grader.learner.select_checks import check_units

    folder = (student / "exercises").resolve()  # as `watch` holds it
    first = check_units(folder, "kv_cache", None)
    assert first["status"] == "completed" and first["score"] == 0 < first["max_score"]
    swap_folder(student)
    again = check_units(folder, "kv_cache", None)
    assert again["score"] == 0, f"the swapped folder scored {again['score']}/{again['max_score']}"
    assert again["status"] == "error" and "symbolic link" in again["error"]
