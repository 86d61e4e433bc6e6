"""What a hidden run tells through time: Gradescope's execution_time (and the leaderboard's grading time) summed
every check, so a submission that sleeps on some property of a hidden case read one bit of it per submission."""
import copy

from grader.exporters.gradescope import to_gradescope
from grader.grading import grade
from grader.instructor.selftest import SOLUTIONS_DIR


def test_the_time_a_student_is_shown_does_not_move_with_the_hidden_checks():
    doc = grade(SOLUTIONS_DIR, ["latency"], hidden=True, seed=3, with_progress=False)
    slower = copy.deepcopy(doc)
    hidden = [c for t in slower["topics"] for c in t["checks"] if c["visibility"] == "hidden"]
    assert hidden
    for c in hidden:  # as if the submission had slept 60 s in each hidden check
        c["duration_s"] += 60.0
    slower["duration_s"] += 60.0 * len(hidden)
    for leaderboard in (False, True):
        shown, shown_slower = to_gradescope(doc, leaderboard), to_gradescope(slower, leaderboard)
        assert shown["execution_time"] == shown_slower["execution_time"]
        assert shown.get("leaderboard") == shown_slower.get("leaderboard")
