"""Check-engine semantics on a small throwaway topic: statuses, skips, seeds, hidden messages, misconceptions."""
import shutil
import sys
import textwrap

import pytest
from hypothesis import given, settings, strategies as st

from grader import topics
from grader.engine import close
from grader.engine.plugin import check_seed
from grader.grading import grade

CHECKS = textwrap.dedent('''
    import pytest
    from hypothesis import given, strategies as st
    from grader.engine import check, expect_equal, fail

    @check("passes", points=2, hint="double")
    def test_passes(sub):
        expect_equal(sub.double(3), 6, "double(3)")

    @check("wrong", points=3, hint="double", title="double of 21 is 42")
    def test_wrong(sub):
        got = sub.double(21)
        expect_equal(got, 42, "double(21)", misconceptions={"adds_instead": 23})

    @check("tagged", points=1, misconception="always_tagged")
    def test_tagged(sub):
        if sub.double(1) != 2:
            fail("double(1) != 2")

    @check("skipped", points=5)
    def test_skipped(sub):
        pytest.skip("needs hardware this machine does not have")

    @check("seeded", points=1)
    @given(st.integers(0, 10**6))
    def test_seeded(sub, n):
        assert sub.double(n) == 2 * n

    @check("raises", points=1)
    def test_raises(sub):
        sub.explode()
''')
HIDDEN = textwrap.dedent('''
    from grader.engine import check, expect_equal

    @check("hidden_wrong", points=2, title="double on hidden cases")
    def test_hidden_wrong(sub, seed):
        expect_equal(sub.double(seed % 1000 + 21), 2 * (seed % 1000 + 21), f"double({seed % 1000 + 21})",
                     misconceptions={"adds_instead": seed % 1000 + 23})
''')
GOOD = "def double(x):\n    return 2 * x\n\ndef explode():\n    return None\n"
BUGGY = "def double(x):\n    return x + 2\n\ndef explode():\n    raise KeyError('boom')\n"


@pytest.fixture
def demo(tmp_path, monkeypatch):
    checks = tmp_path / "checks"
    (checks / "demo").mkdir(parents=True)
    shutil.copy(topics.CHECKS_DIR / "pytest.ini", checks / "pytest.ini")
    (checks / "demo" / "__init__.py").write_text("")
    (checks / "demo" / "test_public.py").write_text(CHECKS)
    (checks / "demo" / "test_hidden.py").write_text(HIDDEN)
    monkeypatch.setattr(topics, "CHECKS_DIR", checks)

    def run(source, hidden=True, seed=7):
        for name in [m for m in sys.modules if m == "demo" or m.startswith("demo.")]:
            del sys.modules[name]  # each test's checks live in its own tmp folder
        sub = tmp_path / f"sub{abs(hash(source)) % 10**6}"
        sub.mkdir(exist_ok=True)
        (sub / "demo.py").write_text(source)
        doc = grade(sub, ["demo"], hidden=hidden, seed=seed, with_progress=False)
        return {c["id"].split(".", 1)[1]: c for c in doc["topics"][0]["checks"]}, doc
    return run


def test_a_correct_submission_passes_and_skips_are_not_passes(demo):
    checks, doc = demo(GOOD)
    assert {k: c["status"] for k, c in checks.items()} == {
        "passes": "passed", "wrong": "passed", "tagged": "passed", "skipped": "skipped", "seeded": "passed",
        "raises": "passed", "hidden_wrong": "passed"}
    skipped = checks["skipped"]
    assert skipped["score"] == 0 and skipped["max_score"] == skipped["points"] == 5
    assert "needs hardware" in skipped["message"]
    assert doc["max_score"] == doc["score"] + 5 and doc["topics"][0]["status"] == "incomplete"
    assert "needs hardware" in doc["incomplete"]


def test_failures_errors_and_misconceptions(demo):
    checks, doc = demo(BUGGY)
    assert checks["wrong"]["status"] == "failed" and checks["wrong"]["misconception"] == "adds_instead"
    assert "double(21): expected 42, got 23" in checks["wrong"]["message"]
    assert checks["tagged"]["status"] == "failed" and checks["tagged"]["misconception"] == "always_tagged"
    assert checks["raises"]["status"] == "error" and "raised KeyError: 'boom'" in checks["raises"]["message"]
    seeded = checks["seeded"]["message"]
    assert checks["seeded"]["status"] == "failed" and "shrunk inputs: n=0" in seeded
    assert "assert sub.double(n) == 2 * n" in seeded and "0x" not in seeded and "object at" not in seeded
    assert doc["topics"][0]["status"] == "failed" and doc["score"] == 0


def test_hidden_messages_show_only_title_category_and_misconception(demo):
    checks, _ = demo(BUGGY)
    hidden = checks["hidden_wrong"]
    assert hidden["status"] == "failed" and hidden["misconception"] == "adds_instead"
    assert hidden["message"] == "double on hidden cases: wrong result"


def test_public_seeds_are_fixed_and_hidden_seeds_follow_the_run_seed(demo):
    a, _ = demo(GOOD, seed=1)
    b, _ = demo(GOOD, seed=2)
    assert a["passes"]["seed"] == b["passes"]["seed"] == check_seed(0, "demo.passes")
    assert a["hidden_wrong"]["seed"] == check_seed(1, "demo.hidden_wrong") != b["hidden_wrong"]["seed"]


