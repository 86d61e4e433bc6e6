"""Prove the checks: solutions score full marks, stubs score zero, every mutant loses points with its own id."""
from __future__ import annotations

import ast
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import signal

import exercises
import solutions
from grader import hints, interrupt
from grader.grading import grade as grade_run

MUTANTS_DIR = Path(__file__).resolve().parent.parent.parent / "tests" / "mutants"
SOLUTIONS_DIR = Path(solutions.__file__).resolve().parent
EXERCISES_DIR = Path(exercises.__file__).resolve().parent
SELFTEST_SEED = 20261129


@dataclass
class Verdict:
    """One line of the self-test: what was graded, what it scored, and whether that is what it should score."""
    topic: str
    subject: str
    score: float
    max_score: float
    ok: bool
    detail: str


def grade(submission: Path, topics: list[str], hidden: bool, seed: int, with_progress: bool,
          only: set[str] | None = None) -> dict:
    """A grading run whose interruption stops the self-test (an interrupted run is no verdict)."""
    doc = grade_run(submission, topics, hidden=hidden, seed=seed, with_progress=with_progress, only=only)
    if doc["status"] == "interrupted":
        raise interrupt.received() or interrupt.Interrupted(signal.SIGINT)
    return doc


def mutants(topic: str) -> list[Path]:
    return sorted((MUTANTS_DIR / topic).glob("*.py"))


def mutant_submission(topic: str, mutant: Path, into: Path) -> Path:
    """A submission folder holding the solution of `topic` with the mutant's definitions appended."""
    into.mkdir(parents=True, exist_ok=True)
    source = (SOLUTIONS_DIR / f"{topic}.py").read_text()
    (into / f"{topic}.py").write_text(f"{source}\n\n# --- mutant {mutant.stem} ---\n{mutant.read_text()}")
    return into


def _topic_score(doc: dict, topic: str) -> tuple[float, float]:
    entry = next(t for t in doc["topics"] if t["id"] == topic)
    return entry["score"], entry["max_score"]


def grade_solutions(topic: str, seed: int = SELFTEST_SEED) -> Verdict:
    """The model answers must pass every check, hidden ones included."""
    doc = grade(SOLUTIONS_DIR, [topic], hidden=True, seed=seed, with_progress=False)
    score, top = _topic_score(doc, topic)
    bad = [f"{c['id']}: {c['status']}: {c['message'][:300]}" for t in doc["topics"] for c in t["checks"]
           if c["status"] not in ("passed", "skipped")]
    return Verdict(topic, "solutions", score, top, score == top and top > 0 and not bad,
                   "; ".join(bad) or "full marks")


def grade_stubs(topic: str, seed: int = SELFTEST_SEED) -> Verdict:
    """The untouched stubs must score zero: every check depends on the student's code."""
    doc = grade(EXERCISES_DIR, [topic], hidden=True, seed=seed, with_progress=False)
    score, top = _topic_score(doc, topic)
    passing = [c["id"] for t in doc["topics"] for c in t["checks"] if c["status"] == "passed"]
    return Verdict(topic, "exercises (stubs)", score, top, score == 0,
                   "zero" if score == 0 else f"stubs pass {', '.join(passing)}")


def defined_names(module: Path) -> set[str]:
    """The functions and classes a module defines at its top level (what a mutant replaces)."""
    tree = ast.parse(module.read_text())
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def grade_mutant(topic: str, mutant: Path, seed: int = SELFTEST_SEED) -> Verdict:
    """A mutant must lose points on a failed check that reports its misconception id.

    The checks of the functions the mutant replaces run first, then, if they do not catch it, all of them. Each
    check's result depends only on the run's seed and its own id, so a check that catches the mutant in the first
    run catches it in a run of every check.
    """
    known = set(hints.misconception_ids(topic))
    tmp = Path(tempfile.mkdtemp(prefix=f"infergrade-mutant-{mutant.stem}-"))
    try:
        submission = mutant_submission(topic, mutant, tmp)
        for only in (defined_names(mutant), None):
            doc = grade(submission, [topic], hidden=True, seed=seed, with_progress=False, only=only)
            score, top = _topic_score(doc, topic)
            tagged = [c["id"] for t in doc["topics"] for c in t["checks"] if c["misconception"] == mutant.stem]
            if score < top and tagged:
                break
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ok = score < top and bool(tagged) and mutant.stem in known
    scope = f" (of the checks of {', '.join(sorted(only))})" if only is not None else ""
    detail = (f"caught by {', '.join(tagged)}{scope}" if tagged else "no failed check reports this id") + \
        ("" if mutant.stem in known else f"; {mutant.stem} is not a misconception id of {topic}")
    return Verdict(topic, f"mutant {mutant.stem}", score, top, ok, detail)


def missing_mutants(topic: str) -> list[str]:
    return sorted(set(hints.misconception_ids(topic)) - {m.stem for m in mutants(topic)})


def check_topic(topic: str, seed: int = SELFTEST_SEED) -> Iterator[Verdict]:
    """Every verdict of the self-test for one topic, as each is reached."""
    yield grade_solutions(topic, seed)
    yield grade_stubs(topic, seed)
    for m in missing_mutants(topic):
        yield Verdict(topic, f"mutant {m}", 0, 0, False, "no mutant for this misconception id")
    for m in mutants(topic):
        yield grade_mutant(topic, m, seed)
