"""The pytest plugin that turns check outcomes into scored results and provides the `sub`, `seed`, `rng` fixtures."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from grader.engine import goldens
from grader.engine.checks import CheckMeta
from grader.sandbox.remote import ChildFailure, ChildPool, NotImplementedYet, Submission, SubmissionRaised

HIDDEN_FILE = "test_hidden.py"
PUBLIC_SEED = 0


@dataclass
class CheckResult:
    """One scored check, as it goes into the results JSON."""
    id: str
    topic: str
    title: str
    visibility: str
    max_score: int
    status: str = "skipped"
    message: str = ""
    misconception: str | None = None
    hint: str | None = None
    seed: int = 0
    duration_s: float = 0.0
    internal_error: bool = False
    isolation: dict = field(default_factory=dict)
    tagged: str | None = None  # the misconception a narrow check targets (`@check(misconception=...)`)

    @property
    def score(self) -> int:
        return self.max_score if self.status == "passed" else 0


def check_seed(run_seed: int, check_id: str) -> int:
    """A per-check seed derived from the run seed and the check id (stable across processes)."""
    digest = hashlib.sha256(f"{run_seed}:{check_id}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


class ScorePlugin:
    """Collects the checks of the selected topics, runs each with a fresh sandboxed child, and records results."""

    def __init__(self, zygote, sandbox_config: dict, hidden: bool, seed: int, record_goldens: bool,
                 signature_of):
        self.pool = ChildPool(zygote)
        self.sandbox_config = sandbox_config
        self.hidden = hidden
        self.run_seed = seed
        self.record_goldens = record_goldens
        self.signature_of = signature_of
        self.results: dict[str, CheckResult] = {}
        self.collection_errors: list[tuple[str, str]] = []

    # collection -------------------------------------------------------------------------------------------
    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append((str(report.nodeid), str(report.longrepr)[-3000:]))

    def pytest_collection_modifyitems(self, session, config, items):
        keep = []
        for item in items:
            meta: CheckMeta | None = getattr(getattr(item, "obj", None), "__infergrade__", None)
            path = Path(str(item.path))
            visibility = "hidden" if path.name == HIDDEN_FILE else "public"
            if meta is None or (visibility == "hidden" and not self.hidden):
                continue
            topic = path.parent.name
            check_id = f"{topic}.{meta.name}"
            assert check_id not in self.results, f"duplicate check id {check_id}"
            seed = check_seed(self.run_seed if visibility == "hidden" else PUBLIC_SEED, check_id)
            if getattr(item.obj, "is_hypothesis_test", False):
                from hypothesis import seed as seed_examples
                seed_examples(seed)(item.obj)
            hint = f"{topic}.{meta.hint}" if meta.hint else None
            self.results[check_id] = CheckResult(check_id, topic, meta.title, visibility, meta.points,
                                                 hint=hint, seed=seed, tagged=meta.misconception)
            item.stash[RESULT_KEY] = self.results[check_id]
            keep.append(item)
        items[:] = keep

    # fixtures ---------------------------------------------------------------------------------------------
    @pytest.fixture
    def seed(self, request) -> int:
        return request.node.stash[RESULT_KEY].seed

    @pytest.fixture
    def rng(self, seed) -> torch.Generator:
        return torch.Generator().manual_seed(seed)

    @pytest.fixture
    def sub(self, request):
        result: CheckResult = request.node.stash[RESULT_KEY]
        config = {**self.sandbox_config, "topic": result.topic,
                  "forbidden": list(getattr(request.module, "FORBIDDEN_CALLS", ()))}
        submission = Submission(self.pool, config, lambda name: self.signature_of(result.topic, name))
        yield submission
        result.isolation = submission.isolation
        submission.close()

    def pytest_sessionfinish(self, session):
        self.pool.close()

    # running ----------------------------------------------------------------------------------------------
    def pytest_runtest_call(self, item):
        goldens.activate(item.stash[RESULT_KEY].topic, self.record_goldens)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        yield
        result: CheckResult = item.stash[RESULT_KEY]
        if call.when == "teardown" and call.excinfo is None:
            return
        if call.when == "setup" and call.excinfo is None:
            result.duration_s = 0.0
            return
        result.duration_s += call.duration
        if call.excinfo is None:
            result.status = "passed"
            return
        if call.excinfo.errisinstance(pytest.skip.Exception):
            result.status, result.message = "skipped", str(call.excinfo.value.msg)
            return
        if call.when == "teardown" and result.status != "passed":
            return  # the call phase already said what went wrong
        classify(result, call.excinfo.value, public=result.visibility == "public")


RESULT_KEY = pytest.StashKey[CheckResult]()


def _first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _falsifying_example(notes: list[str]) -> str:
    """Hypothesis's falsifying example, without the fixture arguments and the coverage explanation.

    A state machine's example (`state = Machine()`, draws) is left out: its check reports the operations.
    """
    text = "\n".join(notes).split("\nExplanation:")[0]
    if any(line.strip().startswith("state = ") for line in text.splitlines()):
        return ""
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith(("sub=", "seed=", "rng=")))


def classify(result: CheckResult, exc: BaseException, public: bool) -> None:
    """Set status, message and misconception of `result` from the exception a check ended with."""
    exc = _first_leaf(exc)
    notes = _falsifying_example(getattr(exc, "__notes__", []) or [])
    if isinstance(exc, ChildFailure):
        status, message, category = exc.status, str(exc), \
            "timed out" if exc.status == "timeout" else "the submission crashed or could not be imported"
    elif isinstance(exc, NotImplementedYet):
        status, message, category = "error", str(exc), "not implemented yet"
    elif isinstance(exc, SubmissionRaised):
        where = f"\n{exc.where.rstrip()}" if exc.where else ""
        status, message, category = "error", f"{exc}{where}", f"raised {exc.type_name}"
    elif isinstance(exc, AssertionError):
        status, message, category = "failed", str(exc) or "a check assertion failed", "wrong result"
        result.misconception = getattr(exc, "misconception", None) or result.tagged
    else:
        status, category = "error", "the grader could not evaluate the result"
        message = f"grader error while running this check: {type(exc).__name__}: {exc}"
        result.internal_error = True
    result.status = status
    if public:
        result.message = message + (f"\n{notes}" if notes and status == "failed" else "")
    else:
        result.message = f"{result.title}: {category}"
