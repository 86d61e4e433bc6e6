"""The same submission and seed give byte-identical results, times and durations aside, over every topic."""
import json
import subprocess
import sys

import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO
from grader.instructor.selftest import SOLUTIONS_DIR, mutant_submission, mutants
from grader.topics import all_topics
from tests.documents import without

TIMES = ("started_at", "duration_s")


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
    first, second = (json.dumps(without(doc, TIMES), indent=1)
                     for doc in (here, json.loads(elsewhere.stdout.strip().splitlines()[-1])))
    doc = json.loads(first)
    assert doc["status"] == "completed" and [t["id"] for t in doc["topics"]] == all_topics()
    if which == "mutants":
        assert all(t["status"] == "failed" for t in doc["topics"])
    assert first == second


DRAW_HIDDEN_CASES = """
import json, sys
import grader
from grader.engine.runner import load_hypothesis_profile
load_hypothesis_profile()
from hypothesis import given, seed, settings
from grader.checks.paged_kv.test_hidden import attention_specs
from hypothesis import strategies as st

drawn = []

@seed(7)
@settings(max_examples=60)
@given(spec=attention_specs(), tensor_seed=st.integers(0, 2**31 - 1))
def draw(spec, tensor_seed):
    drawn.append(repr(sorted((k, str(v)) for k, v in spec.items())) + str(tensor_seed))

draw()
print(json.dumps({"grader": grader.__file__, "drawn": drawn}))
"""


def test_one_seed_draws_one_set_of_cases_however_the_grader_is_installed(tmp_path):
    """Hypothesis draws some values from the literal constants of the modules it deems local: an editable checkout's
    are, an installed grader's (site-packages) are not. One seed must draw the same hidden cases from both."""
    installed = tmp_path / "site-packages"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "--target", str(installed), str(REPO)],
                   check=True, capture_output=True)
    runs = []
    for path in (None, installed):
        env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
        if path is not None:
            env["PYTHONPATH"] = str(path)
        done = subprocess.run([sys.executable, "-c", DRAW_HIDDEN_CASES], capture_output=True, text=True, env=env,
                              cwd=tmp_path, check=True)
        runs.append(json.loads(done.stdout))
    editable, wheel = runs
    assert str(installed) in wheel["grader"] and str(installed) not in editable["grader"]
    assert len(editable["drawn"]) == 60 and editable["drawn"] == wheel["drawn"]
