"""The last step of run_autograder: make sure results.json exists, and says so when grading failed.

Run as a script (`python finalize.py RESULTS --exit-code N ...`), with the standard library only, so that it works
when the grader itself cannot be imported, and with any Python 3. It leaves a usable document as it is (adding a
note when the run was stopped at the time limit), and replaces a missing or unusable one with a document that
says grading failed: a zero that says it is not a grade, never a silent one. Its sentences are said in the run's
language (INFERGRADE_LANG, which `gradescope --lang zh` sets) through the grader's catalog where the grader imports,
in English where it does not.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

TIMED_OUT = (124, 137)  # timeout(1): the command ran past the limit (137: it had to be killed)
FORMATS = ("text", "simple_format", "html", "md", "ansi")
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


def english(text: str, /, **values) -> str:
    """`text` filled with `values`, as `grader.language.tr` says it in English."""
    return text.format(**values) if values else text


def translator():
    """The grader's `tr` in the language of this run's environment; `english` where the grader cannot be imported
    (this script still has to write its document then)."""
    sys.path.append(str(Path(__file__).resolve().parents[3]))  # the zip's source folder, holding `grader`
    try:
        from grader import language
    except Exception:  # any failure to import: the grader's own breakage is what this script reports
        return english
    language.choose(None)
    return language.tr


def problem(doc, say=english) -> str | None:
    """Why `doc` is not a usable Gradescope results document, or None."""
    if not isinstance(doc, dict):
        return say("it is not a JSON object")
    if not _points(doc.get("score")):
        return say("it has no finite, non-negative score")
    tests = doc.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests):
        return say("its tests are not a list of objects")
    for t in tests:
        if any(k in t and not _points(t[k]) for k in ("score", "max_score")):
            return say("test {name!r} has a score that is not a finite, non-negative number", name=t.get("name"))
        if t.get("visibility", "visible") not in VISIBILITIES or t.get("status", "passed") not in ("passed",
                                                                                                     "failed"):
            return say("test {name!r} has an unknown visibility or status", name=t.get("name"))
    return None


def _points(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def failure(reason: str, exit_code: int, seconds: int, say=english) -> dict:
    """The document of a run that produced no usable results: it says grading failed, and why."""
    message = say("Grading failed: {reason}. This is not your grade: submit again, or tell the course staff if it "
                  "happens again.", reason=reason)
    return {"score": 0, "execution_time": seconds, "output": message, "output_format": "text",
            "stdout_visibility": "hidden",
            "tests": [{"name": say("infergrade: grading did not complete"), "number": "0", "score": 0, "max_score": 0,
                       "status": "failed", "output": message, "tags": ["grading-failed"], "visibility": "visible"}],
            "extra_data": {"infergrade_status": "error", "exit_code": exit_code}}


def finalize(path: str, exit_code: int, time_limit: float, started: float | None, leaderboard: bool,
             say=english) -> dict:
    """The document to leave at `path`; `say` says its sentences (`translator()`)."""
    seconds = max(0, int(round(time.time() - started))) if started else 0
    timed_out = exit_code in TIMED_OUT
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        why = problem(doc, say)
    except FileNotFoundError:
        doc, why = None, say("no results were written")
    except (OSError, ValueError) as exc:
        doc, why = None, say("the results could not be read ({error})", error=f"{type(exc).__name__}: {exc}")
    if why is not None:
        if timed_out:
            reason = say("grading ran past the time limit of {limit} s and was stopped ({why})",
                         limit=f"{time_limit:g}", why=why)
        else:
            reason = say("the grader exited with code {code} and {why}", code=exit_code, why=why)
        return failure(reason, exit_code, seconds, say)
    if timed_out:
        said = str(doc.get("output", ""))
        # the grader's output may say it already (gradescope.py's "Not a full grade: ..." and its translation)
        already = "not a full grade" in said or say("not a full grade") in said
        doc["output"] = (say("Grading was stopped at the time limit of {limit} s. ", limit=f"{time_limit:g}")
                         + ("" if already else say("This is not a full grade. ")) + said).strip()
        doc.setdefault("extra_data", {})["infergrade_status"] = "timeout"
    if leaderboard and "leaderboard" not in doc and doc.get("extra_data", {}).get("infergrade_status") == "completed":
        doc["leaderboard"] = [{"name": say("Score"), "value": doc["score"]},
                              {"name": say("Grading time (s)"), "value": doc.get("execution_time", seconds),
                               "order": "asc"}]
    return doc


def write(doc: dict, path: str) -> None:
    """Whole or not at all: a temporary file renamed into place, with the mode the umask gives a new file (mkstemp's
    0600 would hide the results from a Gradescope harness that reads them as another user)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".results.", dir=folder)
    mask = os.umask(0)
    os.umask(mask)
    os.fchmod(fd, 0o666 & ~mask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--exit-code", type=int, required=True, help="the grader's exit status")
    parser.add_argument("--time-limit", type=float, required=True, help="the hard limit it ran under, seconds")
    parser.add_argument("--started", type=float, default=None, help="when grading started, Unix seconds")
    parser.add_argument("--leaderboard", action="store_true", help="add the score and grading time")
    args = parser.parse_args(argv)
    doc = finalize(args.results, args.exit_code, args.time_limit, args.started, args.leaderboard, translator())
    write(doc, args.results)
    status = doc.get("extra_data", {}).get("infergrade_status")
    print(f"results.json: score {doc['score']:g}, infergrade status {status}, grader exit code {args.exit_code}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
