"""Every file the grader copies into the sandbox is recorded: a `kv_cache.py` importing `impl/real_kv_cache.py`
scored full marks with its helper unhashed, and `grade-batch --resume` took a changed helper for the graded one."""
import hashlib
import os

from grader.instructor import batch
from grader.grading import grade
from grader.submission.folder import resolve_submission
from grader.results import problems
from grader.sandbox import mounts
from grader.instructor.selftest import SOLUTIONS_DIR

KV = (SOLUTIONS_DIR / "kv_cache.py").read_text()


def with_helper(folder):
    """A submission whose kv_cache.py only re-exports a helper module one folder down."""
    (folder / "impl").mkdir(parents=True)
    (folder / "impl" / "__init__.py").write_text("")
    (folder / "impl" / "real_kv_cache.py").write_text(KV)
    (folder / "kv_cache.py").write_text("from impl.real_kv_cache import *  # noqa: F401,F403\n")
    return folder


def test_a_helper_module_in_a_subfolder_is_hashed(open_folder):
    with_helper(open_folder)
    doc = grade(open_folder, ["kv_cache"], hidden=False, seed=0, with_progress=False)
    assert problems(doc) == [] and doc["score"] == doc["max_score"] > 0  # graded from the helper
    assert set(doc["submission"]["files"]) == {"kv_cache.py", "impl/__init__.py", "impl/real_kv_cache.py"}
    helper = hashlib.sha256((open_folder / "impl" / "real_kv_cache.py").read_bytes()).hexdigest()
    assert doc["submission"]["files"]["impl/real_kv_cache.py"] == helper


def test_resume_regrades_a_submission_whose_helper_changed(open_folder):
    alice = with_helper(open_folder / "class" / "alice")
    result = open_folder / "alice.json"
    batch.write_results(grade(alice, ["kv_cache"], hidden=False, seed=1, with_progress=False), result)
    assert batch.already_graded(alice, result, hidden=False, seed=1)
    (alice / "impl" / "real_kv_cache.py").write_text(KV + "\n# changed after grading\n")
    assert not batch.already_graded(alice, result, hidden=False, seed=1)


def test_resume_skips_an_unchanged_submission_graded_from_a_folder_below(open_folder):
    bob = open_folder / "class" / "bob"
    (bob / "upload").mkdir(parents=True)
    (bob / "upload" / "kv_cache.py").write_text(KV)
    result = open_folder / "bob.json"
    with resolve_submission(bob)[0] as graded:  # as grade-batch finds it: upload/, the one folder below with modules
        batch.write_results(grade(graded, ["kv_cache"], hidden=False, seed=1, with_progress=False), result)
    assert batch.already_graded(bob, result, hidden=False, seed=1)


def test_a_tree_of_empty_folders_is_walked_only_as_far_as_the_entry_budget(tmp_path, monkeypatch):
    """Found: 100,000 empty folders beside kv_cache.py cost 10.8 s per check, walked to the end each time although
    none holds a file. A folder walked now counts as an entry of SUBMISSION_FILES, and the walk stops there."""
    (tmp_path / "kv_cache.py").write_text(KV)
    for i in range(mounts.SUBMISSION_FILES + 500):
        (tmp_path / "junk" / f"{i:05}").mkdir(parents=True)
    walked = []
    real_scandir = os.scandir

    def counting_scandir(folder):
        walked.append(folder)
        return real_scandir(folder)

    monkeypatch.setattr(mounts.os, "scandir", counting_scandir)
    assert taken(tmp_path) == ["kv_cache.py"]
    assert len(walked) <= mounts.SUBMISSION_FILES + 1


def taken(folder) -> list[str]:
    """The relative paths mounts.submission_entries takes of `folder`, in copy order."""
    top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return [relative for relative, *_ in mounts.submission_entries(top)]
    finally:
        os.close(top)


def counted_lstat(monkeypatch) -> list:
    """The names mounts.submission_entries looks at (an lstat each), as they are looked at."""
    looked = []
    real_stat = os.stat

    def counting_stat(path, *args, **kwargs):
        looked.append(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(mounts.os, "stat", counting_stat)
    return looked


def test_a_folder_of_many_files_is_looked_at_only_as_far_as_the_entry_budget(tmp_path, monkeypatch):
    """Found: the walk stopped taking files at the budget but went on looking at each one (an lstat apiece), per
    check: 200,000 empty files beside kv_cache.py cost 3.7 s a walk."""
    (tmp_path / "kv_cache.py").write_text(KV)
    for i in range(2 * mounts.SUBMISSION_FILES):
        (tmp_path / f"junk{i:05}").touch()
    looked = counted_lstat(monkeypatch)
    files = taken(tmp_path)
    assert files[0] == "kv_cache.py" and len(files) == mounts.SUBMISSION_FILES
    assert len(looked) <= mounts.SUBMISSION_FILES


def test_files_past_the_byte_budget_are_looked_at_only_as_far_as_the_entry_budget(tmp_path, monkeypatch):
    """Files too large to copy were each looked at and left out without counting: sparse files of 33 MiB cost no
    disk, and any number of them made the walk as long."""
    (tmp_path / "kv_cache.py").write_text(KV)
    for i in range(2 * mounts.SUBMISSION_FILES):
        with open(tmp_path / f"sparse{i:05}", "wb") as f:
            f.truncate(mounts.SUBMISSION_BYTES + 1)
    looked = counted_lstat(monkeypatch)
    assert taken(tmp_path) == ["kv_cache.py"]
    assert len(looked) <= mounts.SUBMISSION_FILES
