"""A student's progress, kept in a small file in their workspace: checks passed and hints read."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

FILE = ".infergrade-progress.json"


def path_for(submission: Path) -> Path:
    return submission / FILE


def load(submission: Path) -> dict:
    try:
        data = json.loads(path_for(submission).read_text())
    except (OSError, ValueError):
        return {"checks": {}, "hints": {}}
    if not isinstance(data, dict):
        return {"checks": {}, "hints": {}}
    return {"checks": dict(data.get("checks", {})), "hints": dict(data.get("hints", {}))}


def _save(submission: Path, data: dict) -> None:
    try:
        path_for(submission).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # a read-only workspace only loses the progress record


def record_checks(submission: Path, doc: dict) -> None:
    data = load(submission)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for topic in doc["topics"]:
        for c in topic["checks"]:
            if c["status"] != "skipped":
                data["checks"][c["id"]] = {"passed": c["status"] == "passed", "at": now}
    _save(submission, data)


def record_hint(submission: Path, key: str, level: int) -> None:
    data = load(submission)
    data["hints"][key] = max(level, int(data["hints"].get(key, 0)))
    _save(submission, data)


def summary(submission: Path) -> dict:
    data = load(submission)
    checks = data["checks"]
    return {"checks_passed": sum(bool(v.get("passed")) for v in checks.values()), "checks_seen": len(checks),
            "hints_read": data["hints"]}
