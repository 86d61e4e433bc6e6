"""Grade a class: one submission per subfolder or archive, in parallel worker processes, with a CSV of grades.

Each worker is a fresh interpreter (spawned, never forked from the grader) that keeps its own warm zygote for all
the submissions it grades, so a batch pays for `import torch` once per worker rather than once per student; the
parent imports nothing heavy. A submission that cannot be unpacked, imported or graded gets an error results
file; nothing stops the batch but Ctrl-C or SIGTERM, which end the workers within seconds.
"""
from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from grader import interrupt, output
from grader.text import printable
from grader.sandbox import namespaces
from grader.submission.archive import BadArchive, unpack
from grader.submission.snapshot import Snapshot

SOURCE_BYTES = 2**20  # of one topic module kept for the similarity report
ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
ATTEMPTS = 3
STOP_GRACE_S = 3.0  # after an interrupt, how long a worker gets to end its checks before SIGKILL
MANIFEST = "batch.json"


def submissions(folder: Path) -> list[Path]:
    """The submissions in `folder`: every subfolder and every archive, by name (its kind is read later), and every
    symbolic link, which is never followed: it gets an error row naming it (`unpack_and_resolve`)."""
    return [p for p in sorted(folder.iterdir()) if not p.name.startswith(".")
            and (p.is_symlink() or p.is_dir() or p.name.endswith(ARCHIVES))]


def student(path: Path) -> str:
    """The submission's name: the folder's, or the archive's without its suffix."""
    name = path.name
    for suffix in sorted(ARCHIVES, key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def class_digest(names: list[str]) -> str:
    """A sha256 of a class's student names, whatever their order: shards cut from one class share it."""
    return hashlib.sha256(json.dumps(sorted(names)).encode()).hexdigest()


def shard_of(names: list[str], index: int, count: int) -> list[str]:
    """Shard `index` of `count` (from 1) of a class: every count-th of its names in sorted order, from the
    index-th. Sorting (by code point) makes it the same slice on any machine, whatever the order of the files on
    disk; the shards are disjoint, cover the class and differ in size by one at most."""
    assert 1 <= index <= count, (index, count)
    return sorted(names)[index - 1::count]


@dataclass
class Shard:
    """The slice of a class an output folder grades (grade-batch --shard K/N): its students, and the whole class's
    size and digest, so that `merge` can tell shards of one class from shards of two."""
    index: int
    count: int
    class_size: int
    class_sha256: str
    students: list[str]

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def _student_name(name) -> str:
    """A student name read from a manifest, or ValueError: it names a results file in the folder."""
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"{name!r} cannot be a student's name")
    return name


