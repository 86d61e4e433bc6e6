"""The results document: built from check results, validated against the schema and its invariants, written."""
from __future__ import annotations

import functools
import json
import math
import platform
import sys
import threading
from importlib import metadata
from pathlib import Path

import torch

from grader import interrupt, language
from grader.engine.plugin import TIMEOUTS_TO_STOP, CheckResult
from grader.language import tr
from grader.text import printable
from grader.wording import count

SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "results.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text())
SCHEMA_VERSION = SCHEMA["properties"]["schema_version"]["const"]


@functools.cache
def validator():
    """The schema's validator, made once: jsonschema's import and the compile take a fifth of a second, which
    `prepare` spends while the checks run rather than before them."""
    import jsonschema

    return jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def prepare() -> None:
    """Make the validator on a thread of its own (the grader mostly waits on its checks meanwhile), which no
    signal interrupts in the middle of an import (`interrupt.while_importing`)."""
    def make() -> None:
        with interrupt.while_importing():
            validator()

    threading.Thread(target=make, name="schema", daemon=True).start()


def tool_info() -> dict:
    try:
        version = metadata.version("infergrade")
    except metadata.PackageNotFoundError:
        version = "0.1.0+source"
    try:
        triton = metadata.version("triton")
    except metadata.PackageNotFoundError:
        triton = None
    return {"name": "infergrade", "version": version, "python": platform.python_version(),
            "torch": torch.__version__, "triton": triton, "platform": f"{sys.platform}-{platform.machine()}"}


NAMESPACES = ("user_namespace", "mount_namespace", "pid_namespace", "network_namespace", "ipc_namespace",
              "uts_namespace")
ISOLATION_FIELDS = {**{k: bool for k in NAMESPACES}, "private_root": bool, "host_uid": int, "landlock_abi": int,
                    "seccomp": bool, "watchdog": bool, "watchdog_realtime": bool, "address_space_headroom_bytes": int,
                    "output_bytes": int, "tmp_bytes": int, "tmp_files": int, "open_files": int, "processes": int,
                    "cgroup_namespace": bool, "proc_hidepid": bool, "autogroup": bool, "nice": int, "cpu_seconds": int}
MEMORY_CGROUPS = ("v2", "v1")  # the versions of a memory (or cpu) cgroup that can hold a sandbox's cap (or share)


def isolation_level(info: dict) -> dict:
    """Name the walls the children reached, layer by layer (reported before any submission code runs).

    `level` joins the layers that held: namespaces (all six), private-root, unprivileged (not root towards the
    host), seccomp, landlock, watchdog (summed memory and task caps over the sandbox's processes, polled),
    memory-cgroup (the kernel holds the summed memory cap; `memory_cgroup` says which version, null where none
    could be made), cpu-cgroup (each sandbox has an equal share of the CPU; `cpu_cgroup` likewise); rlimits and
    timeouts always apply.
    """
    cgroup = info.get("memory_cgroup") if info.get("memory_cgroup") in MEMORY_CGROUPS else None
    cpu = info.get("cpu_cgroup") if info.get("cpu_cgroup") in MEMORY_CGROUPS else None
    info = {k: v for k, v in info.items() if k in ISOLATION_FIELDS and type(v) is ISOLATION_FIELDS[k]}
    layers = {"namespaces": all(info.get(k) for k in NAMESPACES), "private-root": info.get("private_root", False),
              "unprivileged": info.get("host_uid", 0) != 0, "seccomp": info.get("seccomp", False),
              "landlock": info.get("landlock_abi", 0) > 0, "watchdog": info.get("watchdog", False),
              "memory-cgroup": cgroup is not None, "cpu-cgroup": cpu is not None}
    return {"level": "+".join([name for name, held in layers.items() if held] + ["rlimits"]), **info,
            "memory_cgroup": cgroup, "cpu_cgroup": cpu}


