"""The student's screens in a real terminal (workflows v2, points 2 and 3): `watch` wraps long lines at words with
their indentation kept and shows the code's prints as `check` does; both fold a run of one printed line into one
line with its count; the first failure shows the misconception's explanation, never a hint's level; counts agree
with their nouns ('1/1 check', '1 more failing case'); `hint` says what running it again shows, and when a level
is the last."""
import json
import re
import subprocess
import sys

import pytest
from terminal import in_terminal

from grader import hints, progress, topics, wording
from grader.engine import more_failing
from grader.results import incomplete_reason
from grader.sandbox.policy import REPO

NARROW = 60  # columns of the terminal watch runs in
STEPS = 30   # the prints of each call of the failing function: more than the 20 last lines a failure keeps
LONG_PRINT = "the kept mass so far " + " ".join(f"p{i}=0.{i:02d}" for i in range(12))  # wider than NARROW


def failing_source() -> str:
    """The model solution with top_p_filter dropping the token that crosses p (a known misconception), printing
    STEPS identical lines then one long line on every call."""
    return ((REPO / "solutions" / "sampling.py").read_text()
            + (REPO / "tests" / "mutants" / "sampling" / "top_p_drops_crossing_token.py").read_text()
            + f"\n\n_dropping_filter = top_p_filter\n\n\ndef top_p_filter(logits, p):\n"
              f"    for _ in range({STEPS}):\n        print('step')\n    print({LONG_PRINT!r})\n"
              f"    return _dropping_filter(logits, p)\n")


def flat(text: str) -> str:
    """`text` with every run of whitespace one space: a wrapped paragraph reads as the text it was cut from."""
    return " ".join(text.split())


def last_screen(shown: str) -> list[str]:
    """The lines of watch's last screen: from its title to the status line under it."""
    screen = shown[shown.rindex("infergrade watch —"):]
    return screen[:screen.index("\n[")].splitlines()