def test_public_mode_runs_no_hidden_check(demo):
    checks, doc = demo(GOOD, hidden=False)
    assert "hidden_wrong" not in checks and doc["mode"] == "public"


def test_same_seed_same_messages(demo):
    first, _ = demo(BUGGY, seed=3)
    second, _ = demo(BUGGY, seed=3)
    assert {k: c["message"] for k, c in first.items()} == {k: c["message"] for k, c in second.items()}


@pytest.mark.parametrize("raised,shown", [("ValueError", "raised ValueError"),
                                          ("Leak_seed_0123", "raised an exception")])
def test_hidden_messages_never_carry_a_name_the_submission_chose(demo, raised, shown):
    source = (f"class Leak_seed_0123(Exception):\n    pass\n\n"
              f"def double(x):\n    raise {raised}(str(x))\n\ndef explode():\n    return None\n")
    checks, _ = demo(source)
    hidden = checks["hidden_wrong"]
    assert hidden["status"] == "error" and hidden["message"] == f"double on hidden cases: {shown}"


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("actual,expected,close", [
    (1.0 + 1e-7, 1.0, True), (1.1, 1.0, False), (NAN, 1.0, False), (INF, 1.0, False), (-INF, 1.0, False),
    (INF, INF, True), (-INF, INF, False), (1e308, INF, False), (NAN, NAN, True), (1.0, NAN, False),
    (10**39, 1e39, True), (True, 1.0, False), ("1.0", 1.0, False), (10**400, 5, False), (-10**400, -INF, True)])
def test_within_fails_for_nan_and_inf_unless_expected(actual, expected, close):
    from grader.engine import within
    assert within(actual, expected, atol=1e-6) is close


def test_outside_marks_each_nonfinite_element_of_a_tensor():
    import torch

    from grader.engine import outside
    got = torch.tensor([[0.5, NAN], [INF, -INF]])
    want = torch.tensor([[0.5, 0.5], [INF, 0.0]])
    assert outside(got, want, atol=1e-9).tolist() == [[False, True], [False, True]]
    assert outside(torch.full((3,), NAN), 1.0, atol=1e-5).all()  # the sums of all-NaN probabilities


def test_expect_length_refuses_a_reply_before_it_is_converted():
    import torch

    from grader.engine import CheckFailure, expect_length
    huge = torch.zeros(48 * 2**20, dtype=torch.int8)
    with pytest.raises(CheckFailure, match=f"of {huge.numel()} items, expected exactly 9"):
        expect_length(huge, "speculative_generate(...)", count=9)
    assert expect_length([1, 2], "f()", at_most=2) == 2
    with pytest.raises(CheckFailure, match="expected at most 1"):
        expect_length("ab", "f()", at_most=1)
    with pytest.raises(CheckFailure, match="expected a sequence"):
        expect_length(3, "f()", count=1)


NUMBERS = st.one_of(st.integers(min_value=-10**400, max_value=10**400), st.floats(allow_nan=True, allow_infinity=True))


@settings(max_examples=400, deadline=None)
@given(NUMBERS, NUMBERS, st.sampled_from([0.0, 1e-9, 1e-3, 1.0]), st.sampled_from([0.0, 1e-6, 0.1]))
def test_within_decides_python_numbers_as_it_decides_tensors(actual, expected, atol, rtol):
    """The shortcut for two Python numbers follows `outside`'s rule: NaN and infinity pass only where expected."""
    as_tensors = not bool(close.outside(close.as_float64(actual), close.as_float64(expected), atol, rtol).any())
    assert close.within(actual, expected, atol, rtol) is as_tensors


@settings(max_examples=300, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=4), target=st.lists(st.integers(0, 3), max_size=4))
def test_broadcasts_to_agrees_with_torch(shape, target):
    """close.broadcasts_to is torch.broadcast_shapes(shape, target) == target without torch's sympy import."""
    import torch

    try:
        expected = torch.broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)
    except RuntimeError:
        expected = False
    assert close.broadcasts_to(tuple(shape), tuple(target)) == expected


def test_a_check_imports_no_sympy(tmp_path):
    """Comparing a reply imports nothing heavy: `within` on tensors of broadcast shapes leaves sympy unloaded."""
    import subprocess

    probe = ("import sys, torch\nfrom grader.engine.close import within\n"
             "assert within(torch.ones(2, 3), torch.ones(3)) and not within(torch.ones(3), torch.ones(2, 3))\n"
             "print('sympy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert done.stdout.split() == ["False"]


def test_the_checks_shrink_a_failure_but_never_explain_it():
    """A failing check's example is shrunk (the student reads the smallest one); hypothesis's explain phase, which
    replays it hundreds of times to annotate a report the grader never shows, does not run."""
    import hypothesis

    from grader.engine.runner import load_hypothesis_profile

    load_hypothesis_profile()
    phases = hypothesis.settings().phases
    assert hypothesis.Phase.shrink in phases and hypothesis.Phase.generate in phases
    assert hypothesis.Phase.explain not in phases