@dataclass
class Manifest:
    """What an output folder was graded with (OUT/batch.json): one seed, mode and set of topics per class, the
    grader's version, and the shard where it grades a slice of the class."""
    seed: int
    hidden: bool
    topics: list[str]
    max_scores: dict[str, float]
    shard: Shard | None = None
    version: str = field(default_factory=lambda: metadata.version("infergrade"))

    def write(self, out: Path) -> None:
        doc = {"seed": self.seed, "mode": "hidden" if self.hidden else "public", "topics": self.topics,
               "max_scores": self.max_scores, "tool": {"name": "infergrade", "version": self.version}}
        if self.shard is not None:
            doc["shard"] = asdict(self.shard)
        output.write_text(json.dumps(doc, indent=2) + "\n", out / MANIFEST)

    @classmethod
    def read(cls, out: Path) -> Manifest | None:
        """The folder's manifest, or None where it has none; ValueError naming the file when it is unreadable."""
        path = out / MANIFEST
        if not path.exists():
            return None
        try:
            doc = json.loads(path.read_text())
            shard = doc.get("shard")
            if shard is not None:
                shard = Shard(int(shard["index"]), int(shard["count"]), int(shard["class_size"]),
                              str(shard["class_sha256"]), [_student_name(n) for n in shard["students"]])
                if not 1 <= shard.index <= shard.count:
                    raise ValueError(f"shard {shard.label} is not one of {shard.count}")
            return cls(int(doc["seed"]), {"hidden": True, "public": False}[doc["mode"]], list(doc["topics"]),
                       {str(k): _points(v) for k, v in doc.get("max_scores", {}).items()}, shard,
                       str(doc["tool"]["version"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} is not a grade-batch manifest ({exc}): move it away or use another --out")


def _points(value) -> int | float:
    """A maximum as batch.json holds it, its type kept (105 stays 105: a merged manifest is written byte for byte as
    one run's); TypeError for anything but a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"a maximum score is {value!r}, not a number")
    return value


def settle(manifest: Manifest | None, seed: int | None, hidden: bool | None, topics: list[str] | None,
           seeds_found: set[int]) -> tuple[int, bool | None, list[str] | None]:
    """The seed, mode and topics to grade with: the manifest's where the command line leaves them out (and a
    folder without a manifest keeps the one seed its results share); ValueError when the two disagree."""
    recorded = manifest.seed if manifest else next(iter(seeds_found)) if len(seeds_found) == 1 else None
    if seed is not None and recorded is not None and seed != recorded:
        raise ValueError(f"this output folder was graded with seed {recorded}: grading it with --seed {seed} "
                         f"would mix two seeds in one class. Leave --seed out (or pass --seed {recorded}) to go "
                         f"on, or choose a new --out folder")
    if manifest and hidden is not None and hidden != manifest.hidden:
        raise ValueError(f"this output folder holds {'hidden' if manifest.hidden else 'public'} grades: leave "
                         f"--hidden/--public out to go on, or choose a new --out folder")
    if manifest and topics is not None and topics != manifest.topics:
        raise ValueError(f"this output folder grades the topics {', '.join(manifest.topics)}: leave --topic out "
                         f"to go on, or choose a new --out folder")
    if seed is None:
        seed = recorded
    if manifest:
        hidden, topics = manifest.hidden, manifest.topics
    return seed, hidden, topics


def settle_shard(manifest: Manifest | None, shard: tuple[int, int] | None) -> None:
    """ValueError when a folder graded as one shard (or as a whole class) would now get another's results."""
    recorded = (manifest.shard.index, manifest.shard.count) if manifest and manifest.shard else None
    if manifest is None or recorded == shard:
        return
    held = f"shard {recorded[0]}/{recorded[1]} of a class" if recorded else "a whole class (no --shard)"
    asked = f"--shard {shard[0]}/{shard[1]}" if shard else "the whole class"
    go_on = f"pass --shard {recorded[0]}/{recorded[1]}" if recorded else "leave --shard out"
    raise ValueError(f"this output folder holds {held}: grading {asked} into it would mix two slices. "
                     f"{go_on[0].upper()}{go_on[1:]} to go on, or choose a new --out folder")


def unpack_and_resolve(path: Path, scratch: Path) -> Snapshot:
    """The grader's copy of the topic modules of one upload (an archive unpacked into `scratch`, or the folder
    itself), which the caller removes; BadInput for an upload that is a symbolic link, whatever it points to."""
    from grader.submission.folder import resolve_submission

    # the instructor's folders resolved, the student's own as given: a link there is refused, never unpacked
    archive = path.is_file() and not path.is_symlink()
    folder = unpack(path, scratch.resolve()) if archive else path.parent.resolve() / path.name
    return resolve_submission(folder)[0]


_busy, _stopping = [False], [False]  # in a worker: grading a submission now; asked to stop by the grader


def start_worker() -> None:
    """A worker's start: it dies with the grader, leaves Ctrl-C to it, stops on its SIGTERM, and starts its
    zygote (a fresh interpreter) before importing torch itself."""
    namespaces.die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    from grader.sandbox.zygote import shared

    shared()  # its interpreter imports torch while this one does
    import torch

    torch.set_num_threads(1)


def _stop_worker(signum, frame):
    """SIGTERM from the grader: stop the checks where they are (their sandboxes and scratch end), then exit."""
    signal.signal(signum, signal.SIG_IGN)
    _stopping[0] = True
    if not _busy[0]:
        os._exit(128 + signum)
    raise interrupt.Interrupted(signum)


def grade_one(path: Path, topics: list[str], hidden: bool, seed: int, previous: Path | None = None
              ) -> tuple[dict | None, dict[str, float] | None, dict[str, str]]:
    """In a worker: the results document of one upload, always (one that cannot be unpacked or graded gets an
    error document saying why), or None where `previous` already grades its files (--resume); when some topic
    was not graded, every topic's maximum (an ungradable submission keeps the maximum in grades.csv); and the
    text of each topic module graded, for the class's similarity report."""
    _busy[0] = True
    try:
        if previous is not None and already_graded(path, previous, hidden, seed):
            return None, None, {}
        doc, sources = _grade_upload(path, topics, hidden, seed)
        doc = json.loads(json.dumps(doc))  # plain types: the parent would import torch to unpickle its version str
        return doc, (topic_points(topics, hidden) if any(not t["checks"] for t in doc["topics"]) else None), sources
    finally:
        _busy[0] = False
        if _stopping[0]:
            os._exit(128 + signal.SIGTERM)  # the grader is ending the batch: no next submission


def _grade_upload(path: Path, topics: list[str], hidden: bool, seed: int) -> tuple[dict, dict[str, str]]:
    from grader.grading import bad_input_document, grade
    from grader.submission.folder import BadInput

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="infergrade-batch-") as scratch:
        try:
            snapshot = unpack_and_resolve(path, Path(scratch))
        except Exception as exc:  # noqa: BLE001 - zlib.error, EOFError, ...: this upload's error, not the batch's
            why = str(exc) if isinstance(exc, (BadInput, BadArchive)) else \
                f"it could not be unpacked ({type(exc).__name__}: {exc})"
            why = why.replace(str(Path(scratch).resolve()), path.name)  # the upload, not a random scratch folder
            doc = bad_input_document(f"{path.name}: {why}", path, topics, hidden, seed)
            doc["duration_s"] = round(time.monotonic() - started, 4)  # what the upload cost before it was refused
            return doc, {}
        with snapshot:
            doc = grade(snapshot, topics, hidden=hidden, seed=seed, with_progress=False)
            sources = {t: text for t in topics if (text := module_text(snapshot.folder / f"{t}.py")) is not None}
        upload = Path(scratch).resolve() if path.is_file() else path.parent.resolve() / path.name
        doc["submission"]["path"] = str(path)  # the upload, not the scratch folder it was graded from
        doc["submission"]["graded"] = os.path.relpath(snapshot.given, upload)  # "." or the folder below it
        return doc, sources


