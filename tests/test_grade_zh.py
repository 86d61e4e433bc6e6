"""A grade in Chinese (issue 29): the same scores, statuses, ids, misconception ids, seeds and points as the English
grade of the same submission and seed, with `lang` saying which, and no English sentence left in its messages once
code, ids, numbers and quoted values are set aside (sampling's and paged_kv's checks, the engine's and the sandbox's
fixed sentences); every sentence those say through `tr` has its Chinese."""
import ast
import json
import re
from pathlib import Path

import pytest

from grader import language, wording
from grader.grading import grade
from grader.instructor.selftest import EXERCISES_DIR, MUTANTS_DIR, SOLUTIONS_DIR, mutant_submission
from grader.sandbox import child
from grader.sandbox.policy import REPO
from tests.documents import without

TOPICS = ["sampling", "paged_kv"]
MUTANTS = {"sampling": "top_p_drops_crossing_token", "paged_kv": "fork_copies_blocks"}  # misconceptions, an error
SEED = 20260217
DEADLINE_S = 900.0  # far past either grade: a run's deadline passing in one language only would differ by load
SAID_BY_CODE = ["grader/engine", "grader/sandbox", "grader/checks/sampling", "grader/checks/paged_kv"]
WORDLESS = ("title", "message", "error", "incomplete", "lang", "started_at", "duration_s")


@pytest.fixture(autouse=True)
def english_after():
    """Every other test reads the language of the environment, as a fresh run does."""
    yield
    language.choose(None)


@pytest.fixture(scope="module")
def submissions(tmp_path_factory) -> dict[str, Path]:
    """A passing, a failing (one mutant of each topic) and a not-started submission of both topics."""
    failing = tmp_path_factory.mktemp("failing")
    for topic, mutant in MUTANTS.items():
        made = mutant_submission(topic, MUTANTS_DIR / topic / f"{mutant}.py", tmp_path_factory.mktemp(topic))
        (failing / f"{topic}.py").write_text((made / f"{topic}.py").read_text())
    failing.chmod(0o755)  # without a private root, a root grader's child reads it as nobody
    return {"passing": SOLUTIONS_DIR, "failing": failing, "not started": EXERCISES_DIR}


@pytest.fixture(scope="module")
def grades(submissions) -> dict[tuple[str, str, str], dict]:
    """{(submission, mode, lang): results document}, public and hidden, in English and in Chinese."""
    done = {}
    try:
        for name, folder in submissions.items():
            for hidden in (False, True):
                for lang in ("en", "zh"):
                    language.choose(lang)
                    done[name, "hidden" if hidden else "public", lang] = grade(
                        folder, TOPICS, hidden=hidden, seed=SEED, with_progress=False, deadline_s=DEADLINE_S)
    finally:
        language.choose(None)
    return done


def messages(doc: dict) -> list[str]:
    """Every message of a results document: the run's, each topic's and each check's."""
    said = [doc["error"], doc["incomplete"]]
    for topic in doc["topics"]:
        said += [topic["message"]] + [c["message"] for c in topic["checks"]]
    return [m for m in said if m]


@pytest.mark.parametrize("name", ["passing", "failing", "not started"])
@pytest.mark.parametrize("mode", ["public", "hidden"])
def test_a_chinese_grade_decides_what_the_english_grade_decides(grades, name, mode):
    english, chinese = grades[name, mode, "en"], grades[name, mode, "zh"]
    assert (english["lang"], chinese["lang"]) == ("en", "zh")
    assert json.dumps(without(chinese, WORDLESS), indent=1) == json.dumps(without(english, WORDLESS), indent=1)
    checks = [c for t in english["topics"] for c in t["checks"]]
    statuses = {c["status"] for c in checks}
    assert {"passing": statuses == {"passed"}, "failing": {"passed", "failed", "error"} <= statuses,
            "not started": statuses == {"not_started"}}[name], statuses
    assert english["status"] == "completed" and len(checks) > 30
    if name == "failing":  # the comparison covers misconceptions that were named, not only their absence
        assert {c["misconception"] for c in checks} >= {None, "top_p_drops_crossing_token", "fork_copies_blocks"}


