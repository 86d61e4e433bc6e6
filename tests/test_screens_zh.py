"""The Chinese screens in a real terminal (issue 29): with LANG=zh_CN.UTF-8 in the environment and no --lang, a
failing `check sampling` and `check paged_kv` (mutants), a `check` whose function is not started yet, the `hint`
ladder of sampling.top_p_filter (levels 1 to 3), `progress`, `list` and one round of `watch` show no English
sentence: once what stays as it is has been removed (ids, paths, numbers, code, the `infergrade ...` command lines,
torch's dtype names), no two English words are left in a row. Every line fits the terminal's width in display
columns. (The English screens are tests/test_screens.py's, unchanged.)"""
import re

import pytest
from terminal import in_terminal

from grader import hints, language, topics, wording
from grader.instructor.selftest import MUTANTS_DIR, SOLUTIONS_DIR, mutant_submission

COLUMNS = 80  # the terminal `check`, `hint`, `progress` and `list` run in
NARROW = 60   # the terminal `watch` runs in
MUTANTS = {"sampling": "top_p_drops_crossing_token", "paged_kv": "no_copy_on_write"}
TARGET = "sampling.top_p_filter"

_TOPICS = "|".join(topics.all_topics())
# What a Chinese screen keeps as it is, removed in this order before English is looked for.
KEPT = [
    r"`[^`\n]*`",                                                        # code in backticks
    r"\b(?:Prompt Caching|Hugging Face)\b",                             # names said in English: the glossary's, a company's
    rf"\binfergrade (?:hint|watch|check|progress|list)"                  # a command line: its command, then options,
    rf"(?: (?:--[a-z][\w-]*|\d+|(?:{_TOPICS})\b|\w+(?:\.\w+)+))*",       # topics and dotted names only
    r"(?<![\w.])(?:/[\w.+-]+)+/?",                                       # paths
    r"\b[A-Za-z_]\w*(?:\.\w+)+",                                         # check ids, dotted calls, torch.float32
    r"\b\w*_\w*\b",                                                      # function and misconception ids
    r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b",                            # class names: BlockAllocator, ValueError
    r"\b[A-Za-z]+\d+\w*\b",                                              # dtype names: float32, int64
    r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?",                                 # numbers
]
ENGLISH = re.compile(r"\b[A-Za-z]+ +[A-Za-z]+\b")  # two English words in a row


def english_left(screen: str) -> list[str]:
    """The lines of `screen` that still hold two English words in a row once what is kept has been removed."""
    found = []
    for line in screen.splitlines():
        bare = line
        for pattern in KEPT:
            bare = re.sub(pattern, " ", bare)
        if ENGLISH.search(bare):
            found.append(line)
    return found


def too_wide(screen: str, columns: int) -> list[str]:
    return [line for line in screen.splitlines() if wording.display_width(line.rstrip("\r")) > columns]


def flat(text: str) -> str:
    return "".join(text.split())


@pytest.fixture(scope="module")
def shown(tmp_path_factory) -> dict[str, str]:
    """Each screen as the terminal showed it, the language chosen by LANG alone."""
    folder = tmp_path_factory.mktemp("zh")
    folder.chmod(0o755)
    for topic, mutant in MUTANTS.items():
        mutant_submission(topic, MUTANTS_DIR / topic / f"{mutant}.py", folder)
    waiting = tmp_path_factory.mktemp("zh-not-started")
    waiting.chmod(0o755)
    (waiting / "sampling.py").write_text((SOLUTIONS_DIR / "sampling.py").read_text() +
                                         "\n\ndef top_p_filter(logits, p):\n    raise NotImplementedError\n")
    with pytest.MonkeyPatch.context() as patch:
        for name in ("INFERGRADE_LANG", "LC_ALL", "LC_MESSAGES"):
            patch.delenv(name, raising=False)
        patch.setenv("LANG", "zh_CN.UTF-8")
        at = ["--submission", str(folder)]
        screens = {f"check {topic}": in_terminal(["check", topic, *at], columns=COLUMNS) for topic in MUTANTS}
        screens["check not started"] = in_terminal(["check", "sampling", "--submission", str(waiting)],
                                                   columns=COLUMNS)
        for level in hints.LEVELS:  # no --level: each run shows the next unread one
            screens[f"hint {level}"] = in_terminal(["hint", TARGET, *at], columns=COLUMNS)
        screens["progress"] = in_terminal(["progress", *at], columns=COLUMNS)
        screens["list"] = in_terminal(["list", *at], columns=COLUMNS)
        screens["watch"] = in_terminal(["watch", "sampling", *at], until=language.screens()["next: "].strip(),
                                       columns=NARROW)
    return screens


def test_the_english_detector_sees_a_sentence_and_lets_identifiers_pass():
    """Not a vacuous check: an untranslated message is found, a Chinese line full of kept things is not."""
    assert english_left("      kept tokens [0], expected tokens [0, 1]")
    assert english_left("  未通过 sampling.top_p_batched（2 分）the checks run once it is written")
    assert not english_left("  未通过 paged_kv.copy_on_write（2 分）BlockAllocator(4, 2)，fork(0, 1) 返回 (1, 1, None)")
    assert not english_left("下一步：修正 sampling.top_p_filter — infergrade watch sampling（卡住了？infergrade hint "
                            "sampling.top_p_filter）；读自 /tmp/ab/.infergrade-progress.json，dtype torch.float32")


def test_every_screen_says_its_sentences_in_chinese(shown):
    left = {name: english_left(screen) for name, screen in shown.items()}
    assert not any(left.values()), {name: lines for name, lines in left.items() if lines}


def test_every_line_fits_the_terminal(shown):
    wide = {name: too_wide(screen, NARROW if name == "watch" else COLUMNS) for name, screen in shown.items()}
    assert not any(wide.values()), {name: lines for name, lines in wide.items() if lines}


def test_the_screens_show_what_they_are_for(shown):
    """The screens are not empty or refused: each failing check names its misconception, the hint ladder climbs
    from 1 to 3 with the catalog's Chinese text, watch shows its first failure, progress the next step."""
    for topic, mutant in MUTANTS.items():
        assert f"{topic}: " in shown[f"check {topic}"] and mutant in shown[f"check {topic}"], shown[f"check {topic}"]
    language.choose("zh")
    try:
        ladder = [flat(hints.hint("sampling", "top_p_filter", level)) for level in hints.LEVELS]
        marks = {key: language.screens()[key] for key in ("NOT STARTED", "next: ")}
    finally:
        language.choose(None)
    for level, text in zip(hints.LEVELS, ladder):
        assert text in flat(shown[f"hint {level}"]), (level, shown[f"hint {level}"])
    assert marks["NOT STARTED"] in shown["check not started"], shown["check not started"]
    assert MUTANTS["sampling"] in shown["watch"] and marks["next: "].strip() in shown["watch"], shown["watch"]
    assert marks["next: "].strip() in shown["progress"] and "top_p_filter" in shown["progress"], shown["progress"]


def test_a_check_not_run_is_told_apart_in_either_language():
    """The summary says once, at the topic, why its checks did not run: it knows such a check by its message,
    whichever language the run said it in."""
    from grader.results import NOT_RUN, is_not_run

    said = {}
    try:
        for lang in language.LANGUAGES:
            language.choose(lang)
            said[lang] = language.tr(NOT_RUN) + language.tr("{module} could not be imported (see the topic's error)",
                                                             module="sampling.py")
        assert said["zh"] != said["en"] and all(is_not_run(message) for message in said.values()), said
        assert not is_not_run(said["en"].removeprefix(NOT_RUN))
    finally:
        language.choose(None)
