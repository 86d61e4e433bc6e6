"""The results document: schema-valid, invariants enforced, never a silent score."""
import copy
import json

import pytest

from grader.grading import grade
from grader.results import SCHEMA, checked, error_document, problems
from grader.instructor.selftest import EXERCISES_DIR, SOLUTIONS_DIR


@pytest.fixture(scope="module")
def doc():
    return grade(SOLUTIONS_DIR, ["kv_cache"], hidden=False, seed=3, with_progress=False)


def test_the_schema_is_2020_12():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_a_real_run_is_valid(doc):
    assert problems(doc) == [] and doc["status"] == "completed"
    json.dumps(doc, allow_nan=False)


@pytest.mark.parametrize("tamper,words", [
    (lambda d: d.update(score=d["score"] + 1), "totals do not add up"),
    (lambda d: d.update(score=float("nan")), "outside"),
    (lambda d: d["topics"][0]["checks"][0].update(status="failed"), "disagrees with score"),
    (lambda d: d["topics"][0]["checks"][0].update(status="bogus"), "is not one of"),
    (lambda d: d.pop("seed"), "'seed' is a required property"),
    (lambda d: d["topics"][0].update(score=-1), "less than the minimum"),
])
def test_tampered_documents_are_rejected(doc, tamper, words):
    bad = copy.deepcopy(doc)
    tamper(bad)
    found = problems(bad)
    assert any(words in p for p in found), found
    replaced = checked(bad)
    assert replaced["status"] == "error" and "failed validation" in replaced["error"] and problems(replaced) == []


def test_error_documents_are_valid_and_score_nothing(tmp_path):
    doc = error_document("internal grader error: boom", ["kv_cache"], tmp_path, "hidden", 1, "2026-01-01T00:00:00Z", 0.5)
    assert problems(doc) == [] and doc["status"] == "error" and doc["score"] == doc["max_score"] == 0


def test_an_internal_error_gives_an_error_document(monkeypatch):
    import grader.grading as grading

    def explode(*args, **kwargs):
        raise RuntimeError("engine exploded")
    monkeypatch.setattr(grading, "run_checks", explode)
    doc = grading.grade(EXERCISES_DIR, ["kv_cache"], hidden=False, seed=0, with_progress=False)
    assert doc["status"] == "error" and "engine exploded" in doc["error"] and problems(doc) == []


def test_only_regular_files_are_hashed(tmp_path):
    import os

    from grader.submission.opening import BadInput
    from grader.submission.snapshot import of_folder
    (tmp_path / "a.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "fifo.py")
    with of_folder(tmp_path) as snapshot:
        assert set(snapshot.files) == {"a.py"}
    (tmp_path / "link.py").symlink_to(SOLUTIONS_DIR / "kv_cache.py")
    with pytest.raises(BadInput, match="link.py"):  # a link is neither hashed nor followed: refused
        of_folder(tmp_path)


def test_a_hostile_progress_file_is_ignored(tmp_path):
    (tmp_path / ".infergrade-progress.json").write_text('{"checks": {"x": 1}, "hints": {"a": "evil", "b": 2}}')
    (tmp_path / "kv_cache.py").write_text((SOLUTIONS_DIR / "kv_cache.py").read_text())
    doc = grade(tmp_path, ["kv_cache"], hidden=False, seed=0)
    assert doc["status"] == "completed" and doc["score"] == doc["max_score"]
    progress = {k: v for k, v in doc["progress"].items() if k != "reported_by"}
    assert progress == {"checks_passed": 0, "checks_seen": 0, "hints_read": {"b": 2}}
    assert "not verified" in doc["progress"]["reported_by"]
