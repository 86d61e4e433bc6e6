"""A student's progress, kept in a small file in their workspace: checks passed and hints read."""
from __future__ import annotations

import json
import os
import stat
from datetime import datetime, timezone
from pathlib import Path

from grader import output
from grader.text import one_line

FILE = ".infergrade-progress.json"
MAX_BYTES = 2**20
STATUSES = ("passed", "failed", "error", "timeout", "not_started")


def blocked_by(status: str | None, hint: str | None, waiting_for: str | None) -> str | None:
    """The other function that a check of `hint` ("sampling.apply_temperature", whose check also calls
    `filtered_probs`) waits for: still stubbed, raising, or with a helper still stubbed when the check called it;
    else None. Such a check says nothing about the function it checks."""
    if status not in ("not_started", "error", "failed") or not waiting_for or not hint or "." not in hint:
        return None
    return None if waiting_for.split(".")[0] == hint.split(".")[1] else waiting_for


def workspace(given: Path) -> Path:
    """Where progress is kept: the folder the user named (never the grader's copy), or a notebook's folder."""
    return given.parent if given.suffix == ".ipynb" else given


def path_for(submission: Path) -> Path:
    return submission / FILE


def load(submission: Path) -> dict:
    """The recorded progress; entries of the wrong shape (a hand-edited or hostile file) are dropped."""
    empty = {"checks": {}, "hints": {}}
    try:
        fd = os.open(path_for(submission), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return empty
            data = json.loads(f.read(MAX_BYTES))
    except (OSError, ValueError):
        return empty
    if not isinstance(data, dict):
        return empty
    checks, hints = data.get("checks"), data.get("hints")
    return {
        "checks": {k: {"passed": v["passed"], "at": one_line(str(v.get("at", ""))[:40]),
                       "status": v.get("status") if v.get("status") in STATUSES else None,
                       "function": _shown(v.get("function")), "waiting_for": _shown(v.get("waiting_for"))}
                   for k, v in (checks.items() if isinstance(checks, dict) else ())
                   if isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("passed"), bool)},
        "hints": {k: v for k, v in (hints.items() if isinstance(hints, dict) else ())
                  if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 3},
    }


def _shown(value) -> str | None:
    """A name from the file (which the student may write) as `progress` may show it, or None if it is no text."""
    return one_line(value) if isinstance(value, str) else None


def _save(submission: Path, data: dict) -> None:
    """Write the record whole, in a new file renamed over whatever is in its place (a link is replaced, its
    target never opened: `output.write_text`, the grader's own name)."""
    try:
        output.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", path_for(submission), named=False)
    except OSError:
        pass  # a read-only workspace (or a folder in the file's place) only loses the progress record


def record_checks(submission: Path, doc: dict) -> None:
    data = load(submission)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for topic in doc["topics"]:
        for c in topic["checks"]:
            if c["status"] not in ("skipped", "interrupted"):
                data["checks"][c["id"]] = {"passed": c["status"] == "passed", "at": now, "status": c["status"],
                                           "function": c["hint"], "waiting_for": c.get("function")}
    _save(submission, data)


def record_hint(submission: Path, key: str, level: int) -> None:
    data = load(submission)
    data["hints"][key] = max(level, int(data["hints"].get(key, 0)))
    _save(submission, data)


def summary(submission: Path) -> dict:
    data = load(submission)
    checks = data["checks"]
    return {"checks_passed": sum(bool(v.get("passed")) for v in checks.values()), "checks_seen": len(checks),
            "hints_read": data["hints"], "reported_by": "the submission folder's progress file (not verified)"}
