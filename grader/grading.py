"""One grading run: check the arguments, run the checks, build a validated results document."""
from __future__ import annotations

import contextlib
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from grader import interrupt, progress, results, topics as topic_registry
from grader.engine.runner import run_checks
from grader.interrupt import as_interrupted
from grader.language import tr
from grader.results import build, checked, error_document
from grader.submission.opening import BadInput
from grader.submission.snapshot import Snapshot, of_folder


def resolve_topics(requested: list[str] | tuple[str, ...]) -> list[str]:
    known = topic_registry.all_topics()
    unknown = [t for t in requested if t not in known]
    if unknown:
        raise BadInput(tr("unknown topic {topic}; the topics are: {topics}", topic=repr(unknown[0]),
                          topics=", ".join(known)))
    return list(dict.fromkeys(requested)) or known


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def grade(submission: Path | Snapshot, topics: list[str], hidden: bool, seed: int, record_goldens: bool = False,
          with_progress: bool = True, deadline_s: float | None = None, only: set[str] | None = None) -> dict:
    """Grade `topics` of the submission; always returns a valid document (status error if it could not).

    Only a copy is graded (`snapshot`): the one `resolve_submission` took, or one taken now of the folder given.
    """
    started, t0 = now(), time.monotonic()
    results.prepare()
    mode = "hidden" if hidden else "public"
    shown = submission.given if isinstance(submission, Snapshot) else submission
    try:
        if interrupt.received():  # while the command line was starting: nothing was graded
            raise interrupt.received()
        with contextlib.ExitStack() as owned:
            if not isinstance(submission, Snapshot):
                submission = owned.enter_context(of_folder(submission))
            run = run_checks(submission.folder, topics, hidden, seed, record_goldens, deadline_s=deadline_s,
                             only=only)
            for result in run.results:  # a message quoting a module's __file__ names the folder given, not the copy
                result.message, result.output = submission.shown(result.message), submission.shown(result.output)
            doc = build(run.results, topics, submission.given, mode, seed, started, time.monotonic() - t0,
                        files=submission.files,
                        progress=progress.summary(progress.workspace(submission.given)) if with_progress else None,
                        interrupted=run.interrupted.reason if run.interrupted else None)
        if run.deadline_s is not None:
            doc["deadline"] = {"seconds": run.deadline_s, "passed": run.deadline_passed}
    except KeyboardInterrupt as exc:  # outside the checks: nothing was scored
        doc = error_document(as_interrupted(exc).reason, topics, shown, mode, seed, started,
                             time.monotonic() - t0, status="interrupted")
    except BadInput as exc:  # a folder given here that is, or now holds, a link
        doc = error_document(tr("bad input: {problem}", problem=exc), topics, shown, mode, seed, started,
                             time.monotonic() - t0)
    except Exception as exc:  # noqa: BLE001 - an internal error still produces a results file
        detail = "".join(traceback.format_exception_only(exc)).strip()
        doc = error_document(tr("internal grader error: {detail}", detail=detail), topics, shown, mode, seed,
                             started, time.monotonic() - t0)
    return checked(doc)


def bad_input_document(message: str, submission: Path, topics: list[str], hidden: bool, seed: int) -> dict:
    return checked(error_document(tr("bad input: {problem}", problem=message), topics, submission,
                                  "hidden" if hidden else "public", seed, now(), 0.0))
