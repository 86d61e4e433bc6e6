"""Issue 11 "Hints": a level-3 hint is close to pseudocode but never the solution's own lines.

Both texts go through Python's tokenize and are normalised so that cosmetic edits do not hide a copy:
layout (whitespace, newlines, indentation) and comments are dropped; every string literal counts as one STR token
(messages and docstrings are not the algorithm); a module or object prefix is dropped (`torch.exp(x)`, `tl.exp(x)`
and `exp(x)` are the same tokens, `self._blocks` is `blocks`), as are leading underscores of names. Names stay
otherwise: renaming every variable would make all loops alike (`for N in range(N, N, N):` is 12 tokens) and
the test would then flag pseudocode for sharing the shape of any loop.

Threshold: a hint fails when it shares a run of RUN = 15 normalised tokens with the solution module. One
statement of the solutions is 8 to 20 tokens (`alpha = exp(m - m_new)` is 8, `m_new = maximum(m, amax(dim=-1))`
14), so 15 is about one whole statement copied with its names. Calibrated on the hints and solutions of be4e2bc,
before issue 11 (`python tests/test_hint_overlap.py` prints every hint's longest run; the runs against the other
topics' solutions are the noise floor):
- noise: against solutions it was not written from, a level-3 hint shares at most 11 tokens (a guard such as
  `if not temperature > 0: raise ValueError(...)` that two topics both write); 15 sits clear of that;
- signal: of the hints issue 11 calls verbatim, top_p_filter shares 41 tokens and reservation_waste 59;
  expected_speedup shares its whole 16-token one-line body and apply_temperature its 15-token body.
  kv_bytes_per_token (12) restates the solution line by line with renamed variables: a paraphrase no token
  run can tell from pseudocode that names the same quantities, left to review;
- below 15 the shared runs are formulas the contract itself states (`uncached = len(prompt) - cached - written`,
  12) and fragments of a line.

Issue 18 "Hints" named three classes the run test let through, and two more tests catch them:
- a level-3 hint written in Python syntax with other names than the solution's (decoding's
  apply_repetition_penalty: `row[ids] = torch.where(x < 0, x * penalty, x / penalty)` shares 9 tokens): a line
  counts as code when it parses as Python on its own and holds a call, subscript, attribute, comprehension,
  lambda or augmented assignment (words such as `check penalty > 0` do not parse; `best = None` holds none of
  them). Calibrated on c593f4f (`python tests/test_hint_overlap.py --code`): the hints written as words hold at
  most one such line (a `for level, runs in results.items():` header); those issue 18 names hold 5
  (apply_repetition_penalty, serving_metrics) and 2 (simulate), so CODE_LINES = 2 fails them. It also fails five
  more that are Python as well: greedy_decode, sample_decode, critical_path, first_output
  (`return min(times[s][1] for s in visible)`) and UsageLedger;
- a level-1 hint that states the rule instead of naming the idea: a formula (an operator such as `> 1`), a
  tie-breaking rule, a conditional instruction (`if ..., keep ...`) or a list of steps (two or more `;`). On
  c593f4f these markers fire on exactly the four level-1 hints issue 18 names (beam_search,
  apply_repetition_penalty, critical_path, compare_variants) and on no other.
"""
import ast
import io
import keyword
import re
import sys
import tokenize
import warnings
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from grader import hints, topics

ROOT = Path(__file__).resolve().parents[1]
RUN = 15  # shared normalised tokens that make a level-3 hint a copy of the solution (see the module docstring)
CODE_LINES = 2  # lines of Python code that make a level-3 hint the solution in Python syntax (module docstring)
CODE_NODES = (ast.Call, ast.Subscript, ast.Attribute, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
              ast.Lambda, ast.AugAssign)
RULE_MARKERS = {  # what states a rule in a level-1 hint (module docstring)
    "a formula": r"[<>=+*/]",
    "a tie-breaking rule": r"\bties?\b",
    "a conditional instruction": r"\bif\b[^,;:.]*,\s*(keep|return|use|take|drop|raise|choose|pick|add|remove|skip|"
                                 r"stop|divide|multiply)\b",
    "a list of steps": r";[^;]*;",
}
LAYOUT = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def raw_tokens(text: str) -> list[tokenize.TokenInfo]:
    """Python tokens of `text`, line by line, so that pseudocode that is not Python still tokenizes.

    A line is tokenized on its own, stripped of its indentation; tokens read before an error (an unclosed
    bracket) are kept.
    """
    out = []
    for line in text.splitlines():
        reader = io.StringIO(line.strip() + "\n").readline
        try:
            out.extend(tokenize.generate_tokens(reader))
        except (tokenize.TokenError, SyntaxError):
            pass
    return out


def normalise(tokens: list[tokenize.TokenInfo]) -> list[str]:
    """Token strings without layout, comments, string contents, module prefixes and leading underscores."""
    kept = [t for t in tokens if t.type not in LAYOUT and t.string.strip()]
    out, i = [], 0
    while i < len(kept):
        t = kept[i]
        if t.type == tokenize.NAME and not keyword.iskeyword(t.string) and i + 1 < len(kept) and \
                kept[i + 1].string == ".":
            i += 2  # `torch.` of `torch.exp`, `self.` of `self.blocks`: the prefix and its dot
            continue
        if t.type == tokenize.STRING:
            out.append("STR")
        elif t.type == tokenize.NAME:
            out.append(t.string.lstrip("_") or t.string)
        else:
            out.append(t.string)
        i += 1
    return out


