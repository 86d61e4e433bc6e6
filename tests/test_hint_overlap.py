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

Issue 26 (points 20-22) named hints the two tests above let through, and three more detectors catch their classes:
- code-shaped lines at level 3: pseudocode that assigns (`z = the logits in float64`, `out[s, h] += ...`), calls
  a name (`log_softmax(model(...))`), indexes one (`row[ids]`), opens a Python loop (`for level, runs in ...`) or
  returns a Python expression (`return best`), though it does not parse as Python. A leading method header
  (`record(call_id, usage, seconds):`) names the method a class's hint describes, a trailing comment is words, and
  a definition written `M := ...` is a formula's notation, so none of them counts. CODE_SHAPED = 2: a formula on
  one line is allowed, steps written as code are not. On 7f85058 this flags the six level-3 hints issue 26 names
  (beam_search 3 lines, filtered_probs 4, pick_effort 4, verify 4, kv_bytes_per_token 2, tiled_attention 2) and
  thirteen more that write two or more steps as assignments or calls: kv_cache_bytes, max_concurrent_sequences,
  OutOfBlocks, BlockAllocator.append, paged_attention, PrefixCache, UsageLedger, compare_variants,
  expected_speedup and four of timeline's (rewritten since); `python tests/test_hint_overlap.py --shapes` prints
  what it flags today;
