"""How the command line ends: its exit handlers run and its output is flushed, then the process leaves at once,
without the interpreter's teardown (freeing torch's modules one object at a time: 0.9 s of CPU after every command)."""
from __future__ import annotations

import atexit
import os
import sys
from typing import Callable, NoReturn

from grader import collection


def run_as_command(main: Callable[[], object]) -> NoReturn:
    """Run `main` (a click command in standalone mode, which ends in SystemExit) as the process's command line,
    without garbage collection until its checks start (`collection`)."""
    collection.pause()
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exit_status(exc.code)
    atexit._run_exitfuncs()  # what the interpreter would run at exit: results writers, workers' and folders' cleanup
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or stream: nothing more can be said
            pass
    os._exit(code)


def exit_status(code: object) -> int:
    """The status `sys.exit(code)` gives: 0 for None, an integer as it is, anything else printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
