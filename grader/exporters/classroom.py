"""GitHub Classroom's autograding payload: what `classroom-resources/autograding-grading-reporter` reads.

The reporter decodes one base64 JSON document per runner (`{RUNNER}_RESULTS`), adds up `tests[].score` against
`max_score` and sends the points to Classroom; it fails the workflow when the document's `status` is "fail" or
"error". A check that is not started yet (the function still raises NotImplementedError) scores 0 but is not a
failure: a student's repository is checked from the first push, long before every topic is written.
"""
from __future__ import annotations

from grader.exporters.gradescope import _check_output

WRONG = ("failed", "error", "timeout")  # what makes the run fail: a check that ran and did not pass


def to_classroom(doc: dict, not_started: dict[str, float] | None = None) -> dict:
    """The reporter's document of a results document: one test per check, the points and the run's verdict.

    `not_started` {topic: its points} are the topics left out because none of their functions is written yet:
    each is one test scoring 0, and their points stay in the maximum (a repository with one topic done is not
    at full marks).
    """
    tests = [{"name": f"{topic}: not started", "status": "fail", "score": 0, "max_score": points,
              "message": f"not started: no function of {topic}.py is written yet", "line_no": 0,
              "execution_time": "0.00s"} for topic, points in (not_started or {}).items()]
    for topic in doc["topics"]:
        for c in topic["checks"]:
            tests.append({"name": f"{c['id']}: {c['title']}", "status": _status(c["status"]), "score": c["score"],
                          "max_score": c["max_score"], "message": _message(topic["id"], c),
                          "line_no": 0, "execution_time": f"{c['duration_s']:.2f}s"})
    wrong = any(c["status"] in WRONG for t in doc["topics"] for c in t["checks"])
    status = "error" if doc["status"] != "completed" else "fail" if wrong else "pass"
    return {"version": 1, "status": status, "max_score": doc["max_score"] + sum((not_started or {}).values()),
            "tests": tests}


def _status(check_status: str) -> str:
    return "pass" if check_status == "passed" else "error" if check_status in ("error", "timeout") else "fail"


def _message(topic: str, c: dict) -> str:
    if c["status"] == "not_started":
        return f"not started: {c.get('function') or c['hint']} still raises NotImplementedError"
    return _check_output(topic, c)


