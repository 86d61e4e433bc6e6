"""The pytest plugin that turns check outcomes into scored results and provides the `sub`, `seed`, `rng` fixtures."""
from __future__ import annotations

import builtins
import functools
import hashlib
import linecache
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from grader import language
from grader.engine import goldens
from grader.engine.checks import CheckFailure, CheckMeta
from grader.interrupt import Interrupted, as_interrupted
from grader.sandbox.failures import ChildFailure, NotImplementedYet, ReplyTooLarge, SubmissionRaised
from grader.sandbox.pool import ChildPool
from grader.sandbox.remote import Submission, describe_arguments

HIDDEN_FILE = "test_hidden.py"
PUBLIC_SEED = 0
TIMEOUTS_TO_STOP = 3  # a topic whose checks time out this many times in a row hangs everywhere: the rest do not run
STOPPED = f"stopped after {TIMEOUTS_TO_STOP} checks timed out in a row"


@dataclass
class CheckResult:
    """One scored check, as it goes into the results JSON."""
    id: str
    topic: str
    title: str
    visibility: str
    max_score: int
    status: str = "pending"  # until the check has run; a run that stops first reports it as interrupted
    message: str = ""
    misconception: str | None = None
    hint: str | None = None
    seed: int = 0
    duration_s: float = 0.0
    internal_error: bool = False
    import_failure: bool = False  # the topic's module could not be imported: said once, at the topic
    function: str | None = None   # the function a `not_started` check waits for, or whose call raised (`error`)
    output: str = ""              # the last lines the submission printed during this check
    called: set[str] = field(default_factory=set)  # the submission's functions and methods the check called
    raised_by: str | None = None  # the last of them that raised NotImplementedError, caught by the check or not
    isolation: dict = field(default_factory=dict)
    tagged: str | None = None  # the misconception a narrow check targets (`@check(misconception=...)`)
    stopped: bool = False  # not run: its topic was stopped after TIMEOUTS_TO_STOP timeouts (said once, at the topic)

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
                 signature_of, deadline_s: float | None = None, topics: int = 1):
        self.pool = ChildPool(zygote, deadline_s, topics)
        self.sandbox_config = sandbox_config
        self.hidden = hidden
        self.run_seed = seed
        self.record_goldens = record_goldens
        self.signature_of = signature_of
        self.results: dict[str, CheckResult] = {}
        self.collection_errors: list[tuple[str, str]] = []
        self.interrupted: Interrupted | None = None
        self.timeouts_in_row: dict[str, int] = {}  # topic -> its checks that timed out since the last that did not

    def pytest_configure(self, config):
        """Failures render as Python's own traceback: pytest's default walks the check module's syntax tree for
        every frame of every failure (2 s a check under pytest 8.3), and no one reads that rendering."""
        config.option.tbstyle = "native"

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
                _record_examples(item.obj, set(item.fixturenames))
            hint = f"{topic}.{meta.hint}" if meta.hint else None
            self.results[check_id] = CheckResult(check_id, topic, meta.title, visibility, meta.points,
                                                 hint=hint, seed=seed, tagged=meta.misconception)
            item.stash[RESULT_KEY] = self.results[check_id]
            keep.append(item)
        items[:] = keep
        self.prepare_sandbox(keep[0] if keep else None)  # the first sandbox builds its root while pytest sets up

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
        config = self.check_config(result.topic, request.module)
        submission = Submission(self.pool, config, lambda name: self.signature_of(result.topic, name))
        yield submission
        result.isolation, result.called, result.raised_by = submission.isolation, submission.called, \
            submission.raised_by
        if result.visibility == "public":  # a hidden check's output could carry its inputs out
            result.output = submission.output_tail()
        submission.close()

    def check_config(self, topic: str, module) -> dict:
        """The sandbox config of a check of `topic` defined in the check module `module`."""
        return {**self.sandbox_config, "topic": topic, "forbidden": list(getattr(module, "FORBIDDEN_CALLS", ())),
                "forbidden_operators": list(getattr(module, "FORBIDDEN_OPERATORS", ()))}

    def prepare_sandbox(self, item) -> None:
        """Start the sandbox of `item`'s topic now, so that it builds its root while other work runs."""
        if item is not None and RESULT_KEY in item.stash:
            self.pool.prepare(self.check_config(item.stash[RESULT_KEY].topic, item.module))

    def pytest_sessionfinish(self, session):
        self.pool.close()

    def pytest_keyboard_interrupt(self, excinfo):
        self.interrupted = as_interrupted(excinfo.value)

    # running ----------------------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        """Start the check's topic's share of the deadline; a topic that keeps timing out runs no more checks."""
        result: CheckResult = item.stash[RESULT_KEY]
        self.pool.enter_topic(result.topic)
        if self.timeouts_in_row.get(result.topic, 0) >= TIMEOUTS_TO_STOP:
            result.stopped = True
            raise ChildFailure("timeout", language.tr("not run: {topic}'s checks were stopped after {timeouts} checks "
                                                      "timed out in a row", topic=result.topic,
                                                      timeouts=TIMEOUTS_TO_STOP))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if nextitem is not None and RESULT_KEY in nextitem.stash and \
                nextitem.stash[RESULT_KEY].topic != item.stash[RESULT_KEY].topic:
            self.prepare_sandbox(nextitem)  # the next topic's sandbox builds its root while this check runs
        yield
        result: CheckResult = item.stash[RESULT_KEY]
        in_row = self.timeouts_in_row.get(result.topic, 0)
        self.timeouts_in_row[result.topic] = in_row + 1 if result.status == "timeout" else 0

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


