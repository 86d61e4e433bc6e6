"""NaN and infinity pass no check that a wrong number fails: every function and method of every topic's solution is
wrapped to return NaN (then inf) in place of every float it returns (floats, float elements of tensors, in lists,
tuples and dict values), and every public check is graded.

Zeros and infinities are kept, as the answer's structure (the removed tokens of a filter): the issue's attack kept
the zeros of filtered_probs and made the kept probabilities NaN. A check that judges a number fails when the
numbers are wrong; so each check that passes with NaN or inf must also pass when every one of them is replaced by a
wrong finite number (-(|x| + 1.7)). Before the NaN-proof comparisons, `filtered_probs_renormalizes` passed with
NaN probabilities and failed with wrong finite ones.
"""
import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO
from grader.topics import all_topics

# appended to each solution, after `_replace`
POISON = '''

import functools as _functools, inspect as _inspect, math as _math, torch as _torch
_depth = [0]


def _poisoned(x):
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, float):
        return _replace(x) if _math.isfinite(x) and x != 0 else x
    if isinstance(x, _torch.Tensor) and x.is_floating_point():
        numbers = _torch.isfinite(x) & (x != 0)  # zeros and infinities are the answer's structure: kept
        return _torch.where(numbers, _replace(x), x)
    if isinstance(x, list):
        return [_poisoned(e) for e in x]
    if type(x) is tuple:
        return tuple(_poisoned(e) for e in x)
    if isinstance(x, dict):
        return {k: _poisoned(v) for k, v in x.items()}
    return x


def _wrapped(fn):
    @_functools.wraps(fn)
    def run(*args, **kwargs):
        _depth[0] += 1  # only what the grader receives is poisoned, not the solution's calls of its own functions
        try:
            out = fn(*args, **kwargs)
        finally:
            _depth[0] -= 1
        return _poisoned(out) if _depth[0] == 0 else out
    return run


for _name, _obj in list(globals().items()):
    if _name.startswith("_") or getattr(_obj, "__module__", None) != __name__:
        continue
    if _inspect.isfunction(_obj):
        globals()[_name] = _wrapped(_obj)
    elif _inspect.isclass(_obj):
        for _method, _fn in list(vars(_obj).items()):
            if not _method.startswith("_") and _inspect.isfunction(_fn):
                setattr(_obj, _method, _wrapped(_fn))
'''
REPLACE = {  # poison -> what replaces each finite nonzero number x (a float, or a tensor's elements)
    "nan": "x * 0 + float('nan')",
    "inf": "x * 0 + float('inf')",
    "wrong": "-(abs(x) + 1.7)",
}


def statuses(folder, poison: str) -> dict[str, str]:
    """Each public check's status, by id, over every topic, when the solutions' numbers are `poison`."""
    folder.mkdir()
    for topic in all_topics():
        source = (REPO / "solutions" / f"{topic}.py").read_text()
        (folder / f"{topic}.py").write_text(f"{source}\n_replace = lambda x: {REPLACE[poison]}\n{POISON}")
    doc = grade(folder, all_topics(), hidden=False, seed=0, with_progress=False)
    checks = [c for t in doc["topics"] for c in t["checks"]]
    assert checks and not any(c["internal_error"] for c in checks)
    return {c["id"]: c["status"] for c in checks}


@pytest.fixture(scope="module")
def judging_numbers(tmp_path_factory) -> set[str]:
    """The checks that judge a number: they fail, as a wrong result (not a timeout on a loaded machine), when
    every number is wrong."""
    judging = {i for i, status in statuses(tmp_path_factory.mktemp("wrong") / "sub", "wrong").items()
               if status == "failed"}
    assert "sampling.filtered_probs_renormalizes" in judging
    return judging


@pytest.mark.parametrize("poison", ["nan", "inf"])
def test_nonfinite_numbers_pass_no_check_that_judges_a_number(tmp_path, poison, judging_numbers):
    passed = {i for i, status in statuses(tmp_path / "sub", poison).items() if status == "passed"}
    assert passed & judging_numbers == set()
