"""A failure is charged to the function that causes it, on the screens a student reads (`check`, `progress` and
`watch`, each in a real terminal): a written function that calls an unwritten one waits for it; one whose own
helper still raises NotImplementedError is failing and names the helper; one that calls a function failing its own
checks says to check that one first."""
import re

import pytest
from terminal import in_terminal

from grader.engine import blame
from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "sampling.py").read_text()


def waits_for_sample() -> str:
    """sample unwritten; empirical_distribution written, through sample (an exponential race per draw)."""
    source = SOLUTION.replace(
        '''    assert probs.shape == noise.shape and bool((noise > 0).all()), "noise: positive, shaped like probs"
    return torch.argmax(probs / noise, dim=-1)''', '''    raise NotImplementedError("TODO")''').replace(
        '''    draws = torch.multinomial(rows, num_samples, replacement=True, generator=generator)''',
        '''    noise = torch.empty(num_samples, *rows.shape, dtype=torch.float64).exponential_(generator=generator)
    draws = torch.stack([sample(rows, n) for n in noise], dim=-1)''')
    assert source.count("NotImplementedError") == 1 and "sample(rows, n)" in source
    return source


def own_helper() -> str:
    """filtered_probs written, calling a helper of the student's own that still raises NotImplementedError."""
    source = re.sub(r'(def filtered_probs\(.*?\n    """.*?"""\n)', r'\1    _masked_softmax(logits)\n',
                    SOLUTION.replace("def filtered_probs(", 'def _masked_softmax(x):\n    raise NotImplementedError('
                                     '"TODO: my helper")\n\n\ndef filtered_probs('), count=1, flags=re.S)
    assert "_masked_softmax(logits)" in source
    return source


def broken_callee() -> str:
    """top_p_filter keeps every token; filtered_probs, which calls it, is otherwise right."""
    source = SOLUTION.replace('''        raise ValueError(f"p must be in (0, 1], got {p}")''',
                              '''        raise ValueError(f"p must be in (0, 1], got {p}")
    return logits''', 1)
    assert source != SOLUTION
    return source


@pytest.fixture(scope="module")
def screens(tmp_path_factory) -> dict[str, dict[str, str]]:
    """For each case, the screens of `check sampling`, then `progress`, then `watch sampling` (one check run each)."""
    shown = {}
    for case, source in (("waits", waits_for_sample()), ("helper", own_helper()), ("callee", broken_callee())):
        folder = tmp_path_factory.mktemp(case)
        folder.chmod(0o755)
        (folder / "sampling.py").write_text(source)
        shown[case] = {"check": in_terminal(["check", "sampling", "--submission", str(folder)]),
                       "progress": in_terminal(["progress", "--submission", str(folder)]),
                       "watch": in_terminal(["watch", "sampling", "--submission", str(folder)], until="next:")}
    return shown


def test_a_function_that_calls_an_unwritten_one_waits_for_it(screens):
    check, progress, watch = (screens["waits"][k] for k in ("check", "progress", "watch"))
    assert "NOT STARTED sample" in check and "empirical_distribution waits for sample" in check, check
    assert "NOT STARTED empirical_distribution" not in check
    line = next(line for line in progress.splitlines() if "empirical_distribution" in line)
    assert "waits for sample" in line and "passing" not in line and "not started" not in line, progress
    assert "next: write sampling.sample" in progress
    row = next(line for line in watch.splitlines() if "empirical_distribution" in line)
    assert "blocked" in row and "sample" in row, watch
    assert "next: write sample " in watch and "write empirical_distribution" not in watch, watch


def test_a_function_whose_own_helper_is_unwritten_is_failing_and_names_the_helper(screens):
    check, progress, watch = (screens["helper"][k] for k in ("check", "progress", "watch"))
    said = "filtered_probs calls `_masked_softmax` (sampling.py:"
    assert said in check and "which still raises NotImplementedError('TODO: my helper')" in check, check
    assert "NOT STARTED filtered_probs" not in check
    line = next(line for line in progress.splitlines() if " filtered_probs " in line)
    assert "failing" in line, progress
    line = next(line for line in progress.splitlines() if " apply_temperature " in line)  # its check calls
    assert "waits for filtered_probs" in line, progress                                  # filtered_probs
    assert said in watch and "next: fix sampling.py" in watch and "write filtered_probs" not in watch, watch


def test_a_function_that_calls_a_failing_one_says_to_check_that_first(screens):
    check, watch = screens["callee"]["check"], screens["callee"]["watch"]
    first = "check `top_p_filter` first: it fails its own checks, and filtered_probs calls it"
    blocks = re.split(r"\n  (?=\S)", check)  # one per check: its line, then its message indented further
    blamed = [block for block in blocks if "filtered_probs_" in block.split("\n")[0]]
    assert blamed and all(first in block for block in blamed), check
    assert first not in "".join(block for block in blocks if "top_p_" in block.split("\n")[0])
    assert "first failure: sampling.top_p" in watch, watch  # top_p_filter's own checks come first


def test_a_check_that_calls_two_functions_blames_neither_by_its_failure():
    """A check of apply_temperature that also calls filtered_probs says nothing about apply_temperature."""
    class Result:
        def __init__(self, hint, status, called, message="m"):
            self.topic, self.hint, self.status, self.called, self.message = "sampling", hint, status, called, message
            self.function = self.raised_by = None

    mixed = Result("sampling.apply_temperature", "failed", {"apply_temperature", "filtered_probs"})
    caller = Result("sampling.filtered_probs", "failed", {"filtered_probs"})
    blame.point_at_callees([mixed, caller], REPO / "solutions")
    assert caller.message == "m" and mixed.message == "m"
    own = Result("sampling.apply_temperature", "failed", {"apply_temperature"})
    blame.point_at_callees([own, caller], REPO / "solutions")
    assert caller.message.startswith("check `apply_temperature` first") and own.message == "m"


def test_calls_are_read_from_the_syntax_tree_without_running_it():
    source = "class A:\n    def f(self):\n        return self.g() + h()\n    def g(self):\n        pass\n" \
             "def h():\n    import os; os.system('x')\ndef k(:\n"
    assert blame.contract_calls(source, {"A.f", "A.g", "h"}) == {}  # not Python: nothing
    assert blame.contract_calls(source.rsplit("def k", 1)[0], {"A.f", "A.g", "h"}) == \
        {"A.f": {"A.g", "h"}, "A.g": set(), "h": set()}
