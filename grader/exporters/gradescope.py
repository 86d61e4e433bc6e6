"""Gradescope autograder `results.json` (https://gradescope-autograders.readthedocs.io/en/latest/specs/).

One Gradescope test per check, numbered topic.check; public checks are `visible`, hidden ones `after_published`
(shown once the instructor publishes the grades). A failed test's output carries the check's message, what the
student's code printed, the misconception with its explanation, and the hint command to run. The run's stdout
(the grader's log) is for the course staff only: everything a student should read is in an `output` field.
"""
from __future__ import annotations

from grader import hints

VISIBILITY = {"public": "visible", "hidden": "after_published"}
STDOUT_VISIBILITY = "hidden"


def to_gradescope(doc: dict, leaderboard: bool = False) -> dict:
    """The Gradescope document of a results document; `leaderboard` adds score and time (off by default)."""
    tests = []
    for number, topic in enumerate(doc["topics"], start=1):
        if topic["status"] == "error" and topic["message"]:  # say once why (an import error, with its line)
            tests.append({"name": f"{topic['id']}: could not be graded", "number": f"{number}", "score": 0,
                          "max_score": 0, "status": "failed", "output": topic["message"],
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
        out["output"] = (f"Grading did not complete ({doc['error']}): this is not a full grade, and the checks "
                         f"that did not run score 0. Submit again, or tell the course staff.")
    elif doc["incomplete"]:
        out["output"] = f"Not a full grade: {doc['incomplete']}"
    else:
        out["output"] = f"{doc['score']:g}/{doc['max_score']:g} points (seed {doc['seed']}, {doc['mode']} checks)"
    if leaderboard:
        out["leaderboard"] = [{"name": "Score", "value": doc["score"]},
                              {"name": "Grading time (s)", "value": out["execution_time"], "order": "asc"}]
    return out


def public_seconds(doc: dict) -> int:
    """The grading time a student is shown: the public checks' only. With the hidden checks in it, a submission
    that sleeps on some property of a hidden case would read one bit of that case per submission."""
    return int(round(sum(c["duration_s"] for t in doc["topics"] for c in t["checks"] if c["visibility"] == "public")))


def _check_output(topic: str, c: dict) -> str:
    """What a student reads under one test: the message; for a failure, the prints, misconception and hint."""
    lines = [c["message"]] if c["message"] else []
    if c.get("output"):
        lines.append(f"your code printed (its last lines):\n{c['output']}")
    if c["misconception"]:
        explanation = hints.explain(topic, c["misconception"])
        lines.append(f"misconception: {c['misconception']}" + (f": {explanation.strip()}" if explanation else ""))
    if c["hint"] and c["status"] != "passed":
        lines.append(f"hint: infergrade hint {c['hint']}")
    return "\n".join(lines).strip()
