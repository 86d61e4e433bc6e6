"""One sandbox per topic (template.py), red team: a check cannot change how the next check of its topic writes its
output.

PID 1 empties the output file before each check, but every check's stdout and stderr were the one open file
description PID 1 holds: its offset and its status flags outlived the check. A check that clears O_APPEND and seeks
its stdout to the 1 MiB file size limit made every print of the next check fail (EFBIG: a module that prints when
imported cannot be imported, and the topic's remaining checks are recorded as import failures), and the offset
carried any number it chose to the next check.
"""
import sys

import pytest


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

OUTPUT_BYTES = 2**20
PROBES = '''
import fcntl, os

def spoil_stdout(offset):
    """Clear O_APPEND on stdout and leave its offset at `offset`."""
    fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) & ~os.O_APPEND)
    return os.lseek(1, offset, os.SEEK_SET)

def stdout_state():
    """Whether stdout appends, and its offset."""
    return bool(fcntl.fcntl(1, fcntl.F_GETFL) & os.O_APPEND), os.lseek(1, 0, os.SEEK_CUR)

def shout(text):
    print(text, flush=True)
    return True
'''


def test_a_check_cannot_spoil_the_next_checks_output(topic_checks_of):
    topic_checks = topic_checks_of(PROBES, output_bytes=OUTPUT_BYTES)
    first = topic_checks()
    assert first.spoil_stdout(OUTPUT_BYTES) == OUTPUT_BYTES
    assert first.stdout_state() == (False, OUTPUT_BYTES), "the first check could not spoil its stdout"
    first.close()
    second = topic_checks()
    state = second.stdout_state()
    assert second.isolation["template"] and second._child.sandbox is first._child.sandbox
    assert state == (True, 0)
    assert second.shout("heard-by-the-grader") is True
    assert "heard-by-the-grader" in second.output_tail()
    second.close()
