"""Ctrl-C and SIGTERM during grading: stop the run where it is, then report it as interrupted.

While grading, the first signal raises `Interrupted` (a KeyboardInterrupt, which pytest and hypothesis let
through); later ones, and any after `settle()`, are only recorded, so that the results file is written whole.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import signal
import sys
import threading
from pathlib import Path

from grader.language import tr

SIGNAL_NAMES = {signal.SIGINT: "SIGINT (Ctrl-C)", signal.SIGTERM: "SIGTERM"}


class Interrupted(KeyboardInterrupt):
    """The run received `signum`."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def reason(self) -> str:
        return tr("interrupted by {signal}", signal=SIGNAL_NAMES.get(self.signum, f"signal {self.signum}"))


_received: list[int] = []
_raising: list[bool] = [False]
_importing = [0]  # threads inside `while_importing`
_owed: list[bool] = []  # a first signal held back while a thread imported, raised once none does
_lock = threading.Lock()
_early: list[int] = []  # signals received while the command line was still starting (importing torch)


def received() -> Interrupted | None:
    """The interrupt this process received, if any."""
    return Interrupted(_received[0]) if _received else None


def _on_signal(signum, frame):
    first = not _received
    _received.append(signum)
    if (first or _owed) and _raising[0]:
        if _importing[0]:
            _owed[:] = [True]
            return
        _owed.clear()
        raise Interrupted(_received[0])


@contextlib.contextmanager
def while_importing():
    """On a thread that imports: meanwhile a signal does not raise in the main thread, but once the block ends.

    Raised inside importlib, between its taking and its `try` that gives back the global import lock, an exception
    leaves that lock held by the main thread for good; a thread importing then waits on it forever, and the main
    thread on the module that thread half imported (a selftest stopped by Ctrl-C hung so).
    """
    with _lock:
        _importing[0] += 1
    try:
        yield
    finally:
        with _lock:
            _importing[0] -= 1
            due = _owed and not _importing[0] and _raising[0]
        if due:
            signal.pthread_kill(threading.main_thread().ident, _received[0])


def record_early() -> None:
    """From the first line of the command line on, a signal is recorded, not fatal: a run interrupted while
    torch was still being imported still writes its results (status interrupted) and exits 130 or 143.

    Only in the `infergrade` command line itself: a program that imports the grader (pytest, a notebook's kernel,
    a batch's worker) keeps its own handlers, so that its Ctrl-C still stops it.
    """
    if not is_command_line():
        return
    for s in SIGNAL_NAMES:
        signal.signal(s, lambda signum, frame: _early.append(signum))


def is_command_line() -> bool:
    """Whether this process is the `infergrade` command (`python -m grader`, or the script pip installs), not a
    program that imports it nor a worker process that multiprocessing started from it."""
    main = sys.modules.get("__main__")
    started_as = getattr(getattr(main, "__spec__", None), "name", None)
    script = Path(getattr(main, "__file__", None) or "").name
    return (multiprocessing.current_process().name == "MainProcess"
            and (started_as == "grader.__main__" or script == "infergrade"))


def settle() -> None:
    """Grading is over: from now on a signal no longer stops anything (the results are being written)."""
    _raising[0] = False


@contextlib.contextmanager
def signals_interrupt():
    """Within the block, the first SIGINT or SIGTERM raises `Interrupted` (until `settle()`)."""
    _received[:] = _early
    _early.clear()
    _owed.clear()
    _raising[0] = True
    previous = {s: signal.signal(s, _on_signal) for s in SIGNAL_NAMES}
    try:
        yield
    finally:
        _raising[0] = False
        for s, handler in previous.items():
            signal.signal(s, handler)


def as_interrupted(exc: KeyboardInterrupt) -> Interrupted:
    """A plain KeyboardInterrupt (raised without our handler) counts as SIGINT."""
    return exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)
