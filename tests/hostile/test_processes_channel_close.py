"""Sandbox v7, red team (fixed): a submission that closed its channel and hung was reported as out of memory.

When the grader's socket reaches end of stream, the child gets ENDING_GRACE (5 s) to end and report how; then the
zygote kills its process group. The zygote returned the wait status of its own kill, SIGKILL, which the grader
described as "most likely for running out of memory". Fix: the zygote says whether the child had ended on its own,
and the grader says that the child closed its channel and did not end in time.
"""
import sys

import pytest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import os
import time


def close_channel_and_hang():
    import grader.sandbox.child as served_child
    os.close(served_child._channel.fileno())       # the grader reads end of stream at once
    time.sleep(30)                                  # and the process never ends on its own


def ping():
    return 1
'''


@linux_only
def test_a_closed_channel_and_a_hang_is_not_reported_as_running_out_of_memory(failure_of):
    message = failure_of(PROBES, "close_channel_and_hang")
    assert "did not end within" in message and "out of memory" not in message, message