@pytest.fixture(scope="module")
def shown(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("screens")
    folder.chmod(0o755)
    (folder / "sampling.py").write_text(failing_source())
    return {"check": in_terminal(["check", "sampling", "--submission", str(folder)]),
            "watch": in_terminal(["watch", "sampling", "--submission", str(folder)], until="next:", columns=NARROW)}


def test_watch_wraps_long_lines_at_words_with_their_indentation(shown):
    screen = last_screen(shown["watch"])
    assert max(len(line) for line in screen) <= NARROW, "\n".join(screen)
    start = next(i for i, line in enumerate(screen) if line.startswith("  misconception "))
    explained = [screen[start]] + [line for line in screen[start + 1:] if line.startswith("    ")][:1]
    assert len(explained) == 2 and explained[1].startswith("    ") and not explained[1].startswith("     "), screen
    # no word is cut: every word of the long print is whole on the screen, the print is shown as one paragraph
    printed = [line for line in screen if line.startswith("  | ")]
    assert flat(LONG_PRINT) in flat(" ".join(line.removeprefix("  | ").strip() for line in printed)), screen
    assert all(word in re.split(r"\s+", "\n".join(printed)) for word in LONG_PRINT.split()), printed


def test_watch_shows_the_prints_as_check_does_with_a_repeated_line_folded(shown):
    check, watch = shown["check"], "\n".join(last_screen(shown["watch"]))
    folded = "| step  (repeated 19×)"  # 19 of the 20 last lines kept, then the long line
    for screen in (check, watch):
        assert "your code printed (its last lines):" in screen and folded in screen, screen
        lines = [line.strip() for line in screen.splitlines()]
        assert not any(a == b == "| step" for a, b in zip(lines, lines[1:])), screen  # no run is left unfolded
    assert f"| {LONG_PRINT}" in check  # check does not wrap: a pipe or a wide terminal gets the line whole


def test_the_first_failure_explains_the_misconception_and_shows_no_hint_level(shown):
    check, watch = shown["check"], "\n".join(last_screen(shown["watch"]))
    for screen in (check, watch):
        named = re.search(r"misconception (\w+): ", screen)
        assert named, screen
        explanation = hints.explain("sampling", named[1])
        assert flat(explanation) in flat(screen), screen  # all of it, not its first line
        for function in hints.load("sampling")["functions"]:
            for level in hints.LEVELS:
                assert flat(hints.hint("sampling", function, level)) not in flat(screen), (function, level)
        assert "hint: infergrade hint sampling.top_p_filter" in screen


def test_counts_agree_with_their_nouns_on_the_watch_screen(shown):
    screen = "\n".join(last_screen(shown["watch"]))
    greedy = next(line for line in screen.splitlines() if " greedy " in line)  # greedy has one public check
    assert re.search(r"\b1/1 check$", greedy), greedy
    assert not re.search(r"\b1 checks\b|/1 checks\b", shown["watch"]), shown["watch"]
    assert re.search(r"\(\d+ checks? waits? for top_p_filter\)|check `top_p_filter` first", shown["check"] + screen)


def test_list_and_progress_say_one_in_the_singular(tmp_path):
    """One passing check recorded: `list` says '1 public check passed', `progress` '1 of N functions passes its
    public checks' and 'hints read for 1 function'."""
    tmp_path.chmod(0o755)
    progress.path_for(tmp_path).write_text(json.dumps({
        "checks": {"sampling.greedy_lowest_index_on_ties": {"passed": True, "status": "passed",
                                                            "function": "sampling.greedy", "waiting_for": None}},
        "hints": {"sampling.greedy": 1}}))
    listed = subprocess.run([sys.executable, "-m", "grader", "list", "--submission", str(tmp_path)],
                            capture_output=True, text=True, cwd=REPO, timeout=120)
    assert "sampling  (1 public check passed)" in listed.stdout, listed.stdout + listed.stderr
    shown = in_terminal(["progress", "--submission", str(tmp_path)])
    functions = sum(1 for t in topics.all_topics() for name in topics.api(t) if "." not in name)
    assert f"1 of {functions} functions passes its public checks; hints read for 1 function" in shown, shown


def test_more_failing_cases_and_skipped_checks_are_counted_in_the_right_number():
    assert more_failing(0) == "" and more_failing(1) == " (and 1 more failing case)"
    assert more_failing(3) == " (and 3 more failing cases)"
    phrased = [p for p in (REPO / "grader" / "checks").rglob("*.py") if "more failing case" in p.read_text()]
    assert phrased == [], f"say it with grader.engine.more_failing: {phrased}"
    one = [{"checks": [{"status": "skipped", "points": 1, "message": "needs triton"}]}]
    assert incomplete_reason(one).startswith("1 check (1 point) could not run here")
    assert incomplete_reason(one * 2).startswith("2 checks (2 points) could not run here")


def test_wrap_breaks_at_spaces_and_folds_only_consecutive_repeats():
    lines = wording.wrap("alpha beta gamma delta epsilon zeta eta theta iota kappa", 30, "  ")
    assert lines == ["  alpha beta gamma delta", "    epsilon zeta eta theta", "    iota kappa"]
    assert wording.fold_repeats(["a", "a", "b", "a"]) == ["a  (repeated 2×)", "b", "a"]
    assert wording.count(1, "check") == "1 check" and wording.count(0, "check") == "0 checks"


def hint_note(folder, *extra: str) -> list[str]:
    """The first and last line `infergrade hint sampling.top_p_filter` prints (its title, what comes next)."""
    done = subprocess.run([sys.executable, "-m", "grader", "hint", "sampling.top_p_filter", "--submission",
                           str(folder), *extra], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    return [lines[0], lines[-1]]


def test_hint_says_that_running_it_again_shows_the_next_level_and_when_the_last_is_shown(tmp_path):
    tmp_path.chmod(0o755)
    target = "sampling.top_p_filter"
    assert hint_note(tmp_path) == [f"{target} — hint 1/3", f"Run `infergrade hint {target}` again for level 2 of 3."]
    assert hint_note(tmp_path) == [f"{target} — hint 2/3", f"Run `infergrade hint {target}` again for level 3 of 3."]
    assert hint_note(tmp_path) == [f"{target} — hint 3/3", f"That was the last level of hints for {target} (3 of 3)."]
    assert hint_note(tmp_path)[1].startswith("That was the last level")  # it stays at the last
    # a level asked for below the one read: running it again would not show the next one, so the option is named
    assert hint_note(tmp_path, "--level", "1")[1] == f"Level 2 of 3: `infergrade hint {target} --level 2`."


def test_hint_names_the_option_where_the_level_read_cannot_be_remembered(tmp_path):
    tmp_path.chmod(0o755)
    progress.path_for(tmp_path).mkdir()  # a folder in the progress file's place: nothing is recorded
    target = "sampling.top_p_filter"
    assert hint_note(tmp_path)[1] == f"Level 2 of 3: `infergrade hint {target} --level 2`."
    assert hint_note(tmp_path)[0] == f"{target} — hint 1/3"  # indeed level 1 again
