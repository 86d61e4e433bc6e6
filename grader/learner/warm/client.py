"""`check`'s side of the warm grader: hand the whole command over to a warm grader of this grader, if one answers,
and wait for its exit code while it writes to this process's terminal; forward Ctrl-C. Nothing heavy is imported
here: where no warm grader answers, `check` runs cold as it always did."""
from __future__ import annotations

import os
import re
import select
import signal
import socket
import sys
import time
from pathlib import Path

import click

from grader import interrupt, output
from grader.learner.warm import folder, identity, wire

VARIABLE = "INFERGRADE_WARM"  # 0: never hand a check over (scripts, benchmarks of the cold path)
PROTOCOL = 1
ANSWER_S = 5.0  # a warm grader answers a request at once (queued, started or refused); else it is not used
FORWARDED = (signal.SIGINT, signal.SIGTERM)
_in_warm_grader: list[bool] = []  # a check the warm grader runs is never handed over again (to itself)


def served_here() -> None:
    """This process is a warm grader's run: its `check` runs here."""
    _in_warm_grader.append(True)


def hand_over(paths: list[Path]) -> int | None:
    """This `check` run by a warm grader: its exit code, its output already written where this process's goes;
    None where no warm grader of this grader, interpreter and environment answers (nothing was written, and a
    Ctrl-C received meanwhile is recorded for the cold run). `paths`: the files the command line names (results,
    the submission), which a fork of the grader must read as this process would."""
    if _in_warm_grader or os.environ.get(VARIABLE) == "0" or not interrupt.is_command_line() or \
            sys.argv[1:2] != ["check"] or not all(map(_same_in_a_fork, paths)):
        return None
    try:
        fd = folder.opened()
    except OSError:  # none, or not this user's alone (folder.Unsafe): nothing is sent anywhere
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            if not connect(sock, fd):
                return None
            return _run(sock)
    except OSError:  # the warm grader went away before it started the run
        return None
    finally:
        os.close(fd)


def _same_in_a_fork(path: Path) -> bool:
    """Whether `path` names the same file in another process given this one's standard output and error: not
    another descriptor, another process's, or this process's terminal by name."""
    named = os.path.abspath(path)
    return output.descriptor(path) in (None, 1, 2) and named != "/dev/tty" and \
        not re.match(r"/proc/(?!self/|thread-self/)", named)


def connect(sock: socket.socket, fd: int) -> bool:
    """Connect to the socket in the folder open at `fd`; whether a process of this uid answers there."""
    folder.socket_checked(fd)
    sock.settimeout(ANSWER_S)
    sock.connect(folder.socket_address(fd))
    return wire.peer(sock)[1] == os.geteuid()


def request(kind: str) -> dict:
    """A request with what the warm grader must share with this process: grader, interpreter, environment."""
    return {"kind": kind, "protocol": PROTOCOL, **identity.identity(), "environ": dict(os.environ)}


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _run(sock: socket.socket) -> int | None:
    """Send the check with this process's standard output, error and working folder, then wait for its exit code,
    forwarding SIGINT and SIGTERM (a second one stops waiting)."""
    signals, wakeup = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    previous = signal.set_wakeup_fd(wakeup, warn_on_full_buffer=False)  # the command line's handlers record them
    cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        wire.send(sock, {**request("check"), "argv": sys.argv[1:], "umask": _umask()}, [1, 2, cwd])
        os.close(cwd)
        cwd = -1
        return _wait(sock, signals)
    finally:
        signal.set_wakeup_fd(previous)
        for fd in (signals, wakeup, cwd):
            if fd >= 0:
                os.close(fd)


def _wait(sock: socket.socket, signals: int) -> int | None:
    answer_by, started, forwarded = time.monotonic() + ANSWER_S, False, []
    while True:
        timeout = None if answer_by is None else max(0.0, answer_by - time.monotonic())
        ready, _, _ = select.select([sock, signals], [], [], timeout)
        if not ready:
            return None  # no answer: a grader that hangs is not used
        if signals in ready:
            for signum in os.read(signals, 64):
                if signum not in FORWARDED:
                    continue
                if forwarded and started:
                    return 128 + forwarded[0]  # a second Ctrl-C: stop waiting (the run is killed)
                forwarded.append(signum)
                wire.send(sock, {"signal": signum})
        if sock not in ready:
            continue
        sock.settimeout(ANSWER_S)
        got = wire.recv(sock)
        message = got[0] if got is not None else {}
        if "exit" in message:
            return int(message["exit"])
        if "refused" in message:
            click.echo(f"infergrade: {message['message']}", err=True)
            return None
        if got is None and started:
            click.echo("infergrade: the warm grader ended during this check; it runs again without it", err=True)
            return None
        if got is None or "dropped" in message:
            return None
        started, answer_by = started or "started" in message, None
