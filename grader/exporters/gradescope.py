"""Gradescope autograder `results.json` (https://gradescope-autograders.readthedocs.io/en/latest/specs/).

One Gradescope test per check, numbered topic.check; public checks are `visible`, hidden ones `after_published`
(shown once the instructor publishes the grades). A failed test's output carries the check's message, what the
student's code printed, the misconception with its explanation, and the hint command to run. The run's stdout
(the grader's log) is for the course staff only: everything a student should read is in an `output` field.
"""
from __future__ import annotations

from grader import hints
from grader.language import tr

VISIBILITY = {"public": "visible", "hidden": "after_published"}
STDOUT_VISIBILITY = "hidden"


def to_gradescope(doc: dict, leaderboard: bool = False) -> dict:
    """The Gradescope document of a results document; `leaderboard` adds score and time (off by default)."""
    tests = []
    for number, topic in enumerate(doc["topics"], start=1):
        if topic["status"] == "error" and topic["message"]:  # say once why (an import error, with its line)
            tests.append({"name": tr("{topic}: could not be graded", topic=topic["id"]), "number": f"{number}",
                          "score": 0, "max_score": 0, "status": "failed", "output": topic["message"],
                          "tags": [topic["id"]], "visibility": "visible"})
        for index, c in enumerate(topic["checks"], start=1):
            tests.append({"name": f"{c['id']}: {c['title']}", "number": f"{number}.{index}", "score": c["score"],
                          "max_score": c["max_score"], "status": "passed" if c["status"] == "passed" else "failed",
                          "output": _check_output(topic["id"], c),
                          "tags": [topic["id"], c["visibility"]] + ([c["misconception"]] if c["misconception"]
                                                                   else []),
                          "visibility": VISIBILITY[c["visibility"]]})
    out = {"score": doc["score"], "execution_time": public_seconds(doc), "output_format": "text",
           "stdout_visibility": STDOUT_VISIBILITY, "tests": tests,
           "extra_data": {"infergrade_status": doc["status"], "seed": doc["seed"], "mode": doc["mode"],
                          "max_score": doc["max_score"], "isolation": doc["isolation"]["level"]}}
    if doc["status"] != "completed":
        out["output"] = tr("Grading did not complete ({error}): this is not a full grade, and the checks that did not "
                           "run score 0. Submit again, or tell the course staff.", error=doc["error"])
    elif doc["incomplete"]:
        out["output"] = tr("Not a full grade: {incomplete}", incomplete=doc["incomplete"])
    else:
        said = ("{score}/{max_score} points (seed {seed}, hidden checks)" if doc["mode"] == "hidden" else
                "{score}/{max_score} points (seed {seed}, public checks)")
        out["output"] = tr(said, score=f"{doc['score']:g}", max_score=f"{doc['max_score']:g}", seed=doc["seed"])
    if leaderboard:
        out["leaderboard"] = [{"name": tr("Score"), "value": doc["score"]},
                              {"name": tr("Grading time (s)"), "value": out["execution_time"], "order": "asc"}]
    return out


def public_seconds(doc: dict) -> int:
    """The grading time a student is shown: the public checks' only. With the hidden checks in it, a submission
    that sleeps on some property of a hidden case would read one bit of that case per submission."""
    return int(round(sum(c["duration_s"] for t in doc["topics"] for c in t["checks"] if c["visibility"] == "public")))


def _check_output(topic: str, c: dict) -> str:
    """What a student reads under one test: the message; for a failure, the prints, misconception and hint."""
    lines = [c["message"]] if c["message"] else []
    if c.get("output"):
        lines.append(tr("your code printed (its last lines):") + f"\n{c['output']}")
    if c["misconception"]:
        explanation = hints.explain(topic, c["misconception"])
        lines.append(tr("misconception: {id}: {why}", id=c["misconception"], why=explanation.strip()) if explanation
                     else tr("misconception: {id}", id=c["misconception"]))
    if c["hint"] and c["status"] != "passed":
        lines.append(tr("hint: infergrade hint {hint}", hint=c["hint"]))
    return "\n".join(lines).strip()
