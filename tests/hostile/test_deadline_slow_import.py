"""A submission that is slow everywhere (a sleep at import) cannot hold the grader for long: the run's deadline
ends it, the remaining checks time out and score 0, and the results say the deadline passed."""
import time

from grader.grading import grade
from grader.results import problems
from grader.sandbox.policy import REPO

SLOW = "import time\ntime.sleep(3.5)\n" + (REPO / "solutions" / "sampling.py").read_text()


def test_a_slow_import_everywhere_meets_the_run_deadline(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text(SLOW)
    started = time.monotonic()
    doc = grade(folder, ["sampling"], hidden=True, seed=1, with_progress=False, deadline_s=5)
    elapsed = time.monotonic() - started
    assert problems(doc) == [] and doc["deadline"] == {"seconds": 5, "passed": True}
    late = [c for c in doc["topics"][0]["checks"] if "deadline" in c["message"]]
    assert late and all(c["status"] == "timeout" and c["score"] == 0 for c in late)
    assert doc["score"] < doc["max_score"] and elapsed < 5 + 10  # the deadline, plus start-up and slack


def test_a_fast_run_reports_its_deadline_unpassed():
    doc = grade(REPO / "solutions", ["kv_cache"], hidden=False, seed=0, with_progress=False)
    assert doc["deadline"]["passed"] is False and doc["deadline"]["seconds"] > 0
    assert doc["score"] == doc["max_score"]
