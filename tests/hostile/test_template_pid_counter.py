"""One sandbox per topic (template.py), red team: the pid a check's process gets says nothing of the checks before it.

The checks of a topic share one PID namespace, whose pid counter outlived each check: a check that forked k
processes moved the next check's pid on by k, a number any check could write and the next read (os.getpid()), where a
chain per check always started its submission at the same pid.
"""
import sys

import pytest


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import os

def pid():
    return os.getpid()

def fork(count):
    """Fork `count` processes that end at once; this process's pid."""
    for _ in range(count):
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
    return os.getpid()
'''


def test_a_check_cannot_move_the_next_checks_pid(topic_checks_of):
    topic_checks = topic_checks_of(PROBES)
    first = topic_checks()
    first_pid = first.fork(40)
    assert first.isolation["template"]
    first.close()
    second = topic_checks()
    assert second.pid() == first_pid
    assert second._child.sandbox is first._child.sandbox
    second.close()
