"""`infergrade serve`: start (in the background), run (--foreground) or stop this user's warm grader."""
from __future__ import annotations

import fcntl
import importlib
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import click

import grader
from grader import collection, interrupt
from grader.learner.warm import client, folder, identity, wire

READY_S = 300.0  # a loaded machine may take minutes to import torch twice (the grader and its zygote)
STOP_S = 30.0


@click.command()
@click.option("--stop", is_flag=True, help="end the warm grader that runs")
@click.option("--foreground", is_flag=True, help="run it in this terminal, which shows its log (Ctrl-C ends it)")
@click.pass_context
def serve(ctx: click.Context, stop: bool, foreground: bool):
    """Keep a warm grader for `infergrade check` in the background: torch, the checks and the sandbox stay loaded,
    so that a check no longer loads them (about 2 s less on 2 cores). `check` hands its run to it when one of this same grader, Python and
    environment runs, and runs cold otherwise, with the same results and output. It serves only you, only public
    checks, one check at a time, and ends after 15 minutes without one (or with --stop)."""
    try:
        if stop:
            stop_server()
        elif foreground:
            serve_here(ctx.find_root().command)
        else:
            start_server()
    except folder.Unsafe as exc:
        raise click.ClickException(f"{exc}; the warm grader keeps its socket only in a folder of yours alone")


def hello() -> tuple[dict | None, int | None]:
    """The warm grader's answer to a hello ({"ready": pid} or a refusal) and its pid, or (None, None) where none
    answers."""
    try:
        fd = folder.opened()
    except FileNotFoundError:
        return None, None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            if not client.connect(sock, fd):
                return None, None
            wire.send(sock, client.request("hello"))
            got = wire.recv(sock)
            return (got[0] if got else None), wire.peer(sock)[0]
    except folder.Unsafe:
        raise
    except OSError:  # none listens there (a socket left by a killed one), or it went away
        return None, None
    finally:
        os.close(fd)


def start_server() -> None:
    """Start a warm grader in the background, unless one runs, and wait until it serves."""
    os.close(folder.opened(create=True))
    answer, pid = hello()
    if answer is not None:
        if "ready" not in answer:
            raise click.ClickException(f"{answer['message']}; `infergrade serve --stop` ends it")
        click.echo(f"a warm grader already runs (pid {pid}); `infergrade serve --stop` ends it")
        return
    fd = folder.opened()
    log_fd = folder.open_file(fd, folder.LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.close(fd)
    # `python -m grader` from the folder that holds this very package: the server imports the grader this one is
    process = subprocess.Popen([sys.executable, "-m", "grader", "serve", "--foreground"],
                               cwd=Path(grader.__file__).resolve().parent.parent, stdin=subprocess.DEVNULL,
                               stdout=log_fd, stderr=log_fd, start_new_session=True)
    os.close(log_fd)
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline and process.poll() is None:
        answer, pid = hello()
        if answer is not None and "ready" in answer and pid != process.pid:  # another terminal's started first
            process.terminate()
            click.echo(f"a warm grader already runs (pid {pid}); `infergrade serve --stop` ends it")
            return
        if answer is not None and answer.get("ready") == process.pid:
            click.echo(f"warm grader ready (pid {process.pid}): `infergrade check` now hands its runs to it; it "
                       f"ends after {idle_s() / 60:g} minutes without a check, or with `infergrade serve --stop`")
            return
        time.sleep(0.2)
    if process.poll() is None:
        process.kill()
    raise click.ClickException(f"the warm grader did not start; its log: {folder.path() / folder.LOG}")


def idle_s() -> float:
    """Seconds without a request after which the warm grader exits."""
    from grader.learner.warm.server import IDLE_S, IDLE_VARIABLE

    return float(os.environ.get(IDLE_VARIABLE, IDLE_S))


def stop_server() -> None:
    """End the warm grader that runs (SIGTERM: it stops its run and its sandboxes) and wait until it has."""
    answer, pid = hello()
    if pid is None:
        click.echo("no warm grader runs")
        return
    ended = os.pidfd_open(pid)
    try:
        os.kill(pid, signal.SIGTERM)
        if not select.select([ended], [], [], STOP_S)[0]:
            raise click.ClickException(f"the warm grader (pid {pid}) did not stop within {STOP_S:g} s")
    finally:
        os.close(ended)
    click.echo(f"stopped the warm grader (pid {pid})")


def serve_here(command) -> None:
    """Be the warm grader, in this process, until it stops: take the lock, load everything a check loads, serve."""
    from grader.learner.warm.server import Server, log

    fd = folder.opened(create=True)
    lock = folder.open_file(fd, folder.LOCK, os.O_RDWR | os.O_CREAT)
    deadline = time.monotonic() + STOP_S  # one that is stopping holds it while it ends its sandboxes
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise click.ClickException("a warm grader already runs (`infergrade serve --stop` ends it)") from None
            time.sleep(0.1)
    server = Server(command, fd, lock, identity.identity())
    with interrupt.signals_interrupt():  # a Ctrl-C since the command line started stops it before it loads
        stopped = interrupt.received()
    if stopped:
        return
    server.catch_signals()
    log("loading torch, the engine and the public checks")
    warm_up()
    server.listen()
    server.serve()


def warm_up() -> None:
    """Start the zygote and import what a check imports (torch, the engine, every topic's public checks), so that a
    run imports nothing: what `check` does first, and what its first run would import."""
    from grader.sandbox.zygote import shared

    shared()
    import torch

    torch.set_num_threads(1)
    from grader import topics
    from grader.engine import runner

    for name in ("grader.grading", "grader.exporters.terminal", "grader.submission.stubs"):
        importlib.import_module(name)
    runner.zygote()  # also removes what killed runs left behind
    runner.load_hypothesis_profile()  # before the checks build their settings
    for topic in topics.all_topics():
        importlib.import_module(f"grader.checks.{topic}.test_public")
    topics.api.cache_clear()  # read from the stubs, which may be the student's own folder: each run reads them
    collection.resume()