NOT_RUN = "not run: "  # the message of a check whose module could not be imported (the topic says why, once)


def is_not_run(message: str) -> bool:
    """Whether a check's message says it was not run (the topic says why), in either language of the run."""
    return message.startswith((NOT_RUN, language.screens().get(NOT_RUN, NOT_RUN)))


def _check_entry(r: CheckResult, interrupted: bool) -> dict:
    status, message = r.status, r.message
    if status == "pending":  # never ran to the end: it scores nothing and keeps its points in the maximum
        assert interrupted, f"{r.id} did not run although the run was not interrupted"
        status, message = "interrupted", tr("the run was interrupted before this check finished")
    if r.import_failure:
        message = tr(NOT_RUN) + tr("{module} could not be imported (see the topic's error)", module=f"{r.topic}.py")
    if r.stopped:
        message = tr(NOT_RUN) + tr("{topic}'s checks were stopped (see the topic's message)", topic=r.topic)
    # every string shown to a reader is made printable here, once: a message may quote what the submission returned
    title = language.topic_text(r.topic, "titles", r.id.split(".", 1)[1], r.title)
    entry = {"id": r.id, "title": printable(title), "score": r.score, "max_score": r.max_score,
             "points": r.max_score, "status": status, "message": printable(message),
             "misconception": r.misconception if status == "failed" else None, "seed": r.seed,
             "visibility": r.visibility, "hint": r.hint, "duration_s": round(r.duration_s, 4),
             "internal_error": r.internal_error, "function": r.function if r.visibility == "public" else None}
    if r.output and status in ("failed", "error", "timeout") and r.visibility == "public":
        entry["output"] = printable(r.output)
    return entry


def _topic_entry(topic: str, checks: list[CheckResult], interrupted: bool) -> dict:
    entries = [_check_entry(c, interrupted) for c in checks]
    imports = [c.message for c in checks if c.import_failure]
    internal = [c for c in checks if c.internal_error]
    if imports:
        status, message = "error", imports[0]
    elif internal:
        status, message = "error", tr("grader error in {check}", check=internal[0].id)
    elif any(c.stopped for c in checks):
        status, message = "failed", tr("stopped after {timeouts} checks timed out in a row: the rest of {topic}'s "
                                       "checks were not run", timeouts=TIMEOUTS_TO_STOP, topic=topic)
    elif all(e["status"] == "passed" for e in entries):
        status, message = "passed", None
    elif all(e["status"] in ("passed", "skipped", "interrupted") for e in entries):
        status, message = "incomplete", tr("not every check ran: see the skipped or interrupted checks")
    else:
        status, message = "failed", None
    return {"id": topic, "score": sum(e["score"] for e in entries), "max_score": sum(e["max_score"] for e in entries),
            "status": status, "message": message and printable(message),
            "duration_s": round(sum(c.duration_s for c in checks), 4),
            "checks": entries}


def incomplete_reason(topic_entries: list[dict]) -> str | None:
    """Why the maximum includes checks that could not run here (say, without triton), or None."""
    skipped = [c for t in topic_entries for c in t["checks"] if c["status"] == "skipped"]
    if not skipped:
        return None
    reasons = sorted({c["message"] for c in skipped})
    return tr("{checks} ({points}) could not run here and score 0: {reasons}", checks=count(len(skipped), "check"),
              points=count(sum(c["points"] for c in skipped), "point"), reasons=tr("; ").join(reasons))