def solution_tokens(topic: str) -> list[str]:
    """The normalised tokens of solutions/<topic>.py."""
    path = ROOT / "solutions" / f"{topic}.py"
    with path.open() as source:
        return normalise(list(tokenize.generate_tokens(source.readline)))


def longest_shared_run(hint: list[str], solution: list[str]) -> tuple[int, str]:
    """The length of the longest run of tokens the two lists share, and that run as text."""
    match = SequenceMatcher(None, hint, solution, autojunk=False).find_longest_match(0, len(hint), 0, len(solution))
    return match.size, " ".join(hint[match.a:match.a + match.size])


def level3_runs(topic: str) -> dict[str, tuple[int, str]]:
    """Hint key -> the longest run its level-3 hint shares with the topic's solution."""
    solution = solution_tokens(topic)
    return {key: longest_shared_run(normalise(raw_tokens(hints.hint(topic, key, 3))), solution)
            for key in hints.load(topic).get("functions", {})}


def test_normalise_drops_layout_prefixes_and_strings():
    code = "x = torch.exp(s - m)  # note\nself._blocks.pop('a')\n"
    assert normalise(raw_tokens(code)) == ["x", "=", "exp", "(", "s", "-", "m", ")", "pop", "(", "STR", ")"]


def test_a_copied_statement_is_a_long_run():
    line = "acc = alpha[..., None] * acc + p @ vb"  # 14 tokens
    solution = normalise(raw_tokens(f"m_new = torch.maximum(m, s.amax(dim=-1))\n{line}\n"))
    assert longest_shared_run(normalise(raw_tokens(line)), solution)[0] == 14
    assert longest_shared_run(normalise(raw_tokens("acc = rescale(acc) + p @ v")), solution)[0] < 8


@pytest.mark.parametrize("topic", topics.all_topics())
def test_level3_hints_do_not_copy_the_solution(topic):
    copied = {key: run for key, run in level3_runs(topic).items() if run[0] >= RUN}
    assert not copied, (f"level-3 hints of {topic} share {RUN}+ tokens with solutions/{topic}.py:\n"
                        + "\n".join(f"  {key}: {size} tokens: {text}" for key, (size, text) in copied.items()))


def is_code_line(line: str) -> bool:
    """Whether one line of a hint is a Python statement that does something only code does (CODE_NODES).

    A block header (`for x in xs.items():`) is given a body so that it parses on its own.
    """
    line = line.strip()
    source = line + ("\n    pass" if line.endswith(":") else "")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(isinstance(node, CODE_NODES) for node in ast.walk(tree))


def code_lines(text: str) -> list[str]:
    """The lines of `text` that are Python code (is_code_line)."""
    return [line.strip() for line in text.splitlines() if is_code_line(line)]


def rule_markers(text: str) -> list[str]:
    """The RULE_MARKERS that `text` shows."""
    return [name for name, pattern in RULE_MARKERS.items() if re.search(pattern, text)]


def test_code_lines_tell_python_from_words():
    python = "out = logits.clone()\nrow[ids] = where(x < 0, x * p, x / p)\nfor r, s in zip(out, rows):"
    words = "check penalty > 0\nfor each row: take its distinct seen ids\nbest = None\nreturn the copy"
    assert len(code_lines(python)) == 3 and code_lines(words) == []


def test_rule_markers_tell_a_rule_from_an_idea():
    assert rule_markers("Dividing a negative logit by a number > 1 makes it larger.") == ["a formula"]
    assert rule_markers("Keep a few; finished ones keep slots; normalise at the end.") == ["a list of steps"]
    assert rule_markers("if the difference is not significant, keep the cheaper prompt") == \
        ["a conditional instruction"]
    assert rule_markers("A saving can be credited only if that setting is the only change.") == []


@pytest.mark.parametrize("topic", topics.all_topics())
def test_level3_hints_are_not_python(topic):
    written = {key: code_lines(hints.hint(topic, key, 3)) for key in hints.load(topic).get("functions", {})}
    coded = {key: lines for key, lines in written.items() if len(lines) >= CODE_LINES}
    assert not coded, (f"level-3 hints of {topic} hold {CODE_LINES}+ lines of Python; write the order of "
                       f"operations in words:\n" + "\n".join(f"  {key}: {lines}" for key, lines in coded.items()))


@pytest.mark.parametrize("topic", topics.all_topics())
def test_level1_hints_name_the_idea(topic):
    stated = {key: rule_markers(hints.hint(topic, key, 1)) for key in hints.load(topic).get("functions", {})}
    stated = {key: markers for key, markers in stated.items() if markers}
    assert not stated, (f"level-1 hints of {topic} state a rule (move it to level 2 and name the idea):\n"
                        + "\n".join(f"  {key}: {markers}" for key, markers in stated.items()))


if __name__ == "__main__":  # the calibration: every hint's longest shared run (or, with --code, its code lines)
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or topics.all_topics()
    if "--code" in sys.argv:
        for topic in names:
            for key in hints.load(topic).get("functions", {}):
                lines, markers = code_lines(hints.hint(topic, key, 3)), rule_markers(hints.hint(topic, key, 1))
                print(f"{len(lines):4d}  {topic}.{key:40s} {markers} {lines[:2]}")
        sys.exit()
    rows = [(size, f"{topic}.{key}", text) for topic in names for key, (size, text) in level3_runs(topic).items()]
    for size, name, text in sorted(rows, reverse=True):
        print(f"{size:4d}  {name:45s} {text[:110]}")
