"""Every topic's check sentences in Chinese (issue 29): each sentence its checks say through `tr` has its Chinese, and
a failing submission's Chinese public grade leaves no English sentence (tests/test_grade_zh.py holds the detector
and compares whole grades in both languages for sampling and paged_kv)."""
import ast

import pytest

from grader import language, topics
from grader.grading import grade
from grader.instructor.selftest import MUTANTS_DIR, mutant_submission
from grader.sandbox.policy import REPO
from tests.test_grade_zh import english_run, messages

TOPICS = topics.all_topics()
SEED = 20260217


def said_through_tr(folder) -> dict[str, str]:
    """{English sentence: where} for every literal first argument of a `tr(...)` call under `folder`."""
    said = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "tr" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                said.setdefault(node.args[0].value, f"{path.relative_to(REPO)}:{node.lineno}")
    return said


def string_constants(path) -> list[str]:
    """The string constants of a submission module: what it raises or prints is a value in either language."""
    found = [n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)
             and isinstance(n.value, str)]
    return sorted({t.strip() for t in found if " " in t.strip()}, key=len, reverse=True)


@pytest.mark.parametrize("topic", TOPICS)
def test_every_sentence_of_the_topics_checks_has_its_chinese(topic):
    said = said_through_tr(REPO / "grader" / "checks" / topic)
    missing = [f"{where}: {english!r}" for english, where in said.items() if english not in language.screens()]
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("topic", TOPICS)
def test_a_failing_chinese_grade_leaves_no_english_sentence(topic, tmp_path):
    """The topic's first mutant (by name), graded public in Chinese."""
    mutant = sorted((MUTANTS_DIR / topic).glob("*.py"))[0]
    folder = mutant_submission(topic, mutant, tmp_path / "s")
    folder.chmod(0o755)  # without a private root, a root grader's child reads it as nobody
    try:
        language.choose("zh")
        doc = grade(folder, [topic], hidden=False, seed=SEED, with_progress=False)
    finally:
        language.choose(None)
    said = messages(doc)
    assert doc["status"] == "completed" and said, doc["error"]  # a failing grade has messages to read
    values = string_constants(folder / f"{topic}.py")
    left = [f"{run!r} in {m!r}" for m in said if (run := english_run(m, values))]
    assert not left, "\n".join(left[:20])
