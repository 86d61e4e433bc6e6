"""Grade a class: one submission per subfolder or archive, in parallel worker processes, with a CSV of grades.

Each worker is a fresh interpreter (spawned, never forked from the grader) that keeps its own warm zygote for all
the submissions it grades, so a batch pays for `import torch` once per worker rather than once per student.
A submission that cannot be unpacked, imported or graded gets an error results file; nothing stops the batch.
"""
from __future__ import annotations

import csv
import json
import multiprocessing
import tarfile
import tempfile
import zipfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from grader import output
from grader.results import file_hashes

ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")
MAX_UNPACKED_BYTES = 64 * 2**20
MAX_UNPACKED_FILES = 2000
ATTEMPTS = 3


class BadArchive(ValueError):
    """An archive that is not unpacked: unreadable, too large, or with a path or link that leaves it."""


def submissions(folder: Path) -> list[Path]:
    """The submissions in `folder`: every subfolder and every archive, by name."""
    found = [p for p in sorted(folder.iterdir()) if not p.name.startswith(".")
             and (p.is_dir() or p.name.endswith(ARCHIVES)) and not p.is_symlink()]
    return found


def student(path: Path) -> str:
    """The submission's name: the folder's, or the archive's without its suffix."""
    name = path.name
    for suffix in sorted(ARCHIVES, key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def unpack(archive: Path, into: Path) -> Path:
    """Extract `archive` into the empty folder `into`, refusing links, devices, paths that leave it and size."""
    members: list[tuple[str, int]] = []
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if (info.external_attr >> 16) & 0o170000 not in (0, 0o100000, 0o040000):
                    raise BadArchive(f"{info.filename!r} is a link or a device")
                members.append((info.filename, info.file_size))
            _check(members)
            z.extractall(into)
    else:
        with tarfile.open(archive) as t:
            for info in t.getmembers():
                if not (info.isfile() or info.isdir()):
                    raise BadArchive(f"{info.name!r} is a link or a device")
                members.append((info.name, info.size))
            _check(members)
            t.extractall(into, filter="data")
    return into


def _check(members: list[tuple[str, int]]) -> None:
    if len(members) > MAX_UNPACKED_FILES:
        raise BadArchive(f"it holds {len(members)} files, more than {MAX_UNPACKED_FILES}")
    if sum(size for _, size in members) > MAX_UNPACKED_BYTES:
        raise BadArchive(f"it unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MiB")
    for name, _ in members:
        parts = Path(name).parts
        if Path(name).is_absolute() or ".." in parts or name.startswith(("/", "\\")):
            raise BadArchive(f"{name!r} would be written outside the archive's folder")


def grade_one(path: Path, topics: list[str], hidden: bool, seed: int) -> dict:
    """In a worker: unpack if needed, find the modules, grade; always a results document."""
    from grader.grading import BadInput, bad_input_document, grade, resolve_submission

    with tempfile.TemporaryDirectory(prefix="infergrade-batch-") as scratch:
        try:
            # the instructor's folders resolved, the student's own as given: a link there is refused
            folder = unpack(path, Path(scratch).resolve()) if path.is_file() else path.parent.resolve() / path.name
            found, _ = resolve_submission(folder)
        except (BadInput, BadArchive, OSError, zipfile.BadZipFile, tarfile.TarError) as exc:
            return bad_input_document(f"{path.name}: {exc}", path, topics, hidden, seed)
        doc = grade(found, topics, hidden=hidden, seed=seed, with_progress=False)
        doc["submission"]["path"] = str(path)  # the upload, not the scratch folder it was graded from
        return doc


def already_graded(path: Path, result: Path, hidden: bool, seed: int) -> bool:
    """Whether `result` grades this submission's current files with this seed and mode (for --resume)."""
    from grader.grading import resolve_submission

    if not result.exists() or not path.is_dir():
        return False  # archives are regraded: their files are hashed only once unpacked
    try:
        doc = json.loads(result.read_text())
        graded, _ = resolve_submission(path.parent.resolve() / path.name)  # the folder grade_one grades
        return (doc["seed"] == seed and doc["mode"] == ("hidden" if hidden else "public")
                and doc["status"] == "completed" and doc["submission"]["files"] == file_hashes(graded))
    except (OSError, ValueError, KeyError, TypeError):  # BadInput is a ValueError: regraded, and refused then
        return False


def grade_all(paths: list[Path], topics: list[str], hidden: bool, seed: int, jobs: int
              ) -> Iterator[tuple[Path, dict]]:
    """Grade `paths` in `jobs` spawned workers; yields (path, document) as each finishes.

    A worker that dies (the grader itself crashed: a submission runs in a sandboxed child and cannot) breaks the
    pool; the unfinished submissions go to a new one, and one that was unfinished in ATTEMPTS broken pools gets
    an error document.
    """
    attempts: Counter[Path] = Counter()
    pending = list(paths)
    context = multiprocessing.get_context("spawn")
    while pending:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(grade_one, p, topics, hidden, seed): p for p in pending}
            pending = []
            for future in as_completed(futures):
                path = futures[future]
                try:
                    yield path, future.result()
                except BrokenProcessPool:
                    attempts[path] += 1
                    if attempts[path] < ATTEMPTS:
                        pending.append(path)
                    else:
                        yield path, _worker_died(path, topics, hidden, seed)


def _worker_died(path: Path, topics: list[str], hidden: bool, seed: int) -> dict:
    from grader.grading import bad_input_document

    doc = bad_input_document(f"{path.name}: the grading process died", path, topics, hidden, seed)
    doc["error"] = f"internal grader error: the grading process died {ATTEMPTS} times while grading {path.name}"
    return doc


def write_csv(out: Path, topics: list[str], docs: dict[str, dict]) -> Path:
    """grades.csv: one row per student, a column per topic, the total, the maximum and the status."""
    path = out / "grades.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *topics, "total", "max", "status"])
        for name in sorted(docs):
            doc = docs[name]
            scores = {t["id"]: t["score"] for t in doc["topics"]}
            writer.writerow([name, *(_number(scores.get(t, 0)) for t in topics), _number(doc["score"]),
                             _number(doc["max_score"]), doc["status"]])
    return path


def _number(x: float) -> str:
    return f"{x:g}"


def write_results(doc: dict, result: Path) -> None:
    """Write one submission's results document whole (`output.write_text`: never over a device or FIFO)."""
    output.write_text(json.dumps(doc, indent=2) + "\n", result)
