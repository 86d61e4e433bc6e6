"""The sandboxed child: imports one submission module and serves the grader's calls on a socket.

Requests arrive pickled from the trusted grader; replies go back through the allowlisting codec.
"""
from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import pickle
import random
import signal
import socket
import struct
import sys
import time
import traceback

import numpy as np
import numpy.random  # noqa: F401 - imported lazily by numpy, which a child may no longer be able to read
import torch

from grader.sandbox import codec, forbidden, request_pickle, walls  # noqa: F401 - request_pickle: requests' tensors

BLOCKED_IMPORTS = ("reference", "solutions", "grader.checks", "grader.engine")
BLOCKED_WITHIN = tuple(f"{name}." for name in BLOCKED_IMPORTS)  # their submodules
CALLBACK_ERRORS = {e.__name__: e for e in (ValueError, TypeError, IndexError, AttributeError)}

_channel: socket.socket | None = None  # the socket to the grader, for calls to served objects
_factories: dict[str, object] = {}  # what `make` may run, taken before the submission could replace any of it
_serving = False  # set once `serve` has moved the output to fds 1 and 2 (say_failed)


class _ImportBlocker(importlib.abc.MetaPathFinder):
    """Refuse the grader's hidden packages to submissions."""

    def find_spec(self, name, path=None, target=None):
        if blocked(name):
            raise ImportError(f"submissions may not import {name!r}")
        return None


def blocked(name: str) -> bool:
    """Whether the module `name` is one of the grader's hidden packages or within one."""
    return name in BLOCKED_IMPORTS or name.startswith(BLOCKED_WITHIN)


def send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(struct.pack("<Q", len(payload)) + payload)


def recv(sock: socket.socket, limit: int = codec.MAX_MESSAGE_BYTES, deadline: float | None = None) -> bytes | None:
    """One length-prefixed frame, or None at end of stream; socket.timeout once `deadline` (monotonic) passes."""
    head = _recv_exact(sock, 8, deadline)
    if head is None:
        return None
    (n,) = struct.unpack("<Q", head)
    if n > limit:
        raise codec.TooLarge(n, limit)
    return _recv_exact(sock, n, deadline)


def _recv_exact(sock, n, deadline):
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("deadline passed")
            sock.settimeout(left)  # the whole frame, not each chunk, has to arrive in time
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def describe_exception(exc: BaseException, submission_dir: str) -> dict:
    """Type, bases and message of an exception, with the traceback cut to the submission's own frames.

    Written in the grader's words (file names relative to the submission), never by `traceback`'s formatter,
    so that the same error reads the same on every Python version.
    """
    def relative(filename: str) -> str | None:
        path = os.path.realpath(filename)
        return os.path.relpath(path, submission_dir) if path.startswith(submission_dir + os.sep) else None

    lines = []
    for frame in traceback.extract_tb(exc.__traceback__):
        name = relative(frame.filename)
        if name is not None:
            lines += [f"  {name}, line {frame.lineno}, in {frame.name}", f"    {(frame.line or '').strip()}"]
    where = "\n".join(lines[-8:])
    message = str(exc)
    if isinstance(exc, SystemExit):
        message = f"the submission called sys.exit({exc.code!r})"
    elif isinstance(exc, SyntaxError):
        message = exc.msg
        name = relative(exc.filename or "") or os.path.basename(exc.filename or "?")
        where = f"  {name}, line {exc.lineno}"
        if exc.text:
            source = exc.text.rstrip("\n")
            indent = len(source) - len(source.lstrip())
            caret = " " * max((exc.offset or 1) - 1 - indent, 0) + "^"
            where += f"\n    {source.strip()}\n    {caret}"
    return {"type": type(exc).__qualname__, "types": [c.__name__ for c in type(exc).__mro__],
            "message": message[:2000], "where": where[-2000:], "raised_in": raised_in(exc, relative)}


