"""Sandbox v8, red team (fixed): the submission makes the kernel send SIGHUP to the child's first process (root,
host namespaces, outside the walls), which dies of it before PID 1 can report how the submission ended.

The first process is a session and process group leader (zygote._child_main: setsid), and every process below it,
the submission's included, stays in its session and its process group G. The kernel's job control rule
(kernel/exit.c, kill_orphaned_pgrp): when a process exits and so leaves a process group of its session "orphaned"
(no member has a parent in another group of the same session) while a member is stopped, every member of that group
gets SIGHUP then SIGCONT, sent by the kernel, so without any permission check and across PID namespaces. The
submission: a process S forks C (in G, stops itself), S moves to a group of its own (setpgid, allowed), so that C's
parent is in another group of the session, then S exits. G becomes orphaned with a stopped job: SIGHUP reaches the
first process and the unsharer, both root on the host, whose default action ends them. Every submission process
ignores SIGHUP and the submission's own process means to exit with code 5; the grader reports "killed by signal
SIGHUP", a status that no submission process had, and the first process did not end as the submission did. The same
session also lets the submission send SIGCONT to the first process (kill(0, SIGCONT) is allowed within a session).

Safe behaviour: the first process ends as the submission's process did (exit code 5). Fix: PID 1 moves to a
process group of its own (os.setpgid(0, 0) at the start of walls._namespace_init), so that no submission process is
ever in the first process's group: that group has no stopped job to orphan, and PID 1's group keeps PID 1, whose
parent is in another group of the same session, so it is never orphaned either. PID 1 still ends with the unsharer
(its death signal) when the zygote kills the group.
"""
import sys

import pytest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import os
import signal
import time


def hang_up_the_first_process(code):
    signal.signal(signal.SIGHUP, signal.SIG_IGN)    # no submission process dies of the SIGHUP
    s = os.fork()
    if s == 0:
        c = os.fork()
        if c == 0:                                  # C stays in the first process's group, and stops
            os.kill(os.getpid(), signal.SIGSTOP)
            time.sleep(30)
            os._exit(0)
        os.setpgid(0, 0)                            # S leaves the group: C's parent is now outside it
        time.sleep(0.3)                             # C has stopped
        os._exit(0)                                 # the group is orphaned with a stopped job: SIGHUP to all of it
    os.waitpid(s, 0)
    time.sleep(1)
    os._exit(code)


def ping():
    return 1
'''


@linux_only
def test_an_orphaned_process_group_does_not_hang_up_the_first_process(failure_of):
    message = failure_of(PROBES, "hang_up_the_first_process", 5)
    assert "exited with code 5" in message and "SIGHUP" not in message, message
