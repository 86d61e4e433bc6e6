"""The same submission and seed give byte-identical results, times and durations aside, over every topic."""
import json
import subprocess
import sys

import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO
from grader.instructor.selftest import SOLUTIONS_DIR, mutant_submission, mutants
from grader.topics import all_topics

TIMES = ("started_at", "duration_s")


def without_times(value):
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def failing_submission(tmp_path):
    """One mutant per topic: every topic has failed checks, misconceptions and messages to compare."""
    folder = tmp_path / "mutants"
    for topic in all_topics():
        first = mutants(topic)[0]
        mutant_submission(topic, first, tmp_path / topic)
        folder.mkdir(exist_ok=True)
        (folder / f"{topic}.py").write_text((tmp_path / topic / f"{topic}.py").read_text())
    return folder


GRADE_ELSEWHERE = """
import json, sys
from pathlib import Path
from grader.grading import grade
from grader.sandbox.policy import REPO
from grader.topics import all_topics
print(json.dumps(grade(Path(sys.argv[1]), all_topics(), hidden=True, seed=424242, with_progress=False)))
"""


@pytest.mark.parametrize("which", ["solutions", "mutants"])
def test_two_grades_with_one_seed_are_identical(tmp_path, which):
    """One grade here and one in another grader process: nothing that decides a result may be drawn per process
    (a regrade, `--resume` and shards rely on it)."""
    folder = SOLUTIONS_DIR if which == "solutions" else failing_submission(tmp_path)
    here = grade(folder, all_topics(), hidden=True, seed=424242, with_progress=False)
    elsewhere = subprocess.run([sys.executable, "-c", GRADE_ELSEWHERE, str(folder)], cwd=REPO, capture_output=True,
                               text=True, timeout=900, check=True)
    first, second = (json.dumps(without_times(doc), indent=1)
                     for doc in (here, json.loads(elsewhere.stdout.strip().splitlines()[-1])))
    doc = json.loads(first)
    assert doc["status"] == "completed" and [t["id"] for t in doc["topics"]] == all_topics()
    if which == "mutants":
        assert all(t["status"] == "failed" for t in doc["topics"])
    assert first == second
