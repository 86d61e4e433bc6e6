"""What a child's process tells about the grader, wiped: environment, command line, and the strings behind them.

Clearing `os.environ` is not enough: /proc/PID/environ and /proc/PID/cmdline read the process's original
argument and environment area, which every process forked from the grader shares. Overwriting that memory
in the child's first process wipes it for everything below (the namespace's PID 1 and the submission).
"""
from __future__ import annotations

import ctypes
import os
import sys

NAME = b"infergrade-sandbox"


def scrub(home: str, extra: dict) -> None:
    """Replace the environment with a minimal one (no tokens, paths or settings of the grader), and the command
    line with a neutral name."""
    os.environ.clear()
    os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home,
                       "TRITON_CACHE_DIR": os.path.join(home, "triton-cache"),  # this child's own, discarded
                       "LANG": "C.UTF-8", **extra})
    sys.argv = [NAME.decode()]
    sys.orig_argv = [NAME.decode()]
    _wipe_process_strings()


def point_home(home: str) -> None:
    """Make `home` the process's home, temp and Triton cache folder (its one writable place)."""
    os.environ.update({"HOME": home, "TMPDIR": home, "TRITON_CACHE_DIR": os.path.join(home, "triton-cache")})


def _wipe_process_strings() -> None:
    """Overwrite the original argv and environ memory (Linux; libc's environ no longer points there)."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except OSError:
        return
    # fields[k] is field k + 3 of proc(5): arg_start 48, arg_end 49, env_start 50, env_end 51
    arg_start, arg_end, env_start, env_end = (int(fields[k - 3]) for k in (48, 49, 50, 51))
    if arg_end > arg_start:
        ctypes.memset(arg_start, 0, arg_end - arg_start)
        ctypes.memmove(arg_start, NAME, min(len(NAME), arg_end - arg_start - 1))
    if env_end > env_start:
        ctypes.memset(env_start, 0, env_end - env_start)