def raised_in(exc: BaseException, relative) -> dict:
    """The submission's innermost frame of the traceback: the function (its qualified name), file and line the
    exception came from, so that a NotImplementedError is charged to the function that still raises it."""
    found = {}
    tb = exc.__traceback__
    while tb is not None:
        name = relative(tb.tb_frame.f_code.co_filename)
        if name is not None:
            found = {"function": tb.tb_frame.f_code.co_qualname, "file": name, "line": tb.tb_lineno}
        tb = tb.tb_next
    return found


class GraderObject:
    """A proxy for an object the grader serves (a toy model): every call runs in the grader, which counts it."""

    def __init__(self, ref: int, methods: tuple, name: str):
        self._ref, self._methods, self._name = ref, methods, name

    def __call__(self, *args, **kwargs):
        if "__call__" not in self._methods:
            raise TypeError(f"{self._name} is not callable")
        return self._call("__call__", args, kwargs)

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self._methods:
            raise AttributeError(f"{self._name} has no attribute {name!r}")
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    def _call(self, method: str, args: tuple, kwargs: dict):
        send(_channel, codec.encode(("callback", [self._ref, method, list(args), dict(kwargs)])))
        frame = recv(_channel)
        if frame is None:
            raise ConnectionError("the grader closed the channel")
        kind, value = codec.decode(frame)  # the codec is faster than pickle for the small tensors models return
        if kind == "ok":
            return value
        raise CALLBACK_ERRORS.get(value[0], RuntimeError)(value[1])

    def __repr__(self) -> str:
        return f"<{self._name}, served by the grader>"


def take_factories() -> None:
    """Note the functions and classes of grader.toys by dotted name, as the zygote imported them: every check's
    process is forked from it, before any submission could replace one."""
    global _factories
    _factories = _toys()


def _toys() -> dict[str, object]:
    out = {}
    for module_name, module in list(sys.modules.items()):
        if module_name == "grader.toys" or module_name.startswith("grader.toys."):
            for name, value in vars(module).items():
                if callable(value) and getattr(value, "__module__", None) == module_name:
                    out[f"{module_name}.{name}"] = value
    return out


