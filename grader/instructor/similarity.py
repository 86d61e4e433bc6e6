"""How much of each student's code is found in the shipped solutions, the reference or a classmate's: MOSS's
winnowed fingerprints (copydetect's winnowing and overlap), taken over a canonical form of the code.

The canonical form is the module's syntax tree without docstrings (the stub's own text, which every student keeps),
with every name and argument written `v`, printed back by `ast.unparse`: renaming variables, reformatting, comments
and blank lines change nothing of it. Its k-grams are hashed with blake2b, not Python's per-process `hash`, so one
class gives the same figures in every run (a merged set of shards as one whole run). It flags; it never changes a
score.
"""
from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

K = 35  # characters of canonical code in one fingerprinted k-gram: shorter runs are common idiom, not copying
WINDOW = 6  # winnowing window: every shared run of K + WINDOW - 1 characters is caught
FLAG = 0.7  # a share of the student's code at or above which a pair is flagged (independent answers: at most 0.42)


class Anonymised(ast.NodeTransformer):
    """Every variable and argument named `v`, annotations dropped: what a renaming cheat changes, nothing else."""

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = "v"
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg, node.annotation = "v", None
        return node


def canonical(source: str) -> str | None:
    """The code of `source` in canonical form, or None when it is not Python."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body and \
                isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
                isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(Anonymised().visit(tree))


@dataclass
class Fingerprint:
    """The winnowed k-gram hashes of one canonical text and where each occurs."""
    text: str
    where: dict[int, list[int]]
    covered: int  # characters of the text some fingerprint covers: the code that can be compared at all

    @classmethod
    def of(cls, text: str, boilerplate: set[int] = frozenset()) -> Fingerprint:
        from copydetect.utils import winnow

        grams = [text[i:i + K].encode() for i in range(len(text) - K + 1)]
        hashes = np.array([int.from_bytes(hashlib.blake2b(g, digest_size=8).digest(), "little", signed=True)
                           for g in grams], dtype=np.int64)
        where: dict[int, list[int]] = {}
        if len(hashes):
            kept, index = winnow(hashes, WINDOW, remove_duplicates=False)
            for h, i in zip(kept.tolist(), index.tolist()):
                if h not in boilerplate:
                    where.setdefault(h, []).append(i)
        covered = np.zeros(len(text), dtype=bool)
        for starts in where.values():
            for i in starts:
                covered[i:i + K] = True
        return cls(text, where, int(covered.sum()))


def shared_slices(mine: Fingerprint, theirs: Fingerprint) -> tuple[np.ndarray, np.ndarray]:
    """The [start, end) slices of each canonical text made of k-grams the other holds too (copydetect's overlap)."""
    from copydetect.utils import find_fingerprint_overlap, get_copied_slices

    first, second = find_fingerprint_overlap(set(mine.where), set(theirs.where), mine.where, theirs.where)
    return get_copied_slices(first, K), get_copied_slices(second, K)


@dataclass
class Match:
    """The part of one student's module found in another module of the same topic."""
    share: float  # of the student's comparable code, 0 to 1
    mine: list[str]  # the student's canonical lines that match, in order
    theirs: list[str]  # the other module's canonical lines that match

    @property
    def flagged(self) -> bool:
        return self.share >= FLAG


def compare(mine: Fingerprint, theirs: Fingerprint) -> Match:
    """How much of `mine` is found in `theirs`, with the matching lines of both."""
    mine_slices, their_slices = shared_slices(mine, theirs)
    if mine.covered == 0 or mine_slices.size == 0:
        return Match(0.0, [], [])
    share = min(1.0, float(np.sum(mine_slices[1] - mine_slices[0])) / mine.covered)
    return Match(round(share, 2), _lines(mine.text, mine_slices), _lines(theirs.text, their_slices))


def _lines(text: str, slices: np.ndarray) -> list[str]:
    """The lines of `text` that the slices touch, in order."""
    starts = np.cumsum([0] + [len(line) + 1 for line in text.split("\n")])
    touched = sorted({n for a, b in slices.T.tolist() for n in range(int(np.searchsorted(starts, a, "right")) - 1,
                                                                      int(np.searchsorted(starts, b - 1, "right")))})
    lines = text.split("\n")
    return [lines[n] for n in touched if 0 <= n < len(lines)]


@dataclass
class Pair:
    """A student's module of one topic and the module most like it."""
    student: str
    topic: str
    other: str  # a classmate's name, or the shipped module's ("solutions", "reference")
    shipped: bool  # whether `other` is a shipped module rather than a classmate
    match: Match


def topic_pairs(topic: str, students: dict[str, str], shipped: dict[str, str], stub: str) -> list[Pair]:
    """For each student's module of `topic`, the module most like it among the shipped ones (solutions, reference)
    and every classmate's: the stub's own fingerprints left out, a module that is not Python left out."""
    boilerplate = set(Fingerprint.of(canonical(stub) or "").where)
    sources = {(True, name): text for name, text in shipped.items()} | \
              {(False, name): text for name, text in students.items()}
    prints = {key: Fingerprint.of(text, boilerplate) for key, source in sources.items()
              if (text := canonical(source)) is not None}
    pairs = []
    for student in sorted(students):
        if (False, student) not in prints:
            continue
        others = [(key, compare(prints[(False, student)], print_)) for key, print_ in prints.items()
                  if key != (False, student)]
        if others:
            (is_shipped, other), match = max(others, key=lambda km: (km[1].share, km[0]))
            pairs.append(Pair(student, topic, other, is_shipped, match))
    return pairs


SOURCES = "sources"  # OUT/sources/<student>/<topic>.py: the modules grade-batch graded, for this report


def keep_sources(out: Path, student: str, sources: dict[str, str]) -> None:
    """Keep the topic modules one student was graded on in the class folder (a regrade replaces them)."""
    from grader import output

    for topic, text in sources.items():
        folder = out / SOURCES / student
        folder.mkdir(parents=True, exist_ok=True)
        output.write_text(text, folder / f"{topic}.py")


def class_pairs(out: Path, topics: list[str]) -> list[Pair]:
    """Each kept module's closest match among the shipped solutions and reference and the class's other modules of
    its topic; the modules come from OUT/sources (every shard's, once merged)."""
    from grader.topics import EXERCISES_DIR  # not the sandbox's policy, which imports torch: a batch's parent does not

    root = EXERCISES_DIR.parent  # exercises/, solutions/ and reference/ lie side by side
    pairs = []
    for topic in topics:
        students = {p.parent.name: p.read_text(encoding="utf-8", errors="replace")
                    for p in sorted((out / SOURCES).glob(f"*/{topic}.py")) if p.is_file() and not p.is_symlink()}
        shipped = {name: (root / name / f"{topic}.py").read_text() for name in ("solutions", "reference")
                   if (root / name / f"{topic}.py").is_file()}
        stub = root / "exercises" / f"{topic}.py"
        if students:
            pairs += topic_pairs(topic, students, shipped, stub.read_text() if stub.is_file() else "")
    return pairs


def by_student(pairs: list[Pair]) -> dict[str, tuple[float, str]]:
    """Each student's largest share and whose module it is found in (`topic: solutions`, `topic: ann`)."""
    best: dict[str, Pair] = {}
    for p in pairs:
        if p.student not in best or p.match.share > best[p.student].match.share:
            best[p.student] = p
    return {name: (p.match.share, f"{p.topic}: {'the shipped ' if p.shipped else ''}{p.other}")
            for name, p in best.items()}
