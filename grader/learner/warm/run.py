"""One `check` in a fork of the warm grader, set up as its client's own command line would have been: the client's
standard output and error (its terminal, its pipe, its results file), working folder, umask, environment and
command line, the interrupt handling of a command line, and this run's exit handlers only."""
from __future__ import annotations

import atexit
import os
import signal
import sys
import traceback
from typing import NoReturn

from grader import interrupt, language, leaving
from grader.learner.warm import client

RUN_FAILED = 70  # EX_SOFTWARE: the fork could not take its client's place


def run_check(command, request: dict, fds: list[int], server_fds: list[int], zygote) -> NoReturn:
    """In the fork: become the client's command line and run `command` (the group) with its arguments; exits with
    the command's exit code. `fds`: the client's standard output, standard error and working folder;
    `server_fds`: the server's own, closed here; `zygote`: the server's, which this process uses as its own."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter has them...
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        interrupt.record_early()  # ...until the command line's first line records them
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGTERM, signal.SIGINT, signal.SIGHUP))
        for fd in server_fds:
            os.close(fd)
        atexit._clear()  # the server's exit handlers (its zygote, its folders) are not this run's
        zygote.alive = lambda: True  # checked before the fork; this process cannot wait for it
        stdout, stderr, cwd = fds
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        os.fchdir(cwd)
        for fd in fds:
            os.close(fd)
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["environ"])
        language.choose(None)  # the client's INFERGRADE_LANG or locale, not the server's (its --lang, in argv, wins)
        sys.argv = [sys.argv[0], *request["argv"]]
        client.served_here()
    except BaseException:  # noqa: BLE001 - a fork never returns into the server's loop
        os._exit(RUN_FAILED)
    try:
        leaving.run_as_command(lambda: command.main(args=request["argv"], prog_name="infergrade"))
    except BaseException:  # noqa: BLE001 - what the interpreter does with an exception nothing caught
        traceback.print_exc()
        atexit._run_exitfuncs()
        sys.stderr.flush()
    os._exit(1)