def seed_globals(seed: int) -> None:
    """Seed the global random generators of torch, numpy and Python: the grader chooses every random stream."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def say_failed(output_fd: int, exc: BaseException) -> None:
    """Say in the check's output why the grader's side of its process failed (it then exits with code 70): before
    `serve` the output is `output_fd` (-1: not open yet, nowhere to say it), once serving it is fd 1."""
    fd = 1 if _serving else output_fd
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.write(fd, f"\ninfergrade: the check's process failed: {type(exc).__name__}: {exc}\n"
                         .encode(errors="replace"))


def serve(sock: socket.socket, output_fd: int, config: dict, report: dict) -> None:
    """Finish the walls, import the submission, then answer requests until the grader closes the socket.

    `output_fd` is the child's output file, opened before the walls went up; `report` says what they reached.
    """
    global _serving
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    os.close(output_fd)
    _serving = True
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # the grader's own stream objects may wrap closed fds
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    restricted = walls.restrict(config, report["private_root"])
    torch.set_num_threads(1)  # see zygote.py: no OpenMP pool after a fork
    sys.dont_write_bytecode = True
    sys.meta_path.insert(0, _ImportBlocker())
    for name in [m for m in sys.modules if blocked(m)]:
        del sys.modules[name]
    global _channel
    _channel = sock
    seed_globals(config.get("global_seed", 0))
    # Said before any submission code runs: what comes later may be forged by the submission. The resident size
    # now is the floor a memory check measures growth from (a baseline the submission's own calls could raise).
    before = {"rss_before_import": walls.limits.status_bytes("self", "VmRSS")}
    send(sock, codec.encode(("isolated", {**report, **restricted, **before})))

    submission_dir = os.path.realpath(config["submission_dir"])
    try:
        for dotted in config.get("forbidden", ()):
            forbidden.forbid(dotted)
        for pattern in config.get("forbidden_operators", ()):
            forbidden.forbid_operators(pattern)
        module = _import_submission(submission_dir, config["topic"])
    except BaseException as exc:  # noqa: BLE001 - anything the import does is reported, not raised
        send(sock, codec.encode(("import_error", describe_exception(exc, submission_dir))))
        return
    # Again after the import: a module that seeds the global generators itself (`torch.manual_seed(0)` at the top,
    # a common habit) would otherwise draw the same numbers in every child, whatever seed the grader chose, and a
    # submission that ignores the generator it is given would pass the checks that restart with another seed.
    seed_globals(config.get("global_seed", 0))
    send(sock, codec.encode(("ready", None)))

    objects: dict[int, object] = {}

    def register(obj, always=False):
        if always or type(obj).__module__ == module.__name__:
            objects[id(obj)] = obj
            return id(obj)
        return None

    def resolve(x):
        if isinstance(x, codec.Handle):
            return objects[x.ref]
        if isinstance(x, (list, tuple)):
            return type(x)(resolve(e) for e in x)
        if isinstance(x, dict):
            return {k: resolve(v) for k, v in x.items()}
        return x

    while True:
        frame = recv(sock)
        if frame is None:
            return
        kind, target, name, args, kwargs = pickle.loads(frame)
        always = kind in ("make", "attr")
        try:
            value = _dispatch(module, objects, kind, target, name, resolve(args), resolve(kwargs))
            reply = ("ok", value)
        except BaseException as exc:  # noqa: BLE001 - the submission's exceptions are results
            reply = ("raised", describe_exception(exc, submission_dir))
            always = False
        _flush_quietly()
        try:
            payload = codec.encode(reply, lambda o: register(o, always))
        except BaseException as exc:  # noqa: BLE001
            payload = codec.encode(("raised", {"type": "EncodeError", "types": ["EncodeError"],
                                               "message": f"the result could not be sent: {exc}", "where": ""}))
        send(sock, payload)


def _flush_quietly() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # output over its limit, or a stream the submission closed


def _dispatch(module, objects, kind, target, name, args, kwargs):
    if kind == "call":
        fn = getattr(module, name)
        return fn(*args, **kwargs)
    if kind == "method":
        return getattr(objects[target], name)(*args, **kwargs)
    if kind == "getattr":
        return getattr(objects[target], name)
    if kind == "attr":
        return getattr(module, name)
    if kind == "make":
        return _factories[target](*args, **kwargs)
    raise ValueError(f"unknown request {kind!r}")


class SourceOnly(importlib.machinery.SourceFileLoader):
    """Runs a submission file's source, never a __pycache__ .pyc beside it (an unchecked-hash one runs whatever it
    holds, whatever the source says: the code graded must be the file the results hash), and writes none."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


# a module the child refuses to import, by the exception it raises: the grader says these in the reader's language
IMPORT_REFUSALS = {"ImportError": "{topic}.py is a symbolic link; put the file itself in the submission folder",
                   "FileNotFoundError": "{topic}.py is missing from the submission folder"}


def _import_submission(submission_dir: str, topic: str):
    path = os.path.join(submission_dir, f"{topic}.py")
    if os.path.islink(path):  # what is graded must be what the results hash: the file itself
        raise ImportError(IMPORT_REFUSALS["ImportError"].format(topic=topic))
    if not os.path.exists(path):
        raise FileNotFoundError(IMPORT_REFUSALS["FileNotFoundError"].format(topic=topic))
    sys.path.insert(0, submission_dir)  # its helper modules too, from their source only
    sys.path_importer_cache[submission_dir] = importlib.machinery.FileFinder(submission_dir, (SourceOnly, [".py"]))
    spec = importlib.util.spec_from_file_location(topic, path, loader=SourceOnly(topic, path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[topic] = module
    spec.loader.exec_module(module)
    return module

