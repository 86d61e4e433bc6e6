"""GitHub Classroom's autograding payload: what `classroom-resources/autograding-grading-reporter` reads.

The reporter decodes one base64 JSON document per runner (`{RUNNER}_RESULTS`) and reads its points twice: the
points it sends to Classroom ("Points 30/269") add up `tests[].score` against the document's `max_score`, while its
log ("Total points for infergrade: 64.29/269") gives `max_score` times the fraction of tests whose status is "pass",
whatever each test is worth. The two agree only when every test is worth the same: so each point is one test, a
check of 3 points three tests of 1 ("... (point 2 of 3)"), a topic not started as many failing tests as it has
points. The reporter fails the workflow when the document's `status` is "fail" or "error". A check that is not
started yet (the function still raises NotImplementedError) scores 0 but is not a failure: a student's repository
is checked from the first push, long before every topic is written.
"""
from __future__ import annotations

import json

from grader.exporters.gradescope import _check_output
from grader.language import tr

WRONG = ("failed", "error", "timeout")  # what makes the run fail: a check that ran and did not pass
# The reporter gets the document base64-encoded in one environment variable, which Linux caps at 131,072 bytes
# (MAX_ARG_STRLEN; past it the step cannot start and no points are sent): 96,000 bytes of JSON encode to 128,000.
MAX_JSON_BYTES = 96_000
SHORTER = (None, 400, 0)  # the messages' lengths tried in turn, until the document fits
CUT = " … (cut to fit the reporter: `infergrade check` shows it whole)"  # said in this run's language (`tr`)


def classroom_json(doc: dict, not_started: dict[str, float] | None = None) -> str:
    """The reporter's document as the workflow hands it over: compact JSON of at most MAX_JSON_BYTES, its messages
    shortened (then left out) where the whole would not fit; the tests and points are never cut."""
    document = to_classroom(doc, not_started)
    said = [t["message"] for t in document["tests"]]
    for limit in SHORTER:
        for test, message in zip(document["tests"], said):
            test["message"] = message if limit is None or len(message) <= limit else message[:limit] + tr(CUT)
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        if len(text.encode()) <= MAX_JSON_BYTES:
            break
    return text + "\n"


def to_classroom(doc: dict, not_started: dict[str, float] | None = None) -> dict:
    """The reporter's document of a results document: one test per point, the points and the run's verdict.

    `not_started` {topic: its points} are the topics left out because none of their functions is written yet:
    their points are failing tests, and stay in the maximum (a repository with one topic done is not at full
    marks).
    """
    tests = []
    for topic, points in (not_started or {}).items():
        tests += per_point(tr("{topic}: not started", topic=topic), "fail", int(points),
                           tr("not started: no function of {topic}.py is written yet", topic=topic), "0.00s")
    for topic in doc["topics"]:
        for c in topic["checks"]:
            tests += per_point(f"{c['id']}: {c['title']}", _status(c["status"]), c["max_score"],
                               _message(topic["id"], c), f"{c['duration_s']:.2f}s")
    wrong = any(c["status"] in WRONG for t in doc["topics"] for c in t["checks"])
    status = "error" if doc["status"] != "completed" else "fail" if wrong else "pass"
    return {"version": 1, "status": status, "max_score": len(tests), "tests": tests}


def per_point(name: str, status: str, points: int, message: str, seconds: str) -> list[dict]:
    """One test of 1 point for each of `points`, all with `status`; the message is said once, under the first."""
    return [{"name": name if points == 1 else tr("{name} (point {k} of {points})", name=name, k=k, points=points),
             "status": status,
             "score": int(status == "pass"), "max_score": 1, "message": message if k == 1 else "",
             "line_no": 0, "execution_time": seconds if k == 1 else "0.00s"} for k in range(1, points + 1)]


def _status(check_status: str) -> str:
    return "pass" if check_status == "passed" else "error" if check_status in ("error", "timeout") else "fail"


def _message(topic: str, c: dict) -> str:
    if c["status"] == "not_started":
        return tr("not started: {function} still raises NotImplementedError", function=c.get("function") or c["hint"])
    return _check_output(topic, c)


