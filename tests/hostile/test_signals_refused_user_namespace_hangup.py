"""Sandbox v9, red team (fixed): where the kernel refuses user namespaces, the v8 attack still hangs up the child's
first process (root, host namespaces), and the grader reports a SIGHUP that no submission process had.

Commit 08fd6fd moved PID 1 of the sandbox's PID namespace into a process group of its own, so that no submission
process shares the first process's group G. But walls.enter has a fallback for a kernel that refuses
unshare(CLONE_NEWUSER | ...) (a container whose seccomp profile denies unshare, user.max_user_namespaces=0, an LSM
that restricts user namespaces): the unsharer then becomes the submission's process itself ("this process is the
submission's"), still in G and in the first process's session, with no PID namespace and no setpgid. The v8
attack works unchanged: a process S forks C (in G, stops itself), S moves to a group of its own, S exits; G is left
orphaned with a stopped member and the kernel sends SIGHUP then SIGCONT to all of G, the first process included
(kernel/exit.c, kill_orphaned_pgrp: no permission check, no Landlock scope). The first process dies of SIGHUP
before it can mirror the submission's exit code 5. (C exits as soon as the kernel's SIGCONT wakes it: without a PID
namespace no PID 1 ends it, and a live C would hold the channel open until the call's timeout.)

The refusal is simulated as the v4/v5 tests simulate a refused private root: namespaces.unshare_all returns what it
returns when the kernel says no (namespaces.NONE), patched in the zygote before it serves.

Safe behaviour: the first process ends as the submission's process did (exit code 5). Fix (walls.enter): the
processes above the submission's ignore SIGHUP on every path, and the submission's process restores its default;
_mirror restores it before it mirrors a death by SIGHUP (test_signals_mirrored).
"""
import sys

import pytest

from grader.sandbox.failures import ChildFailure
from grader.sandbox.zygote import Zygote

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
            os._exit(0)                             # continued by the kernel's SIGCONT: no PID 1 ends it here
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
def test_without_a_user_namespace_an_orphaned_group_does_not_hang_up_the_first_process(
        open_folder, sandboxed):
    refused = Zygote(prelude="from grader.sandbox import namespaces\n"  # the kernel's refusal, in the zygote
                             "namespaces.unshare_all = lambda: dict(namespaces.NONE)\n")
    try:
        sub = sandboxed(PROBES, timeout=20, folder=open_folder, zygote_=refused)
        assert sub.ping() == 1
        assert sub.isolation["user_namespace"] is False and sub.isolation["pid_namespace"] is False
        with pytest.raises(ChildFailure) as failure:
            sub.hang_up_the_first_process(5)
        sub.close()
    finally:
        refused.close()
    message = str(failure.value)
    assert "exited with code 5" in message and "SIGHUP" not in message, message