# ------------------------------------------------------------------------------- no English sentence is left
def submission_texts(folder: Path) -> list[str]:
    """The string constants of the graded topic modules (whole strings and an f-string's fixed parts): what the
    submission itself raises and prints is a value, quoted as it is in either language."""
    texts = []
    for topic in TOPICS:
        tree = ast.parse((folder / f"{topic}.py").read_text())
        texts += [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return sorted({t.strip() for t in texts if " " in t.strip()}, key=len, reverse=True)


TRACEBACK = re.compile(r"^ *\S+\.py, line \d+, in \S+\n.*$", re.MULTILINE)  # the submission's frame and its line
CALL = re.compile(r"[A-Za-z_][\w.]*\(")
CODE = [
    r"`[^`]*`",                               # code in backticks
    r"'[^']*'|\"[^\"]*\"",                    # quoted values
    r"<[^<>]*>",                              # a repr such as <torch._C.Generator>
    r"\[[^\[\]]*\]",                          # a list or an index, innermost first (repeated below)
    r"\b\w+=\S+",                             # keyword=value
    r"\b[A-Za-z_]\w*(?:\.\w+)+\b",            # dotted names: torch.int64, sampling.top_p_filter
    r"\b\w*(?:_\w*|\d)\w*\b",                 # snake_case ids, check and misconception ids, float32, numbers
    r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b",  # CamelCase classes: OutOfBlocks, NotImplementedError
]


def without_calls(text: str) -> str:
    """`text` without its call descriptions (`top_p_filter(log([0.7, ...]), p=0.8)`): a name and its balanced
    parentheses are code, whatever they hold."""
    while match := CALL.search(text):
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        text = text[:match.start()] + " " + text[end + 1:]
    return text


def words_left(message: str, values: list[str]) -> str:
    """What a reader reads as words in `message` once the submission's own texts, its traceback, code, ids,
    numbers and quoted values are set aside."""
    for value in values:
        message = message.replace(value, " ")
    message = without_calls(TRACEBACK.sub(" ", message))
    for pattern in CODE:
        for _ in range(3):  # nested lists
            message = re.sub(pattern, " ", message)
    return message


def english_run(message: str, values: list[str]) -> str | None:
    """The first two English words in a row (spaces between them only) left in `message`, or None."""
    found = re.search(r"[A-Za-z]+ +[A-Za-z]+", words_left(message, values))
    return found.group() if found else None


def test_no_english_sentence_is_left_in_a_chinese_grade(grades, submissions):
    left = []
    for (name, mode, lang), doc in grades.items():
        if lang == "zh":
            values = submission_texts(submissions[name])
            left += [f"{name}/{mode}: {run!r} in {m!r}" for m in messages(doc) if (run := english_run(m, values))]
    assert not left, "\n".join(left[:20])


def test_the_english_grades_are_seen_to_hold_english_sentences(grades, submissions):
    """The detector above finds what it looks for: the English grades' messages hold English runs."""
    for (name, mode, lang), doc in grades.items():
        if lang == "en" and name != "passing":  # a passing grade has no message
            values = submission_texts(submissions[name])
            found = [m for m in messages(doc) if english_run(m, values)]
            # all but the few whose own words are one ('X raised OutOfBlocks: <the submission's message>')
            assert len(messages(doc)) >= 5 and len(found) >= 0.8 * len(messages(doc)), \
                (name, mode, set(messages(doc)) - set(found))


def test_code_and_values_are_not_words():
    message = ("top_p_filter(log([0.7, 0.15]), p=0.8) 抛出了 OutOfBlocks：no free blocks left\n"
               "  paged_kv.py, line 141, in fork\n    raise OutOfBlocks(f\"no free blocks left\")\n"
               "期望 `filtered_probs` 与 torch.int64，copy=None, 'child_id'")
    assert english_run(message, ["no free blocks left"]) is None
    assert english_run("filtered_probs(x)：the probabilities are [0.7]", []) == "the probabilities"


# --------------------------------------------------------------------- every sentence the code says has its Chinese
def said_through_tr() -> dict[str, str]:
    """{English sentence: where} for every literal first argument of `tr(...)` in the engine, the sandbox and the
    sampling and paged_kv checks, and the child's refusals to import a module (said through tr by connection.py)."""
    said = {}
    for folder in SAID_BY_CODE:
        for path in sorted((REPO / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "tr" \
                        and node.args and isinstance(node.args[0], ast.Constant):
                    said.setdefault(node.args[0].value, f"{path.relative_to(REPO)}:{node.lineno}")
    return said | {refused: "grader/sandbox/child.py" for refused in child.IMPORT_REFUSALS.values()}


def test_every_sentence_of_the_engine_sandbox_and_both_topics_checks_has_its_chinese():
    """Timeouts, crashes and the rarer failures too, which no grade above meets."""
    said = said_through_tr()
    assert len(said) > 150, "the reader of tr(...) calls found too few"
    missing = [f"{where}: {english!r}" for english, where in said.items() if english not in language.screens()]
    assert not missing, "\n".join(missing)
    chinese = {english: re.sub(r"\{[^{}]*\}", "", language.screens()[english]) for english in said}
    copied = [english for english, text in chinese.items()
              if re.search(r"[A-Za-z]{2}", text) and not re.search(r"[\u4e00-\u9fff]", text)]
    assert not copied, copied


def test_the_operations_a_failure_lists_keep_one_indentation_in_chinese():
    """paged_kv's operation log ('  alloc.append(0) -> ...', '  alloc.fork(0, 1) 抛出了 OutOfBlocks') lines up on a
    Chinese screen whether or not a line holds Chinese: its own two spaces after the screen's indentation, once."""
    lines = ["  alloc = BlockAllocator(1, 1)", "  alloc.fork(0, 1) 抛出了 OutOfBlocks"]
    shown = [wording.fitted(line, 100, "      ")[0] for line in lines]
    assert [line[:len(line) - len(line.lstrip())] for line in shown] == [" " * 8] * 2, shown
