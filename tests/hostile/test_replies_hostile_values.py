"""Hostile replies: values built to break the grader's decoding or comparing are the submission's error, never
the grader's, and oversized replies are refused before they are converted."""
import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO

CASES = [("kv_cache", "kv_bytes_per_token", v) for v in ("10 ** 4000", "-(10 ** 41)", "[10 ** 39] * 3",
                                                          "__import__('torch').zeros(80 * 2**20 // 4)")]
CASES += [("timeline", "prefill_seconds", v) for v in ("10 ** 4000", "float('nan')", "-float('inf')")]


@pytest.mark.parametrize("topic,function,value", CASES)
def test_odd_replies_cost_the_check_not_the_grader(tmp_path, topic, function, value):
    folder = tmp_path / "sub"
    folder.mkdir()
    source = (REPO / "solutions" / f"{topic}.py").read_text()
    (folder / f"{topic}.py").write_text(source + f"\n\ndef {function}(*args, **kwargs):\n    return {value}\n")
    doc = grade(folder, [topic], hidden=True, seed=1, with_progress=False)
    checks = [c for c in doc["topics"][0]["checks"] if c["status"] != "passed"]
    assert checks and doc["status"] == "completed"
    assert not any(c["internal_error"] for c in doc["topics"][0]["checks"])


def test_a_symlinked_module_is_refused_not_graded_unhashed(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "kv_cache.py").symlink_to(REPO / "solutions" / "kv_cache.py")
    doc = grade(folder, ["kv_cache"], hidden=False, seed=0, with_progress=False)
    topic = doc["topics"][0]
    assert "kv_cache.py" not in doc["submission"]["files"] and topic["score"] == 0
    assert topic["status"] == "error" and "symbolic link" in topic["message"]
