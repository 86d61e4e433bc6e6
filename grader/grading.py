"""One grading run: check the arguments, run the checks, build a validated results document."""
from __future__ import annotations

import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from grader import progress, topics as topic_registry
from grader.engine.runner import run_checks
from grader.results import build, checked, error_document


class BadInput(ValueError):
    """An argument the user gave is wrong; the message names it."""


def resolve_topics(requested: list[str] | tuple[str, ...]) -> list[str]:
    known = topic_registry.all_topics()
    unknown = [t for t in requested if t not in known]
    if unknown:
        raise BadInput(f"unknown topic {unknown[0]!r}; the topics are: {', '.join(known)}")
    return list(dict.fromkeys(requested)) or known


def resolve_submission(path: Path) -> Path:
    if not path.exists():
        raise BadInput(f"submission folder {str(path)!r} does not exist "
                       f"(run from the folder that holds it, or pass --submission DIR)")
    if not path.is_dir():
        raise BadInput(f"submission {str(path)!r} is not a folder (pass the folder that holds sampling.py etc.)")
    return path.resolve()


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def grade(submission: Path, topics: list[str], hidden: bool, seed: int, record_goldens: bool = False,
          with_progress: bool = True) -> dict:
    """Grade `topics` of the submission folder; always returns a valid document (status error if it could not)."""
    started, t0 = now(), time.monotonic()
    mode = "hidden" if hidden else "public"
    try:
        checks = run_checks(submission, topics, hidden, seed, record_goldens)
        doc = build(checks, topics, submission, mode, seed, started, time.monotonic() - t0,
                    progress=progress.summary(submission) if with_progress else None)
    except Exception as exc:  # noqa: BLE001 - an internal error still produces a results file
        detail = "".join(traceback.format_exception_only(exc)).strip()
        doc = error_document(f"internal grader error: {detail}", topics, submission, mode, seed, started,
                             time.monotonic() - t0)
    return checked(doc)


def bad_input_document(message: str, submission: Path, topics: list[str], hidden: bool, seed: int) -> dict:
    return checked(error_document(f"bad input: {message}", topics, submission, "hidden" if hidden else "public",
                                  seed, now(), 0.0))
