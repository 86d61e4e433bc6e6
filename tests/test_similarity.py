"""The similarity report's judgement: a copy of the solutions, renamed and reformatted, and a classmate's file with
its variables renamed are flagged; two independently written correct modules (a solution and the reference, which
are written apart by design) and two untouched stubs are not; one class gives the same figures in every process."""
import ast
import builtins
import json
import os
import subprocess
import sys

import pytest

from grader.instructor import similarity
from grader.instructor.selftest import EXERCISES_DIR, SOLUTIONS_DIR
from grader.sandbox.policy import REPO
from grader.topics import all_topics


class Renamed(ast.NodeTransformer):
    """What a student hiding a copy does: every local name and argument renamed (not builtins or modules)."""

    def visit_Name(self, node):
        if node.id not in dir(builtins) and node.id not in ("torch", "math", "np", "heapq"):
            node.id = f"my_{node.id[::-1]}"
        return node

    def visit_arg(self, node):
        node.arg = f"my_{node.arg[::-1]}"
        return node


def disguised(source: str) -> str:
    """`source` renamed, reformatted by ast.unparse, with a comment after every line and blank lines between."""
    text = ast.unparse(Renamed().visit(ast.parse(source)))
    return "\n\n".join(f"{line}  # my own work" if line.strip() and not line.rstrip().endswith("\\") else line
                       for line in text.split("\n"))


def sources(topic: str) -> tuple[str, str, str]:
    return ((SOLUTIONS_DIR / f"{topic}.py").read_text(), (REPO / "reference" / f"{topic}.py").read_text(),
            (EXERCISES_DIR / f"{topic}.py").read_text())


@pytest.mark.parametrize("topic", all_topics())
def test_a_disguised_copy_of_the_solutions_is_flagged(topic):
    solution, reference, stub = sources(topic)
    copy = disguised(solution)
    assert ast.parse(copy) and copy != solution
    [pair] = similarity.topic_pairs(topic, {"ann": copy}, {"solutions": solution, "reference": reference}, stub)
    assert (pair.other, pair.shipped) == ("solutions", True) and pair.match.flagged and pair.match.share >= 0.9
    assert pair.match.mine and pair.match.theirs  # the matching lines, to show side by side


@pytest.mark.parametrize("topic", all_topics())
def test_a_classmates_renamed_file_is_flagged_and_independent_answers_are_not(topic):
    solution, reference, stub = sources(topic)
    pairs = {p.student: p for p in similarity.topic_pairs(
        topic, {"ann": reference, "bo": disguised(reference), "cy": solution}, {}, stub)}
    assert pairs["bo"].other == "ann" and not pairs["bo"].shipped and pairs["bo"].match.flagged
    assert pairs["ann"].other == "bo" and pairs["ann"].match.flagged  # the pair, from either side
    assert not pairs["cy"].match.flagged, pairs["cy"].match.share  # written apart from the reference


@pytest.mark.parametrize("topic", all_topics())
def test_untouched_stubs_and_modules_that_are_not_python_are_not_flagged(topic):
    solution, _, stub = sources(topic)
    pairs = {p.student: p for p in similarity.topic_pairs(
        topic, {"ann": stub, "bo": stub, "cy": "def broken(:\n"}, {"solutions": solution}, stub)}
    assert set(pairs) == {"ann", "bo"} and not any(p.match.flagged for p in pairs.values())


FIGURES = """
import json
from grader.instructor import similarity
from grader.instructor.selftest import EXERCISES_DIR, SOLUTIONS_DIR
from grader.sandbox.policy import REPO
stub = (EXERCISES_DIR / "decoding.py").read_text()
solution = (SOLUTIONS_DIR / "decoding.py").read_text()
pairs = similarity.topic_pairs("decoding", {"cy": solution}, {"reference": (REPO / "reference" / "decoding.py")
                               .read_text()}, stub)
print(json.dumps([[p.student, p.other, p.match.share, p.match.mine] for p in pairs]))
"""


def test_one_class_gives_the_same_figures_in_every_process(tmp_path):
    """Python's str hash changes with every process; the fingerprints must not (shards merged = one run)."""
    runs = {subprocess.run([sys.executable, "-c", FIGURES], capture_output=True, text=True, check=True, cwd=tmp_path,
                           env=os.environ | {"PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3)}
    assert len(runs) == 1 and json.loads(runs.pop())[0][2] > 0
