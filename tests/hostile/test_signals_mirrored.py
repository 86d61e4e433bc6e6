"""Sandbox v8, red team (stopped): deaths by signals that the child's first process ignores or that glibc's
`signal` names oddly are mirrored as themselves.

walls._mirror ends the first process (root, host namespaces) with the signal PID 1 reported. Tried: signals the
first process ignores (SIGHUP, which the processes above the submission's ignore; SIGPIPE and SIGXFSZ, inherited
as ignored from the grader's Python): an ignored signal sent to oneself does nothing, and the first process would
fall through to exit code 70. And real-time signals at both ends of the range and between (34, 40, 64), which the
submission raises after restoring their default action. Each is reported as that signal, never as an exit code.
"""
import signal
import sys

import pytest

from grader.sandbox.failures import ChildFailure

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import os
import signal
import time


def die_by(sig):
    signal.signal(sig, signal.SIG_DFL)             # Python ignores SIGPIPE and SIGXFSZ; restore the default
    os.kill(os.getpid(), sig)
    time.sleep(5)


def ping():
    return 1
'''


@linux_only
@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ, 34, 40, 64])
def test_a_death_by_an_ignored_or_real_time_signal_is_reported_as_that_signal(sandboxed, sig):
    sub = sandboxed(PROBES, timeout=20)
    assert sub.ping() == 1
    with pytest.raises(ChildFailure) as failure:
        sub.die_by(int(sig))
    sub.close()
    message = str(failure.value)
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(int(sig))
    assert f"killed by signal {name} " in message and "exited with code" not in message, message
