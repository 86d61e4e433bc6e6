"""The `sub` proxy checks use: calls, handles on the child's objects and served objects, each call timed against
the check's budget and the run's deadline, and its failures said as the check shows them."""
from __future__ import annotations

import hashlib
import time

import torch

from grader import toys
from grader.language import tr
from grader.sandbox import codec, served
from grader.sandbox.connection import IMPORT_TIMEOUT, OUTPUT_BYTES, REPLY_BYTES, Child
from grader.sandbox.failures import ChildFailure, NotImplementedYet, SubmissionRaised, exception_info
from grader.sandbox.pool import ChildPool

DEFAULT_CALL_TIMEOUT = 10.0
CHECK_BUDGET = 120.0  # seconds of submission time one check may use over all its calls
MEMORY_BYTES = 3 * 2**30
# The key of the seeds children get (generators, `Submission.restart`'s global seed). It is fixed, so that one --seed
# grades alike in every process (a regrade, --resume, shards). It hides a check's seed from `initial_seed()`: a
# child would need hours of hashing to recover it, far past a check's budget. It does not stop a leak of a few bits
# of a hidden case by pass/fail patterns across submissions (the inputs give the seed as well as the seed does);
# a seed drawn per submission (grade's default) does.
SEED_KEY = b"infergrade:child-seed:1"


def _brief(x, depth=0) -> str:
    """A short text for a value in a call description."""
    if isinstance(x, torch.Tensor):
        dtype = str(x.dtype).removeprefix("torch.")
        if x.numel() <= 8 and x.dim() <= 2:
            return f"tensor({x.tolist()}, {dtype})"
        return f"Tensor{list(x.shape)} {dtype}"
    if isinstance(x, Remote):
        return x._shown_as or f"<{x._handle.type_name}>"
    if isinstance(x, served.Served):
        return x.name
    if isinstance(x, (list, tuple)) and depth < 2:
        inner = ", ".join(_brief(e, depth + 1) for e in x[:6]) + (", ..." if len(x) > 6 else "")
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    if isinstance(x, dict) and depth < 2:
        items = list(x.items())
        inner = ", ".join(f"{k!r}: {_brief(v, depth + 1)}" for k, v in items[:6])
        return "{" + inner + (", ..." if len(items) > 6 else "") + "}"
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_arguments(args: tuple, kwargs: dict) -> str:
    """`1.0, p=0.9`: the arguments of a call, each value shortened."""
    return ", ".join([_brief(a) for a in args] + [f"{k}={_brief(v)}" for k, v in kwargs.items()])


def describe_call(name: str, args: tuple, kwargs: dict) -> str:
    return f"{name}({describe_arguments(args, kwargs)})"


class RemoteCallable:
    """A function or method of the submission; calling it runs it in the child."""

    def __init__(self, owner: "Submission", name: str, head: tuple):
        self.owner, self.__name__, self._head = owner, name, head

    def __call__(self, *args, **kwargs):
        return self.owner._request((*self._head, args, kwargs), self.__name__, args, kwargs)


class Remote:
    """A handle on an object living in the child; attribute access gives methods that run there."""

    def __init__(self, sub: "Submission", handle: codec.Handle):
        self._sub = sub
        self._handle = handle
        self._shown_as: str | None = None  # how it reads in call descriptions, where not `<its type>`

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return RemoteCallable(self._sub, f"{self._handle.type_name.rpartition('.')[2]}.{name}",
                              ("method", self._handle.ref, name))

    def get(self, name: str):
        """Read attribute `name` of the child's object."""
        return self._sub._request(("getattr", self._handle.ref, name, (), {}),
                                  f"{self._handle.type_name}.{name}", None, None)

    def __reduce__(self):
        return (codec.Handle, (self._handle.ref, self._handle.type_name))

    def __repr__(self) -> str:
        return f"<remote {self._handle.type_name}>"


def keyed_seed(seed: int) -> int:
    """A 32-bit seed (numpy's limit) that differs where `seed` does and is costly to trace back to it (SEED_KEY)."""
    digest = hashlib.blake2b(str(seed).encode(), key=SEED_KEY, digest_size=4).digest()
    return int.from_bytes(digest, "little")


