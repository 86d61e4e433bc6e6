"""A checking command line's first act: the zygote (a fresh interpreter that imports torch) starts before the
command line's own imports, so that the two imports of torch overlap from the start (speed v2, cut G)."""
from __future__ import annotations

import os

CHECKING = ("check", "grade", "selftest", "goldens", "watch")  # the commands that call cli._start_checking
NOT_A_RUN = {"-h", "--help"}


def start_zygote(argv: list[str]) -> None:
    """Start the zygote now where `argv` asks a command that runs checks; not for --help, and not for a `check`
    that a warm grader may run (its socket is there: the warm path decides, and `_start_checking` starts the
    zygote where it runs cold)."""
    if len(argv) < 2 or argv[1] not in CHECKING or NOT_A_RUN & set(argv[2:]):
        return
    if argv[1] == "check" and os.environ.get("INFERGRADE_WARM") != "0":
        from grader.learner.warm import folder

        if os.path.lexists(folder.path() / folder.SOCKET):
            return
    from grader.sandbox.zygote import shared

    shared()
