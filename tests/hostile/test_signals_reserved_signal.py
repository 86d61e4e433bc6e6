"""Sandbox v7, red team (fixed): a submission killed by a glibc-reserved signal was reported as exit code 70.

walls._mirror ends the child's first process the way PID 1 reported the submission's process ended: for a signal,
`signal.signal(sig, SIG_DFL)` then kill itself. glibc's sigaction refuses its own signals 32 and 33 (SIGCANCEL,
SIGSETXID), so `signal.signal` raised OSError, the child's catch-all exited with code 70, and the grader said
"exited with code 70 (os._exit or a crash)". Fix: such a signal gets its default action from the raw rt_sigaction
syscall before the first process kills itself with it.
"""
import sys

import pytest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import os
import time


def die_by_signal_32():
    os.kill(os.getpid(), 32)   # kill(2) itself takes glibc's reserved signals (its sigaction and raise refuse them)
    time.sleep(5)


def ping():
    return 1
'''


@linux_only
def test_death_by_a_reserved_signal_is_reported_as_that_signal(failure_of):
    message = failure_of(PROBES, "die_by_signal_32")
    assert "exited with code 70" not in message and "signal" in message, message
