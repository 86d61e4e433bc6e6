"""The grader's side of a child: spawning, timed requests, crash reports, and the `sub` proxy checks use."""
from __future__ import annotations

import glob
import hashlib
import os
import pickle
import resource
import shutil
import signal
import socket
import sys
import tempfile
import time

import torch

from grader import toys
from grader.sandbox import child as wire
from grader.sandbox import codec, served, watchdog
from grader.sandbox.limits import status_bytes
from grader.sandbox.topic_sandbox import TemplateRefused, TopicSandbox, sandbox_key
from grader.sandbox.zygote import Zygote
from grader.text import printable, tail

CHILD_FOLDER = "infergrade-child-"  # + the grader's pid: a folder whose grader is gone was left by a killed run
DEFAULT_CALL_TIMEOUT = 10.0
CHECK_BUDGET = 120.0  # seconds of submission time one check may use over all its calls
IMPORT_TIMEOUT = 30.0
ENDING_GRACE = 5.0  # seconds a child whose channel closed gets to report its own status before it is killed
DEADLINE_PER_TOPIC = 60.0  # the default run deadline, per topic graded (a topic's checks take about 1.5 s)
MEMORY_BYTES = 3 * 2**30
OUTPUT_BYTES = 1 * 2**20
# What one call may send back, by default, read from the frame's length before any byte of it: 12x the largest
# reply of a correct submission (serving's simulated records, 170 kB); a check that needs more raises it
# (sub.set_reply_budget). Without it a 48 MiB reply cost the grader gigabytes once a check converted it.
REPLY_BYTES = 2 * 2**20
# The key of the seeds children get (generators, `Submission.restart`'s global seed). It is fixed, so that one --seed
# grades alike in every process (a regrade, --resume, shards). It hides a check's seed from `initial_seed()`: a
# child would need hours of hashing to recover it, far past a check's budget. It does not stop a leak of a few bits
# of a hidden case by pass/fail patterns across submissions (the inputs give the seed as well as the seed does);
# a seed drawn per submission (grade's default) does.
SEED_KEY = b"infergrade:child-seed:1"
MAX_SANDBOXES = 3  # topics' sandboxes kept at once (the current one, the next one started ahead, one more)
SHOWN_OUTPUT_LINES, SHOWN_OUTPUT_BYTES = 20, 2048  # what a failed public check shows of the submission's prints


class SubmissionRaised(Exception):
    """The submission raised an exception during a call."""

    def __init__(self, call: str, info: dict):
        self.call = call
        self.type_name = info["type"]
        self.type_names = list(info["types"])
        self.message = info["message"]
        self.where = info.get("where", "")
        super().__init__(f"{call} raised {self.type_name}: {self.message}")


class NotImplementedYet(BaseException):
    """The submission still raises NotImplementedError: the check stops at once (no shrinking, no retries)."""

    def __init__(self, function: str):
        self.function = function
        super().__init__(f"{function} is not implemented yet (it raises NotImplementedError)")


class ChildFailure(BaseException):
    """The child crashed, hung or could not import the submission; `status` is 'error' or 'timeout'.

    `import_failure` marks a module that could not be imported: one error for its topic, not one per check.
    A BaseException so that neither a check nor hypothesis can catch it and carry on.
    """

    def __init__(self, status: str, message: str, import_failure: bool = False):
        self.status = status
        self.import_failure = import_failure
        super().__init__(message)


class ReplyTooLarge(ChildFailure):
    """A call sent back more bytes than its check accepts: the check fails, and its child, whose reply was never
    read, is ended."""

    def __init__(self, what: str, size: int, budget: int):
        super().__init__("failed", f"{what} sent back a reply of {size} bytes ({size / 2**20:.1f} MiB), more than "
                                   f"the {budget} bytes ({budget / 2**20:.1f} MiB) this check accepts from one call")


def exception_info(value) -> dict:
    """An exception report from the child, with every field forced to the expected type (it is untrusted)."""
    value = value if isinstance(value, dict) else {}
    types = value.get("types")
    return {"type": printable(str(value.get("type", "an exception"))[:200]),
            "types": [str(t)[:200] for t in types] if isinstance(types, list) else [],
            "message": printable(str(value.get("message", ""))[:2000]),
            "where": printable(str(value.get("where", ""))[:2000])}