EXAMPLE = "__infergrade_example__"


def _record_examples(test, fixtures: set[str]) -> None:
    """Attach to a failure the generated inputs it happened on, in the grader's words.

    Hypothesis replays the shrunk example last, so the exception that ends the check carries the shrunk inputs.
    """
    inner = test.hypothesis.inner_test

    @functools.wraps(inner)
    def recorded(*args, **kwargs):
        try:
            return inner(*args, **kwargs)
        except BaseException as exc:
            drawn = {k: v for k, v in kwargs.items() if k not in fixtures}
            if drawn and not hasattr(exc, EXAMPLE):
                setattr(exc, EXAMPLE, describe_arguments((), drawn))
            raise

    test.hypothesis.inner_test = recorded


def _assertion_source(exc: AssertionError) -> str:
    """`file:line: source` of the bare assert in a check that failed (the checks' own code, never a repr)."""
    from grader.topics import CHECKS_DIR

    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = Path(frame.filename)
        if CHECKS_DIR in path.parents:
            line = linecache.getline(frame.filename, frame.lineno).strip()
            return f"{path.relative_to(CHECKS_DIR)}:{frame.lineno}: {line}"
    return language.tr("a check assertion")


def _raised(type_name: str) -> str:
    """'raised ValueError' for a built-in exception, else a fixed phrase: the submission names its own classes, and
    a hidden check's message must not carry text the submission chose."""
    value = getattr(builtins, type_name, None)
    if isinstance(value, type) and issubclass(value, BaseException):
        return language.tr("raised {exception}", exception=type_name)
    return language.tr("raised an exception")


def classify(result: CheckResult, exc: BaseException, public: bool) -> None:
    """Set status, message and misconception of `result` from the exception a check ended with.

    Every message is the grader's own text: the same for the same submission and seed on any pytest or
    hypothesis version.
    """
    tr = language.tr
    exc = _first_leaf(exc)
    if isinstance(exc, ChildFailure):
        status, message = exc.status, str(exc)
        category = (tr("timed out") if exc.status == "timeout" else tr("the result was larger than the check accepts")
                    if isinstance(exc, ReplyTooLarge) else tr("the submission crashed or could not be imported"))
        result.import_failure = exc.import_failure
    elif isinstance(exc, NotImplementedYet):
        status, message, category = "not_started", str(exc), tr("not implemented yet")
        result.function = exc.function
    elif isinstance(exc, SubmissionRaised):
        where = f"\n{exc.where.rstrip()}" if exc.where else ""
        status, message = "error", f"{exc}{where}"
        category = _raised(exc.type_name)
        result.function = exc.function
    elif isinstance(exc, AssertionError):
        # a bare assert is reported by its source line: pytest's rendering of it varies and shows object reprs
        message = str(exc) if isinstance(exc, CheckFailure) else tr("check failed at {where}",
                                                                     where=_assertion_source(exc))
        status, category = "failed", tr("wrong result")
        result.misconception = getattr(exc, "misconception", None) or result.tagged
    else:
        status, category = "error", tr("the grader could not evaluate the result")
        message = tr("grader error while running this check: {type}: {error}", type=type(exc).__name__, error=exc)
        result.internal_error = True
    result.status = status
    example = getattr(exc, EXAMPLE, None)
    if public:
        result.message = message + (tr("\nshrunk inputs: {example}", example=example)
                                    if example and status == "failed" else "")
    else:  # the title and the kind of failure only: a hidden check's message must not carry its inputs out
        title = language.topic_text(result.topic, "titles", result.id.split(".", 1)[1], result.title)
        result.message = tr("{title}: {category}", title=title, category=category)