def module_text(path: Path) -> str | None:
    """A topic module of the grader's copy, as text (at most SOURCE_BYTES), or None where it has none."""
    try:
        with open(path, "rb") as f:
            return f.read(SOURCE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def topic_points(topics: list[str], hidden: bool) -> dict[str, float]:
    """In a worker: each topic's maximum in this mode, the sum of its checks' points, read from their marks."""
    import importlib

    from grader import topics as registry
    from grader.engine.runner import load_hypothesis_profile

    load_hypothesis_profile()  # as before a run: the check modules build their settings at import
    points = {}
    for topic in topics:
        modules = [importlib.import_module(f"grader.checks.{topic}.{path.stem}")
                   for path in registry.check_files(topic, hidden)]
        points[topic] = float(sum(meta.points for m in modules for name, fn in vars(m).items()
                                  if name.startswith("test") and (meta := getattr(fn, "__infergrade__", None))))
    return points


def already_graded(path: Path, result: Path, hidden: bool, seed: int) -> bool:
    """Whether `result` grades this submission's current files with this seed and mode (for --resume)."""
    if not result.exists():
        return False
    try:
        doc = json.loads(result.read_text())
        if not (doc["seed"] == seed and doc["mode"] == ("hidden" if hidden else "public")
                and doc["status"] == "completed"):
            return False
        with tempfile.TemporaryDirectory(prefix="infergrade-batch-") as scratch, \
                unpack_and_resolve(path, Path(scratch)) as graded:  # what grade_one would grade: an archive unpacked
            return doc["submission"]["files"] == graded.files
    except Exception:  # noqa: BLE001 - an upload that cannot be read again is regraded, and refused then
        return False


@dataclass
class Outcome:
    """One submission done: its document (None: already graded, --resume) and the topics' maxima if known."""
    path: Path
    doc: dict | None
    max_scores: dict[str, float] | None = None
    sources: dict[str, str] = field(default_factory=dict)  # each topic module graded, by topic


def grade_all(paths: list[Path], topics: list[str], hidden: bool, seed: int, jobs: int,
              previous: dict[Path, Path] | None = None) -> Iterator[Outcome]:
    """Grade `paths` in `jobs` spawned workers; yields each Outcome as it finishes. `previous` maps a path to
    its earlier results file, skipped where it grades the same files (--resume).

    A worker that dies (the grader itself crashed: a submission runs in a sandboxed child and cannot) breaks the
    pool; the unfinished submissions go to a new one, and one that was unfinished in ATTEMPTS broken pools gets
    an error document. An interrupt (or closing this generator) ends every worker before it propagates.
    """
    attempts: Counter[Path] = Counter()
    pending = list(paths)
    context = multiprocessing.get_context("spawn")
    while pending:
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=context,
                                   initializer=start_worker)
        try:
            futures = {pool.submit(grade_one, p, topics, hidden, seed, (previous or {}).get(p)): p for p in pending}
            pending = []
            for future in as_completed(futures):
                path = futures[future]
                try:
                    doc, max_scores, sources = future.result()
                except BrokenProcessPool:
                    attempts[path] += 1
                    if attempts[path] < ATTEMPTS:
                        pending.append(path)
                    else:
                        yield Outcome(path, failed_document(path, topics, hidden, seed, f"the grading process "
                                                            f"died {ATTEMPTS} times while grading {path.name}"))
                    continue
                except Exception as exc:  # noqa: BLE001 - a result that did not come back is this upload's error
                    yield Outcome(path, failed_document(path, topics, hidden, seed, f"{type(exc).__name__}: {exc}"))
                    continue
                yield Outcome(path, doc, max_scores, sources)
        except BaseException:
            stop_workers(pool)
            raise
        pool.shutdown()


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """End every worker now: queued submissions are dropped, running ones get STOP_GRACE_S to end their
    checks (SIGTERM), then SIGKILL; a worker's zygote and sandboxes die with it."""
    pool.shutdown(wait=False, cancel_futures=True)
    workers = multiprocessing.active_children()
    for worker in workers:
        worker.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        if worker.is_alive():
            worker.kill()
            worker.join(1)


def failed_document(path: Path, topics: list[str], hidden: bool, seed: int, why: str) -> dict:
    """An error document for an upload whose grading failed outside the checks (rare: imports the grader)."""
    from grader.grading import bad_input_document

    doc = bad_input_document(f"{path.name}: {why}", path, topics, hidden, seed)
    doc["error"] = printable(f"internal grader error: {why}")  # `why` may name the upload
    return doc


def write_results(doc: dict, result: Path) -> None:
    """Write one submission's results document whole (`output.write_text`: never over a device or FIFO)."""
    output.write_text(json.dumps(doc, indent=2) + "\n", result)