def describe_status(status: int) -> str:
    """Say in words how a child process ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGSEGV:
            return "crashed with a segmentation fault (SIGSEGV)"
        if sig == signal.SIGKILL:
            return "was killed (SIGKILL), most likely for running out of memory"
        return f"was killed by signal {name}"
    code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else status
    return f"exited with code {code} (os._exit or a crash)"


class Child:
    """One sandboxed child process serving one submission module; started at once, waited for on first use."""

    def __init__(self, zygote: Zygote, config: dict, sandbox: TopicSandbox | None = None):
        """Start a child for `config`: forked by the zygote with a chain of its own, or by a topic's `sandbox`."""
        self.topic = config["topic"]
        self.sandbox = sandbox
        self.zygote = sandbox or zygote  # what spawns, reaps and discards it
        self.tmpdir, self.output_fd, self.watch = (sandbox.tmpdir, sandbox.output_fd, sandbox.watch) if sandbox \
            else make_folder()
        self.pid, self.sock = self.zygote.spawn({**config, "tmpdir": self.tmpdir})
        self.memory_bytes = config.get("memory_bytes")
        self.killed_for_memory = False  # by the kernel, in the sandbox's memory cgroup (known once it is reaped)
        self.inner_pid = self.pid
        self.closed = False
        self.status: int | None = None
        self.ready = False
        self.info = {}
        self.life_peak = 0

    def wait_ready(self, timeout: float = IMPORT_TIMEOUT) -> None:
        """Wait until the submission is imported; ChildFailure says why when it could not be."""
        if self.ready:
            return
        first = self._receive(timeout, f"starting the sandbox for {self.topic}.py", importing=True)
        if first[0] != "isolated" or not isinstance(first[1], dict):
            self.close()
            raise ChildFailure("error", "the sandboxed child did not report its isolation")
        self.info = first[1]
        reply = self._receive(timeout, f"importing {self.topic}.py", importing=True)
        if reply[0] == "import_error":
            info = exception_info(reply[1])
            where = f"\n{info['where']}" if info["where"] else ""
            self.close()
            raise ChildFailure("error", f"could not import {self.topic}.py: {info['type']}: "
                                        f"{info['message']}{where}", import_failure=True)
        if reply[0] != "ready":
            self.close()
            raise ChildFailure("error", f"the child sent {reply[0]!r} where 'ready' was expected")
        if self.info.get("pid_namespace") and self.sandbox is None:  # a sandbox's check says its own pid
            self.inner_pid = self._inner_pid()
        self.ready = True

    def _inner_pid(self) -> int:
        """The process that runs the submission, three levels below the one the zygote forked (see walls.py)."""
        pid = self.pid
        for _ in range(3):
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    pid = int(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                return self.pid
        return pid

    def request(self, message: tuple, timeout: float, what: str, objects: dict | None = None,
                budget: int = REPLY_BYTES):
        """Send one request and wait for the reply: ('ok', value) or ('raised', info).

        Until the reply comes, the submission's calls to the served `objects` are answered here, within `timeout`.
        Every frame the child sends is refused from its length when it is over `budget` bytes (ReplyTooLarge).
        """
        deadline = time.monotonic() + timeout
        reply = ("callback", None)
        try:
            wire.send(self.sock, pickle.dumps(message))
            while (reply := self._receive(deadline - time.monotonic(), what, limit=timeout,
                                          budget=budget))[0] == "callback":
                wire.send(self.sock, codec.encode(served.answer(objects or {}, reply[1])))
        except OSError:
            reply = self._receive(deadline - time.monotonic(), what, limit=timeout, budget=budget)  # how it ended
        return reply

    def _receive(self, timeout: float, what: str, importing: bool = False, limit: float | None = None,
                 budget: int = REPLY_BYTES):
        """The next frame, decoded, within `timeout` seconds (`limit`: the whole call's, for the message), and
        refused from its length when it is over `budget` bytes."""
        try:
            frame = wire.recv(self.sock, limit=budget, deadline=time.monotonic() + timeout)
        except codec.TooLarge as exc:
            self.close()
            raise ReplyTooLarge(what, exc.size, exc.limit) from None
        except (socket.timeout, TimeoutError):
            self.close()
            raise ChildFailure("timeout", f"{what} did not finish within {limit or timeout:g} s (an endless loop?)",
                               import_failure=importing) from None
        except (OSError, codec.DecodeError) as exc:
            self.close()
            raise ChildFailure("error", f"lost contact with the submission during {what}: {exc}") from None
        if frame is None:  # it is ending: its own status says how (tearing down its namespaces may take seconds)
            status = self.close(grace=ENDING_GRACE)
            how = self.watch.killed() or (watchdog.memory_message(self.memory_bytes) if self.killed_for_memory else
                                          describe_status(status) if status is not None else
                                          f"closed its channel to the grader and did not end within "
                                          f"{ENDING_GRACE:g} s (the grader stopped it)")
            raise ChildFailure("error", f"the submission process {how} during {what}", import_failure=importing)
        try:
            reply = codec.decode(frame)
        except codec.DecodeError as exc:
            self.close()
            raise ChildFailure("error", f"{what} sent back a malformed result ({exc})") from None
        if not (isinstance(reply, tuple) and len(reply) == 2 and isinstance(reply[0], str)):
            self.close()
            raise ChildFailure("error", f"{what} sent back a malformed reply")
        return reply

    def peak_rss_reset(self) -> None:
        # what the import, or the last call, reached in the submission's process (the watchdog keeps its own)
        self.life_peak = max(self.life_peak, status_bytes(self.inner_pid, "VmHWM") or 0)
        self.watch.reset()
        try:
            with open(f"/proc/{self.inner_pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass

    def peak_rss(self) -> int | None:
        """Peak resident memory since the last reset: of the submission's process, or of all the sandbox's
        processes together as the watchdog sampled them, whichever is larger (None where neither is known)."""
        known = [m for m in (status_bytes(self.inner_pid, "VmHWM"),
                             self.watch.peak() if self.info.get("watchdog") else None) if m is not None]
        return max(known, default=None)

    def life_peak_rss(self) -> int | None:
        """Peak resident memory over the child's whole life, its import and every call: of the submission's
        process, or of all the sandbox's processes together as the watchdog sampled them, whichever is larger
        (None where neither is known)."""
        known = [m for m in (self.life_peak or None, status_bytes(self.inner_pid, "VmHWM"),
                             self.watch.life() if self.info.get("watchdog") else None) if m is not None]
        return max(known, default=None)

    def limit_memory(self, extra_bytes: int) -> None:
        """Cap the child's address space at its current size plus `extra_bytes` (Linux; elsewhere a no-op)."""
        if not hasattr(resource, "prlimit"):
            return
        size = status_bytes(self.inner_pid, "VmSize")
        if size is None:
            return
        cap = size + extra_bytes
        try:
            resource.prlimit(self.inner_pid, resource.RLIMIT_AS, (cap, cap))
        except (OSError, ValueError):
            pass

    @property
    def output_full(self) -> bool:
        return os.fstat(self.output_fd).st_size >= OUTPUT_BYTES

    def output_tail(self) -> str:
        """The last lines the submission printed (stdout and stderr), made safe to show; '' if none."""
        if self.output_fd < 0:
            return ""
        size = os.fstat(self.output_fd).st_size
        start = max(0, size - 4 * SHOWN_OUTPUT_BYTES)
        text = os.pread(self.output_fd, size - start, start).decode("utf-8", "replace")
        text = tail(printable(text.rstrip("\n")), SHOWN_OUTPUT_LINES, SHOWN_OUTPUT_BYTES)
        if size >= OUTPUT_BYTES:
            text = f"[output reached the {OUTPUT_BYTES // 2**20} MiB limit]\n" + text
        return text

    def close(self, grace: float = 0.0) -> int | None:
        """End the child and everything it started; its wait status (None where it had not ended on its own)."""
        if self.closed:
            return self.status
        self.closed = True
        self.sock.close()
        self.status, self.killed_for_memory = self.zygote.reap(self.pid, grace)
        return self.status

    def discard(self) -> None:
        """End the child without waiting for it, and remove its files."""
        if not self.closed:
            self.closed = True
            self.sock.close()
            self.zygote.discard(self.pid)
        if self.sandbox is not None:  # the folder is the sandbox's, for its next check
            self.output_fd = -1
        elif self.output_fd >= 0:
            remove_folder(self.tmpdir, self.output_fd, self.watch)
            self.output_fd = -1


def make_folder() -> tuple[str, int, watchdog.Page]:
    """A new folder for a child or a sandbox: (its path, the grader's descriptor of its output file, its watchdog
    page). The grader reads the output through its own descriptor of the file it created, never the path, which
    the child may replace (a symlink to a hidden file, a FIFO)."""
    tmpdir = tempfile.mkdtemp(prefix=f"{CHILD_FOLDER}{os.getpid()}-")
    os.chmod(tmpdir, 0o700)
    path = os.path.join(tmpdir, "output.txt")
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    return tmpdir, os.open(path, os.O_RDONLY | os.O_NOFOLLOW), watchdog.Page(os.path.join(tmpdir, "watch"))


def remove_folder(tmpdir: str, output_fd: int, watch: watchdog.Page) -> None:
    """Close what the grader holds of a folder made by make_folder and remove it (later, while it is busy)."""
    os.close(output_fd)
    watch.close()
    shutil.rmtree(tmpdir, ignore_errors=True)
    if os.path.exists(tmpdir):  # its private root stays busy until the killed child is gone
        _left_behind.append(tmpdir)


_left_behind: list[str] = []


def remove_left_behind(wait: float = 1.0) -> None:
    """Remove the folders of discarded children that were still busy, waiting up to `wait` seconds."""
    deadline = time.monotonic() + wait
    while _left_behind and time.monotonic() < deadline:
        for folder in list(_left_behind):
            shutil.rmtree(folder, ignore_errors=True)
            if not os.path.exists(folder):
                _left_behind.remove(folder)
        time.sleep(0.01 if _left_behind else 0)


def remove_stale_folders() -> int:
    """Remove the child folders of graders that are no longer running (killed before they could clean up)."""
    removed = 0
    if not sys.platform.startswith("linux"):
        return removed  # which graders are running is read from /proc
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), f"{CHILD_FOLDER}*-*")):
        pid = os.path.basename(folder)[len(CHILD_FOLDER):].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}") and not os.path.islink(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