def build(checks: list[CheckResult], topics: list[str], submission: Path, mode: str, seed: int,
          started_at: str, duration_s: float, progress: dict | None = None, error: str | None = None,
          interrupted: str | None = None, files: dict[str, str] | None = None) -> dict:
    """The results document; `interrupted` is the reason a run stopped early (its unfinished checks score 0);
    `files` the sha256 of each file graded, by its path in the submission (`snapshot.Snapshot.files`: taken as
    they were copied, never read again from the folder; none where nothing was graded)."""
    by_topic: dict[str, list[CheckResult]] = {t: [] for t in topics}
    for c in checks:
        by_topic.setdefault(c.topic, []).append(c)
    topic_entries = [_topic_entry(t, cs, interrupted is not None) for t, cs in by_topic.items()]
    isolation = next((c.isolation for c in checks if c.isolation), {})
    status = "error" if error else "interrupted" if interrupted else "completed"
    said = error or interrupted  # why it stopped, which may name an upload
    doc = {
        "schema_version": SCHEMA_VERSION, "status": status, "error": printable(said) if said else None,
        "incomplete": incomplete_reason(topic_entries),
        "score": sum(t["score"] for t in topic_entries), "max_score": sum(t["max_score"] for t in topic_entries),
        "seed": seed, "mode": mode, "lang": language.current(),
        "submission": {"path": printable(str(submission)), "files": dict(files or {})},
        "tool": tool_info(), "isolation": isolation_level(isolation), "started_at": started_at,
        "duration_s": round(duration_s, 4), "topics": topic_entries,
    }
    if progress is not None:
        doc["progress"] = progress
    return doc


def problems(doc: dict) -> list[str]:
    """Schema errors and broken invariants (totals add up, 0 <= score <= max, statuses agree with scores)."""
    found = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(doc)]
    if found:
        return found

    def bad_points(where, score, max_score):
        if not (math.isfinite(score) and math.isfinite(max_score) and 0 <= score <= max_score):
            found.append(f"{where}: score {score} outside [0, {max_score}]")

    bad_points("results", doc["score"], doc["max_score"])
    if doc["score"] != sum(t["score"] for t in doc["topics"]) or \
            doc["max_score"] != sum(t["max_score"] for t in doc["topics"]):
        found.append("results: totals do not add up over topics")
    for t in doc["topics"]:
        bad_points(t["id"], t["score"], t["max_score"])
        if t["score"] != sum(c["score"] for c in t["checks"]) or \
                t["max_score"] != sum(c["max_score"] for c in t["checks"]):
            found.append(f"{t['id']}: totals do not add up over checks")
        for c in t["checks"]:
            bad_points(c["id"], c["score"], c["max_score"])
            if c["max_score"] != c["points"]:
                found.append(f"{c['id']}: max_score {c['max_score']} is not its {c['points']} points")
            if (c["status"] == "passed") != (c["score"] == c["max_score"]) and c["max_score"] > 0:
                found.append(f"{c['id']}: status {c['status']} disagrees with score {c['score']}/{c['max_score']}")
            if c["status"] != "passed" and c["score"] != 0:
                found.append(f"{c['id']}: status {c['status']} with a non-zero score")
    return found


def error_document(error: str, topics: list[str], submission: Path, mode: str, seed: int, started_at: str,
                   duration_s: float, status: str = "error") -> dict:
    """The results of a run that could not complete: an error status, never a silent score."""
    return build([], [], submission, mode, seed, started_at, duration_s, error=error) | {
        "status": status,
        "topics": [{"id": t, "score": 0, "max_score": 0, "status": "error", "message": printable(error),
                    "duration_s": 0.0, "checks": []} for t in topics]}


def checked(doc: dict) -> dict:
    """`doc` if it is valid, else an error document saying why (a broken document never goes out)."""
    found = problems(doc)
    if not found:
        return doc
    seed = doc.get("seed")
    replacement = error_document(
        "internal error: the results failed validation: " + "; ".join(found[:5]), [],
        Path(str(doc.get("submission", {}).get("path", ""))), doc.get("mode") if doc.get("mode") in
        ("public", "hidden") else "public", seed if isinstance(seed, int) and seed >= 0 else 0,
        str(doc.get("started_at") or "1970-01-01T00:00:00+00:00"), 0.0)
    assert not problems(replacement), problems(replacement)
    return replacement