- the rule at level 1: beside the four markers above, a number, an order of steps ("then"), a condition
  ("until", "unless", "only when"), a formula in words ("is the number of", "equals", "rule") and an argument's
  name or a formula's symbol (a snake_case name that is not one of the topic's own functions, alpha, gamma, ...).
  A citation's year is not a number. On 7f85058 these fire on the eight level-1 hints issue 26 names
  (BlockAllocator.free, .fork, .seq_len, reservation_waste, cacheable_prefix, expected_tokens_per_iteration,
  serving.simulate, decoding.greedy_decode) and on two more that state a rule as well: latency.schedule ("only
  when every step it waits for has ended", since rewritten) and BlockAllocator.append ("a block is taken only when
  the sequence crosses into a new one");
- a fix in a misconception text, which is shown before any hint is asked for: a sentence or clause that opens with
  an imperative (FIX_IMPERATIVES: "Divide", "Renormalise", "Use", "Count", "Keep", ...) or a phrasing that says
  what ought to be done ("should", "must", "has to", "need to", "instead"). Gerunds ("Keeping only the indices
  ...") describe what the submission did and do not match. On 7f85058 this flags no_renormalization ("must sum to
  1"), partial_state_on_failure and full_prompt_hit of the thirteen texts issue 26 names, and leak_on_free,
  unchained_hash and decode_compute_bound beside them; the other ten state the fix as a plain fact ("Temperature
  acts on the logits, before the softmax"), which no word list tells from a diagnosis: left to review.
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
    "a formula": r"[<>=+*/]|\d",
    "a tie-breaking rule": r"\bties?\b",
    "a conditional instruction": r"\bif\b[^,;:.]*,\s*(keep|return|use|take|drop|raise|choose|pick|add|remove|skip|"
                                 r"stop|divide|multiply)\b",
    "a list of steps": r";[^;]*;",
    "an order of steps": r"\bthen\b",
    "a condition": r"\b(?:until|unless|only (?:when|once|after))\b",
    "a formula in words": r"\b(?:is|are) the (?:number|count|sum|total|product|ratio) of\b|\bequals\b|\brule\b",
}
CITATION = re.compile(r"\([^()]*\b(?:19|20)\d\d\)")  # "(Keskar et al. 2019)": a year, not a number of the rule
SYMBOLS = {"alpha", "beta", "gamma", "delta", "lambda", "mu", "sigma", "tau"}  # a formula's variables, spelt out
NAME = r"[A-Za-z_]\w*"
CODE_SHAPED = 2  # code-shaped lines that make a level-3 hint code rather than words (module docstring)
CODE_SHAPES = {
    "an assignment": re.compile(rf"(?:^|;\s*){NAME}(?:\.{NAME}|\[[^\]]*\])*\s*(?:[-+*/]?=)(?!=)"),
    "a call": re.compile(rf"\b{NAME}\((?!\))"),
    "a loop header": re.compile(rf"^for\s+{NAME}(?:\s*,\s*{NAME})*\s+in\b"),
    "indexing": re.compile(rf"(?:\b{NAME}|[)\]])\["),
}
METHOD_HEADER = re.compile(rf"^{NAME}\([^()]*\):")  # `record(call_id, usage, seconds):` opens a method's steps
FIX_IMPERATIVES = ("add", "apply", "call", "check", "compare", "compute", "count", "divide", "draw", "drop",
                   "exclude", "include", "keep", "make", "multiply", "normalise", "normalize", "pass", "put", "read",
                   "remove", "renormalise", "renormalize", "return", "scale", "set", "skip", "sort", "store",
                   "subtract", "sum", "take", "treat", "use")
FIX_IMPERATIVE = re.compile(rf"(?:^|[.!?;:]\s+)(?:{'|'.join(FIX_IMPERATIVES)})\b", re.IGNORECASE)
FIX_MODAL = re.compile(r"\b(?:should|must|ought to|needs? to|has to|have to|instead)\b", re.IGNORECASE)
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
    """The RULE_MARKERS that `text` shows (a citation's year aside)."""
    text = CITATION.sub("", text)
    return [name for name, pattern in RULE_MARKERS.items() if re.search(pattern, text)]


def named_arguments(topic: str, text: str) -> list[str]:
    """The arguments (snake_case names that are not the topic's own functions) and symbols a hint names."""
    own = {part for key in topics.api(topic) for part in key.split(".")}
    return [word for word in re.findall(rf"\b{NAME}\b", text)
            if word.lower() in SYMBOLS or ("_" in word.strip("_") and word not in own)]


def code_shapes(line: str) -> list[str]:
    """The CODE_SHAPES one line of a level-3 hint shows, and "a return" for `return` of a Python expression; a
    leading method header and a trailing comment are left out."""
    line = METHOD_HEADER.sub("", line.split("#")[0].strip()).strip()
    shapes = [name for name, pattern in CODE_SHAPES.items() if pattern.search(line)]
    if re.match(r"return\b", line) and is_python(line):
        shapes.append("a return")
    return shapes


def is_python(line: str) -> bool:
    """Whether `line` parses as a Python statement on its own."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(line)
    except SyntaxError:
        return False
    return True


def code_shaped_lines(text: str) -> list[str]:
    """The lines of `text` that are code-shaped (code_shapes)."""
    return [line.strip() for line in text.splitlines() if code_shapes(line)]


def fixes_given(text: str) -> list[str]:
    """The places where a misconception text says what to do: an imperative opening a sentence or clause, or a
    phrasing of what ought to be done, each with the words after it."""
    found = [m for pattern in (FIX_IMPERATIVE, FIX_MODAL) for m in pattern.finditer(text)]
    return [text[m.start():m.end() + 40].strip() for m in sorted(found, key=lambda m: m.start())]


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


def level1_markers(topic: str, text: str) -> list[str]:
    """Everything that makes a level-1 hint state a rule: RULE_MARKERS and the arguments or symbols it names."""
    named = named_arguments(topic, text)
    return rule_markers(text) + ([f"an argument or a symbol ({', '.join(named)})"] if named else [])


@pytest.mark.parametrize("topic", topics.all_topics())
def test_level1_hints_name_the_idea(topic):
    stated = {key: level1_markers(topic, hints.hint(topic, key, 1)) for key in hints.load(topic).get("functions", {})}
    stated = {key: markers for key, markers in stated.items() if markers}
    assert not stated, (f"level-1 hints of {topic} state a rule (move it to level 2 and name the idea):\n"
                        + "\n".join(f"  {key}: {markers}" for key, markers in stated.items()))


def test_code_shapes_tell_code_from_words():
    code = ["z = temperature applied to z", "live = [(no new tokens, 0.0)]; finished = []",
            "candidate score = the beam's sum + log_softmax(model(prompt))[v]", "for level, runs in results.items():",
            "return best", "validate runs; accuracy = the share correct", "out[s, h] += the weighted values"]
    words = ["work on the logits in float64 when they are float64", "for each live beam, in order, and every token:",
             "return the new tokens and \"length\"", "each finished beam's score is its sum over its length",
             "record(call_id, usage, seconds):", "the winner is the position of the largest score  # ties: first",
             "a [B, V] tensor (one row per sequence)", "M := the larger of M and the row's top score", "reject a penalty that is not above 0 (ValueError naming it)",
             "threshold per row = the smallest of the row's k best values"]
    assert [line for line in code if not code_shapes(line)] == []
    assert [line for line in words if code_shapes(line)] == []
    assert code_shapes("y = f(x[0])") == ["an assignment", "a call", "indexing"]


def test_level1_markers_find_the_rule_and_spare_the_idea():
    rules = {  # level-1 hints of 7f85058 that issue 26 names, and what gives each away
        "paged_kv": ["Freeing a sequence drops its reference to each of its blocks; a block goes back to the pool "
                     "only when its last reference is gone.",
                     "A fork shares the parent's KV blocks: no block is copied until one of the two writes.",
                     "A sequence's length is the number of tokens append has reserved slots for.",
                     "Systems that reserve max_len slots per request waste everything the request never fills."],
        "speculative": ["Each draft token survives with probability alpha, independently; add the one extra token."],
        "decoding": ["One loop, one model call per new token: pick, append, then ask in order whether eos ends it."],
        "prompt_cache": ["The same whole-block, leave-the-last-token rule as PrefixCache.match, applied twice."],
    }
    ideas = {
        "decoding": ["CTRL's repetition penalty (Keskar et al. 2019): discount every token already in the context.",
                     "Autoregressive decoding: each token the model picks becomes part of the context it reads."],
        "flash_attention": ["The online softmax of tiled_attention, written as one Triton program per query tile."],
        "serving": ["An engine loop: a clock, a waiting queue and a running batch, advanced one priced step at a "
                    "time."],
        "latency": ["A saving can be credited to a setting only if that setting is the only thing that changed."],
    }
    assert [text for topic, texts in rules.items() for text in texts if not level1_markers(topic, text)] == []
    assert [text for topic, texts in ideas.items() for text in texts if level1_markers(topic, text)] == []


def test_fixes_are_found_and_diagnoses_are_not():
    fixes = ["After the filters remove tokens, the remaining probabilities must sum to 1.",
             "The mass is wrong. Renormalise the survivors.", "Rows are off; divide by the sum.",
             "This keeps the ties out: compare with the k-th value instead.", "The hash should cover the prefix.",
             "Use repeat_interleave along the head axis."]
    diagnoses = ["Keeping only the indices torch.topk returns drops logits tied with the k-th largest.",
                 "The rows of this output sum to less than 1: the removed tokens were zeroed.",
                 "Dividing every probability of a row by the same T scales the whole row by one factor.",
                 "Forming log(sum(exp(s))) directly overflows to inf once scores pass about 88."]
    assert [text for text in fixes if not fixes_given(text)] == []
    assert [text for text in diagnoses if fixes_given(text)] == []


@pytest.mark.parametrize("topic", topics.all_topics())
def test_level3_hints_are_written_in_words(topic):
    shaped = {key: code_shaped_lines(hints.hint(topic, key, 3)) for key in hints.load(topic).get("functions", {})}
    shaped = {key: lines for key, lines in shaped.items() if len(lines) >= CODE_SHAPED}
    assert not shaped, (f"level-3 hints of {topic} write {CODE_SHAPED}+ steps as code (assignments, calls, "
                        f"indexing); write the order of operations in words:\n"
                        + "\n".join(f"  {key}: {lines}" for key, lines in shaped.items()))


@pytest.mark.parametrize("topic", topics.all_topics())
def test_misconception_texts_show_the_symptom_not_the_fix(topic):
    found = {key: fixes_given(text) for key, text in hints.load(topic)["misconceptions"].items()}
    found = {key: places for key, places in found.items() if places}
    assert not found, (f"misconception texts of {topic} say what to do (show the symptom and why it is wrong; the "
                       f"fix belongs to the hint ladder):\n"
                       + "\n".join(f"  {key}: {places}" for key, places in found.items()))


if __name__ == "__main__":  # the calibration: every hint's longest shared run (--code, --shapes: its code lines)
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or topics.all_topics()
    if "--shapes" in sys.argv:  # code-shaped level-3 lines, level-1 markers, fixes in misconception texts
        for topic in names:
            for key in hints.load(topic).get("functions", {}):
                lines, markers = code_shaped_lines(hints.hint(topic, key, 3)), level1_markers(topic, hints.hint(
                    topic, key, 1))
                if lines or markers:
                    print(f"{len(lines):4d}  {topic}.{key:40s} {markers} {lines[:2]}")
            for key, text in hints.load(topic)["misconceptions"].items():
                if fixes_given(text):
                    print(f"   !  {topic}.{key:40s} {fixes_given(text)}")
        sys.exit()
    if "--code" in sys.argv:
        for topic in names:
            for key in hints.load(topic).get("functions", {}):
                lines, markers = code_lines(hints.hint(topic, key, 3)), rule_markers(hints.hint(topic, key, 1))
                print(f"{len(lines):4d}  {topic}.{key:40s} {markers} {lines[:2]}")
        sys.exit()
    rows = [(size, f"{topic}.{key}", text) for topic in names for key, (size, text) in level3_runs(topic).items()]
    for size, name, text in sorted(rows, reverse=True):
        print(f"{size:4d}  {name:45s} {text[:110]}")
