"""Join the output folders of `grade-batch --shard K/N` into the folder one run over the whole class writes: every
student's results, grades.csv, batch.json, and report.html.

Shards are joined only when they are the N slices of one class graded alike: the same seed, mode, topics, grader
version and class (its student names' digest), every shard once, no student in two. Anything else is refused with
a ValueError saying which folders differ and how, before anything is written.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from grader import output
from grader.instructor import batch, grades, report, similarity
from grader.results import problems

SHARED = {"seed": lambda m: m.seed, "mode": lambda m: "hidden" if m.hidden else "public",
          "topics": lambda m: ", ".join(m.topics), "grader version": lambda m: m.version,
          "number of shards": lambda m: m.shard.count}  # what every shard of one class has in common


@dataclass
class ShardFolder:
    """One shard's output folder and its manifest (whose `shard` is set)."""
    folder: Path
    manifest: batch.Manifest

    @property
    def shard(self) -> batch.Shard:
        return self.manifest.shard


def read_shards(folders: list[Path]) -> list[ShardFolder]:
    """Each folder's manifest; ValueError for a folder given twice or one that is not a shard's output."""
    shards, seen = [], {}
    for folder in folders:
        if folder.resolve() in seen:
            raise ValueError(f"{folder} is given twice (as {seen[folder.resolve()]} too)")
        seen[folder.resolve()] = folder
        manifest = batch.Manifest.read(folder)
        if manifest is None:
            raise ValueError(f"{folder} holds no {batch.MANIFEST}: it is not an output folder of grade-batch")
        if manifest.shard is None:
            raise ValueError(f"{folder} grades a whole class, not a shard: merge joins the output folders of "
                             f"grade-batch --shard K/N")
        shards.append(ShardFolder(folder, manifest))
    return shards


def check_one_class(shards: list[ShardFolder]) -> None:
    """ValueError unless the shards were graded alike, from one class, each of 1..N once, no student twice, and
    together hold that whole class."""
    first = shards[0]
    for other in shards[1:]:
        for what, of in SHARED.items():
            if of(first.manifest) != of(other.manifest):
                raise ValueError(f"{first.folder} and {other.folder} differ in {what} ({of(first.manifest)} and "
                                 f"{of(other.manifest)}): the shards of a class are graded with one seed, mode, "
                                 f"set of topics and grader version; regrade the odd one with the others'")
        if other.shard.class_sha256 != first.shard.class_sha256:
            raise ValueError(f"{first.folder} and {other.folder} are shards of different classes "
                             f"({first.shard.class_size} and {other.shard.class_size} submissions, or other names): "
                             f"the folder of submissions changed between their runs; grade every shard from one")
    by_index: dict[int, Path] = {}
    for s in shards:
        if s.shard.index in by_index:
            raise ValueError(f"shard {s.shard.label} is given twice: {by_index[s.shard.index]} and {s.folder}")
        by_index[s.shard.index] = s.folder
    missing = [str(k) for k in range(1, first.shard.count + 1) if k not in by_index]
    if missing:
        raise ValueError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} of {first.shard.count} "
                         f"{'are' if len(missing) > 1 else 'is'} missing: merge needs the output folder of every shard")
    owner: dict[str, Path] = {}
    for s in shards:
        for name in s.shard.students:
            if name in owner:
                raise ValueError(f"student {name!r} is in two shards, {owner[name]} and {s.folder}: each student "
                                 f"is graded in one shard")
            owner[name] = s.folder
    if batch.class_digest(list(owner)) != first.shard.class_sha256:
        raise ValueError(f"the shards hold {len(owner)} students, not the class of {first.shard.class_size} they "
                         f"were cut from: regrade the shards")


def max_scores(shards: list[ShardFolder]) -> dict[str, float]:
    """Each topic's maximum as the shards recorded it; ValueError where two disagree (their checks differ)."""
    found: dict[str, tuple[float, Path]] = {}
    for s in shards:
        for topic, points in s.manifest.max_scores.items():
            earlier, where = found.setdefault(topic, (points, s.folder))
            if earlier != points:
                raise ValueError(f"{where} and {s.folder} differ in the maximum of {topic} ({earlier:g} and "
                                 f"{points:g}): they were graded with different checks")
    return {topic: points for topic, (points, _) in found.items()}


def read_results(shards: list[ShardFolder]) -> dict[str, str | None]:
    """Each student's results file as written, by name (None: not graded, its shard was interrupted);
    ValueError naming a file that is not a valid results document."""
    texts = {}
    for s in shards:
        for name in s.shard.students:
            path = s.folder / f"{name}.json"
            if not path.is_file():
                texts[name] = None
                continue
            try:
                text = path.read_text()
                doc = json.loads(text)
                wrong = problems(doc) or not_graded_by(s.manifest, name, doc)
            except ValueError as exc:  # not UTF-8, not JSON
                wrong = [str(exc)]
            if wrong:
                raise ValueError(f"{path} is not a valid results file ({wrong[0]})")
            texts[name] = text
    return texts


def not_graded_by(manifest: batch.Manifest, name: str, doc: dict) -> list[str]:
    """How a valid results document differs from what its shard graded: its seed, mode and topics, and the upload it
    names (a classmate's document copied over this student's file); empty when it is this student's."""
    graded = {"seed": manifest.seed, "mode": "hidden" if manifest.hidden else "public", "topics": manifest.topics}
    recorded = {"seed": doc["seed"], "mode": doc["mode"], "topics": [t["id"] for t in doc["topics"]]}
    wrong = [f"its {what} is {recorded[what]!r}, where the shard graded {graded[what]!r}"
             for what in graded if recorded[what] != graded[what]]
    owner = batch.student(Path(doc["submission"]["path"]))
    if owner != name:
        wrong.append(f"it grades the upload of {owner!r}, not of {name!r}")
    return wrong


def merge(folders: list[Path], out: Path) -> tuple[batch.Manifest, dict[str, dict | None]]:
    """Join the shard folders into `out` (absent or empty): the students' results files as the shards wrote
    them, batch.json, grades.csv and report.html. The merged manifest and every student's document (None: not
    graded) come back; ValueError, before anything is written, for shards that do not make one class."""
    shards = read_shards(folders)
    check_one_class(shards)
    points = max_scores(shards)
    texts = read_results(shards)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out} is not an empty folder: merge writes a new class folder; choose another --out")
    first = shards[0].manifest
    merged = batch.Manifest(first.seed, first.hidden, first.topics, points, version=first.version)
    out.mkdir(parents=True, exist_ok=True)
    docs = {name: None if text is None else json.loads(text) for name, text in texts.items()}
    for name, text in texts.items():
        if text is not None:
            output.write_text(text, out / f"{name}.json")
    merged.write(out)
    for s in shards:  # each student's modules, kept by the one shard that graded them
        for name in s.shard.students:
            kept = s.folder / similarity.SOURCES / name
            similarity.keep_sources(out, name, {p.stem: p.read_text(encoding="utf-8", errors="replace")
                                                for p in sorted(kept.glob("*.py")) if p.is_file() and
                                                not p.is_symlink() and p.stem in merged.topics})
    pairs = similarity.class_pairs(out, merged.topics)
    grades.write_csv(out, merged.topics, docs, points, similarity.by_student(pairs))
    graded = {name: doc for name, doc in docs.items() if doc is not None}
    if graded:
        output.write_text(report.render(graded, pairs=pairs), out / "report.html")
    return merged, docs
