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
"""
import io
import keyword
import sys
import tokenize
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from grader import hints, topics

ROOT = Path(__file__).resolve().parents[1]
RUN = 15  # shared normalised tokens that make a level-3 hint a copy of the solution (see the module docstring)
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


if __name__ == "__main__":  # the calibration: every hint's longest shared run, longest first
    rows = [(size, f"{topic}.{key}", text) for topic in (sys.argv[1:] or topics.all_topics())
            for key, (size, text) in level3_runs(topic).items()]
    for size, name, text in sorted(rows, reverse=True):
        print(f"{size:4d}  {name:45s} {text[:110]}")