class ChildPool:
    """Starts the child of each check: forked by its topic's sandbox (template.py), or, where no template can be
    built, a child with a chain of its own, one started ahead so that it imports while the previous check runs.

    It also holds the run's deadline, shared out between the `topics` graded: each topic's share is the time spent
    in its checks (`enter_topic` says which topic the next check is of; the public checks of every topic run before
    any hidden one, so a topic is entered twice), and past it no submission code of that topic runs and every later
    call is a timeout, while the next topic still gets its whole share (a topic that hangs cannot take its
    neighbours' time).
    """

    def __init__(self, zygote: Zygote, deadline_s: float | None = None, topics: int = 1, templates: bool = True):
        """`templates`: False for a chain per check even where a template could be built (tests of the chain)."""
        self.zygote = zygote
        self.templates = templates and zygote.namespaces  # False once one was refused: a chain per check from then
        self.sandboxes: dict[str, TopicSandbox] = {}  # by sandbox_key, least recently used first
        self.spare: tuple[str, Child] | None = None
        self.import_failures: dict[str, ChildFailure] = {}  # a module that cannot be imported fails once
        self.started: list[Child] = []  # every child, so that none outlives the pool
        self.deadline_s = deadline_s
        self.share_s = None if deadline_s is None else deadline_s / topics
        self.deadline_at = None if deadline_s is None else time.monotonic() + self.share_s
        self.used: dict[str, float] = {}  # topic -> seconds of its share spent before the topic last changed
        self.topic: str | None = None
        self.entered = time.monotonic()  # when the current topic's checks began
        self.deadline_passed = False

    def enter_topic(self, topic: str) -> None:
        """Later calls count against `topic`'s share of the run's deadline (the time spent in its checks)."""
        now = time.monotonic()
        if topic != self.topic:
            if self.topic is not None:
                self.used[self.topic] = self.used.get(self.topic, 0.0) + now - self.entered
            self.topic, self.entered = topic, now
            if self.share_s is not None:
                self.deadline_at = now + self.share_s - self.used.get(topic, 0.0)

    def deadline_text(self) -> str:
        """`the run's deadline of 60 s`, or `sampling's share (30 s) of the run's deadline of 60 s`."""
        run = f"the run's deadline of {self.deadline_s:g} s"
        return run if self.share_s == self.deadline_s or self.topic is None else \
            f"{self.topic}'s share ({self.share_s:g} s) of {run}"

    def check_deadline(self) -> float:
        """Seconds to the run's deadline (infinite without one); notes when it has passed."""
        left = float("inf") if self.deadline_at is None else self.deadline_at - time.monotonic()
        self.deadline_passed |= left <= 0
        return left

    def time_left(self, what: str) -> float:
        """Seconds to the run's deadline; a timeout ChildFailure once it has passed."""
        left = self.check_deadline()
        if left <= 0:
            raise ChildFailure("timeout", f"{self.deadline_text()} passed before {what}")
        return left

    def take(self, config: dict) -> Child:
        """A started child for `config`; raises the recorded ChildFailure if this module already failed to import."""
        key = repr(sorted(config.items()))
        if key in self.import_failures:
            raise self.import_failures[key]
        sandbox = self.prepare(config)
        if sandbox is not None and sandbox.current is None:  # a second check open at once gets a chain of its own
            try:
                child = Child(self.zygote, config, sandbox)
                self.started.append(child)
                return child
            except TemplateRefused:  # a chain per check from now on: slower, with the same walls
                self.templates = False
                self._close_sandbox(sandbox)
        child = None
        if self.spare is not None:
            spare_key, spare = self.spare
            if spare_key == key:
                child = spare
            else:
                spare.discard()
        self.spare = (key, self._start(config))
        return child or self._start(config)

    def prepare(self, config: dict) -> TopicSandbox | None:
        """The sandbox for `config`'s checks, started now if there is none (it builds its root meanwhile); the
        least recently used ones past MAX_SANDBOXES are ended. None where templates are not used."""
        if not self.templates:
            return None
        key = sandbox_key(config)
        sandbox = self.sandboxes.pop(key, None)
        if sandbox is None or sandbox.broken:
            if sandbox is not None:
                self._close_sandbox(sandbox)
            sandbox = TopicSandbox(self.zygote, config, make_folder())
        self.sandboxes[key] = sandbox
        while len(self.sandboxes) > MAX_SANDBOXES:
            self._close_sandbox(self.sandboxes.pop(next(iter(self.sandboxes))))
        return sandbox

    def _close_sandbox(self, sandbox: TopicSandbox) -> None:
        for child in self.started:  # the checks it serves end with it
            if child.sandbox is sandbox:
                child.discard()
        self.started = [child for child in self.started if child.sandbox is not sandbox]
        self.sandboxes = {k: s for k, s in self.sandboxes.items() if s is not sandbox}
        sandbox.close()
        remove_folder(sandbox.tmpdir, sandbox.output_fd, sandbox.watch)

    def _start(self, config: dict) -> Child:
        child = Child(self.zygote, config)
        self.started.append(child)
        return child

    def record_import_failure(self, config: dict, failure: ChildFailure) -> None:
        self.import_failures[repr(sorted(config.items()))] = failure

    def close(self) -> None:
        """End every child and sandbox this pool started (the spare, and any a caller did not close) and remove
        their files."""
        for child in self.started:
            child.discard()
        self.started.clear()
        for sandbox in list(self.sandboxes.values()):
            self._close_sandbox(sandbox)
        self.spare = None
        remove_left_behind()


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
        self.last_call = ""

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

    @property
    def peak_rss_bytes(self) -> int | None:
        """The peak resident memory of the last call (see Child.peak_rss), read when asked."""
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
                left = self._pool.time_left(f"importing {self._config['topic']}.py")
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
        child = self._ensure()
        child.peak_rss_reset()
        if self._budget_left <= 0:
            self._failure = ChildFailure("timeout", f"the check used up its {CHECK_BUDGET:g} s budget "
                                                    f"before {what} (the submission is too slow)")
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
                failure = ChildFailure("timeout", f"{self._pool.deadline_text()} passed during {what}"
                                       if limit == left else
                                       f"the check used up its {CHECK_BUDGET:g} s budget during {what} "
                                       f"(the submission is too slow)")
            self._failure = failure
            self._pool.check_deadline()
            raise failure from None
        finally:
            self._budget_left -= time.monotonic() - started
        if kind == "raised":
            value = exception_info(value)
            if value["type"] == "NotImplementedError":
                raise NotImplementedYet(name)
            if child.output_full:
                value = {**value, "message": f"{value['message']} — the submission printed more than the "
                                             f"{OUTPUT_BYTES // 2**20} MiB of output allowed"}
            raised = SubmissionRaised(what, value)
            signature = self._signature_of(name)
            if value["type"] == "TypeError" and signature and "argument" in value["message"]:
                raised.message += f" (the contract's signature is {signature})"
                raised.args = (f"{what} raised TypeError: {raised.message}",)
            raise raised
        return self._wrap(value)

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