class Submission:
    """The `sub` fixture: one topic module of the submission, served by a fresh child per check."""

    def __init__(self, pool: ChildPool, config: dict, signature_of=None):
        self._pool = pool
        self._config = config
        self._child: Child | None = None
        self._failure: ChildFailure | None = None
        self._signature_of = signature_of or (lambda name: None)
        self._timeout = DEFAULT_CALL_TIMEOUT
        self._budget_left = CHECK_BUDGET
        self._reply_bytes = REPLY_BYTES
        self._served: dict[int, served.Served] = {}
        self._call_peaks = False  # measure_call_peaks
        self.last_call = ""
        self.called: set[str] = set()  # the submission's functions and methods this check called
        self.raised_by: str | None = None  # the last of them that raised NotImplementedError (caught or not)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return RemoteCallable(self, name, ("call", None, name))

    def make(self, factory, *args, shown_as: str | None = None, **kwargs) -> Remote:
        """Run `factory(*args, **kwargs)` (a function of grader.toys) in the child; a handle on what it built,
        named `shown_as` in the descriptions of the calls it is passed to (a model built in the child reads as
        the one the grader would serve)."""
        dotted = f"{factory.__module__}.{factory.__qualname__}"
        assert dotted.startswith("grader.toys."), f"{dotted} is not in grader.toys"
        built = self._request(("make", dotted, "", args, kwargs), factory.__name__, args, kwargs)
        if shown_as is not None:
            assert isinstance(built, Remote), f"{dotted} built no object the child keeps, to be shown as {shown_as}"
            built._shown_as = shown_as
        return built

    def generator(self, seed: int) -> Remote:
        """A torch.Generator in the child seeded from `seed` keyed (`keyed_seed`): `initial_seed()` would show the
        check's own seed, from which a small --seed could be found; the same `seed` gives the same stream."""
        return self.make(toys.generator, keyed_seed(seed))

    def serve(self, obj, methods: tuple[str, ...], name: str) -> served.Served:
        """`obj`, kept in the grader, for the submission to call: pass what this returns as an argument.

        The child gets a proxy named `name` whose `methods` ("__call__" for a callable) run here, so the
        object's counts and logs are the grader's own.
        """
        offered = served.Served(obj, methods, name)
        self._served[id(offered)] = offered
        return offered

    def restart(self, **config) -> None:
        """Later calls go to a fresh child whose config has `config` changed (`global_seed=...`, say).

        A global seed reaches the child keyed (`keyed_seed`): checks pass one made from their own seed (`seed +
        1`), which `torch.initial_seed()` showed, and from which a small --seed could be found by trying them all.
        """
        if "global_seed" in config:
            config["global_seed"] = keyed_seed(config["global_seed"])
        self.close()
        self._child, self._failure = None, None
        self._config = {**self._config, **config}

    def handle(self, name: str) -> Remote:
        """A handle on the submission's module attribute `name`."""
        return self._request(("attr", None, name, (), {}), name, None, None)

    def set_timeout(self, seconds: float) -> None:
        self._timeout = float(seconds)

    def set_reply_budget(self, size_bytes: int) -> None:
        """Accept replies of up to `size_bytes` (encoded) from later calls of this check (default REPLY_BYTES)."""
        assert 0 < size_bytes <= codec.MAX_MESSAGE_BYTES, f"a reply budget within (0, {codec.MAX_MESSAGE_BYTES}]"
        self._reply_bytes = int(size_bytes)

    def set_memory_limit(self, extra_bytes: int) -> None:
        self._ensure().limit_memory(extra_bytes)

    def measure_call_peaks(self) -> None:
        """Measure each later call's own peak memory (`peak_rss_bytes`): the peak restarts before every call, a
        /proc read and write each (about 0.2 ms a request), so only a check that reads it pays for it."""
        self._call_peaks = True

    @property
    def peak_rss_bytes(self) -> int | None:
        """The peak resident memory of the last call (see Child.peak_rss), read when asked."""
        assert self._call_peaks, "measure_call_peaks() before the calls whose peaks are read"
        return self._child.peak_rss() if self._child is not None and not self._child.closed else None

    @property
    def life_peak_rss_bytes(self) -> int | None:
        """The peak resident memory over the child's life, its import included (see Child.life_peak_rss)."""
        return self._child.life_peak_rss() if self._child is not None and not self._child.closed else None

    @property
    def rss_before_import(self) -> int | None:
        """The child's resident memory before any submission code ran, as the child reported it then."""
        value = self._ensure().info.get("rss_before_import")
        return value if type(value) is int and value > 0 else None

    @property
    def isolation(self) -> dict:
        return self._child.info if self._child else {}

    def output_tail(self) -> str:
        """What the submission printed last in this check's child."""
        return self._child.output_tail() if self._child else ""

    def _ensure(self) -> Child:
        if self._failure is not None:
            raise self._failure
        if self._child is None:
            try:
                left = self._pool.time_left(tr("importing {topic}.py", topic=self._config["topic"]))
                self._child = self._pool.take(self._config)
                self._child.wait_ready(min(IMPORT_TIMEOUT, left))
            except ChildFailure as failure:
                self._failure = failure
                self._pool.record_import_failure(self._config, failure)
                raise
        return self._child

    def _request(self, message: tuple, name: str, args, kwargs):
        what = describe_call(name, args, kwargs) if args is not None else name
        self.last_call = what
        self.called.add(name)
        child = self._ensure()
        if self._call_peaks:
            child.peak_rss_reset()
        if self._budget_left <= 0:
            self._failure = ChildFailure("timeout", tr("the check used up its {seconds:g} s budget before {what} "
                                                       "(the submission is too slow)", seconds=CHECK_BUDGET,
                                                       what=what))
            raise self._failure
        try:
            left = self._pool.time_left(what)
        except ChildFailure as failure:
            self._failure = failure
            raise
        started = time.monotonic()
        limit = min(self._timeout, self._budget_left, left)
        try:
            kind, value = child.request(message, limit, what, self._served, self._reply_bytes)
        except ChildFailure as failure:
            if failure.status == "timeout" and limit < self._timeout:  # say which limit, not a tiny timeout
                failure = ChildFailure("timeout", tr("{deadline} passed during {what}",
                                                     deadline=self._pool.deadline_text(), what=what)
                                       if limit == left else
                                       tr("the check used up its {seconds:g} s budget during {what} (the "
                                          "submission is too slow)", seconds=CHECK_BUDGET, what=what))
            self._failure = failure
            self._pool.check_deadline()
            raise failure from None
        finally:
            self._budget_left -= time.monotonic() - started
        if kind == "raised":
            value = exception_info(value)
            if value["type"] == "NotImplementedError":
                self.raised_by = name
                raise self._not_written(name, value)
            if child.output_full:
                value = {**value, "message": tr("{message} — the submission printed more than the {mib} MiB of "
                                                "output allowed", message=value["message"],
                                                mib=OUTPUT_BYTES // 2**20)}
            raised = SubmissionRaised(what, value, name)
            signature = self._signature_of(name)
            if value["type"] == "TypeError" and signature and "argument" in value["message"]:
                raised.message += tr(" (the contract's signature is {signature})", signature=signature)
                raised.args = (tr("{call} raised {type}: {message}", call=what, type="TypeError",
                                  message=raised.message),)
            raise raised
        return self._wrap(value)

    def _not_written(self, called: str, value: dict) -> BaseException:
        """Who a NotImplementedError belongs to: the function called, another contract function it calls (the
        check waits for that one), or a helper of the student's own (the called function is failing: its helper
        is not written)."""
        raised = value["raised_in"]
        function = raised["function"].removesuffix(".__init__")
        if not function or function == called or "<" in function:  # no frame of the submission's, or a lambda's
            return NotImplementedYet(called)
        if self._signature_of(function) is not None:
            return NotImplementedYet(function, called)
        helper = SubmissionRaised(called, value, called)
        shown = f"{value['message']!r}" if value["message"] else ""
        helper.args = (tr("{called} calls `{function}` ({file}:{line}), which still raises "
                          "NotImplementedError({shown})", called=called, function=function, file=raised["file"],
                          line=raised["line"], shown=shown),)
        return helper

    def _wrap(self, value):
        if isinstance(value, codec.Handle):
            return Remote(self, value)
        if isinstance(value, list):
            return [self._wrap(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._wrap(v) for v in value)
        if isinstance(value, dict):
            return {k: self._wrap(v) for k, v in value.items()}
        return value

    def close(self) -> None:
        if self._child is not None:
            self._child.discard()
