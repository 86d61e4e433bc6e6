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

from grader.sandbox.policy import sandbox_config
from grader.sandbox.remote import ChildPool, Submission
from grader.sandbox.zygote import Zygote

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

ONE_UID = ("from grader.sandbox import namespaces\n"
           "def _one_uid(pid, uid, gid):\n"
           "    namespaces._write(f'/proc/{pid}/setgroups', 'deny')\n"
           "    namespaces._write(f'/proc/{pid}/uid_map', f'0 {uid} 1\\n')\n"
           "    namespaces._write(f'/proc/{pid}/gid_map', f'0 {gid} 1\\n')\n"
           "namespaces.write_maps = _one_uid\n")

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


@pytest.fixture
def one_uid_pool(tmp_path):
    """A pool whose sandboxes map one uid (an unprivileged grader's), and the config of topic `demo`."""
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "demo.py").write_text(PROBES)
    zygote = Zygote(prelude=ONE_UID)
    pool = ChildPool(zygote)
    yield pool, {**sandbox_config(folder, 2**31, 2**20), "topic": "demo", "forbidden": []}
    pool.close()
    zygote.close()


def test_a_check_cannot_lower_the_limits_of_the_next_one(one_uid_pool):
    pool, config = one_uid_pool
    first = Submission(pool, config)
    first.set_timeout(30)
    before, uid = first.limits()
    assert first.isolation["template"] and uid == 0, "the check must run in a template, as PID 1's uid"
    first.lower_init()
    first.close()
    second = Submission(pool, config)
    second.set_timeout(30)
    assert second.limits() == (before, 0)
    second.close()
