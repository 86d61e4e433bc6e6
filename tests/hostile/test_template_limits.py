"""One sandbox per topic (template.py), red team: a check cannot change the limits PID 1 hands the next check.

Where the grader is not root (a student's machine, most CI runners) its user namespace maps one uid, so the
check's process has PID 1's uid: with no capability it may still call prlimit on PID 1, whose lowered hard limits
no process of the sandbox can raise again, and every later check of the topic, forked from PID 1, inherits them
(a check that sets PID 1's descriptor limit to 16 makes every later check fail to start). The grader's single uid
is stood in for by a zygote whose id map is the unprivileged one, as the grader itself writes it when the host
refuses a second uid.
"""
import sys

import pytest


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import os, resource

LIMITS = (resource.RLIMIT_NOFILE, resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_CPU)

def limits():
    return [resource.getrlimit(kind) for kind in LIMITS], os.getuid()

def lower_init():
    """Lower PID 1's limits as far as they go; the ones the kernel let this process lower."""
    lowered = []
    for kind, value in zip(LIMITS, (16, 2**30, 4, 1)):
        try:
            resource.prlimit(1, kind, (value, value))
            lowered.append(kind)
        except OSError:
            pass
    return lowered
'''


def test_a_check_cannot_lower_the_limits_of_the_next_one(topic_checks_of):
    one_uid_checks = topic_checks_of(PROBES, 2**31, one_uid=True)
    first = one_uid_checks()
    before, uid = first.limits()
    assert first.isolation["template"] and uid == 0, "the check must run in a template, as PID 1's uid"
    first.lower_init()
    first.close()
    second = one_uid_checks()
    assert second.limits() == (before, 0)
    second.close()
