"""Gradescope autograder `results.json` (https://gradescope-autograders.readthedocs.io/en/latest/specs/)."""
from __future__ import annotations


def to_gradescope(doc: dict) -> dict:
    tests = []
    for topic in doc["topics"]:
        if topic["message"] and not topic["checks"]:
            tests.append({"name": topic["id"], "score": 0, "max_score": 0, "status": "failed",
                          "output": topic["message"], "visibility": "visible"})
        for c in topic["checks"]:
            output = c["message"]
            if c.get("output"):
                output += f"\nyour code printed (its last lines):\n{c['output']}"
            if c["misconception"]:
                output += f"\nmisconception: {c['misconception']}"
            if c["hint"] and c["status"] != "passed":
                output += f"\nhint: infergrade hint {c['hint']}"
            tests.append({"name": f"{c['id']}: {c['title']}", "score": c["score"], "max_score": c["max_score"],
                          "status": "passed" if c["status"] == "passed" else "failed", "output": output.strip(),
                          "visibility": "visible" if c["visibility"] == "public" else "after_published"})
    out = {"score": doc["score"], "execution_time": int(round(doc["duration_s"])), "tests": tests,
           "extra_data": {"infergrade_status": doc["status"], "seed": doc["seed"], "mode": doc["mode"],
                          "isolation": doc["isolation"]["level"]}}
    if doc["status"] != "completed":
        out["output"] = f"Grading did not complete: {doc['error']}"
    elif doc["incomplete"]:
        out["output"] = f"Not a full grade: {doc['incomplete']}"
    return out
