"""One sandbox per topic (template.py), red team: a check cannot end its topic's template by moving the folders that
lead to a mount below /tmp.

A submission (or venv) below the host's /tmp is bound below the sandbox's /tmp, under folders PID 1 made there.
Where the grader is not root its user namespace maps one uid, so the check's process owns those folders and may
rename them in /tmp. Before the next check PID 1 finds the mount at a path its layout does not hold, fails the
assertion of mounts.renew_tmp and exits; the pool then gave up templates for the rest of the run (a chain per check
for every later topic: slower, no points lost). renew_tmp now finds the mounts by their mount ids. A grade-batch upload is unpacked below /tmp. As root the check runs as
another uid and the rename is refused. The one-uid map is stood in for as in test_template_limits.py.
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
import os

def ping():
    return True

def move_submission_folders():
    """Rename each folder of /tmp that leads to a mount (the submission's); the names moved."""
    moved = []
    for name in os.listdir("/tmp"):
        try:
            os.rename("/tmp/" + name, "/tmp/moved-" + name)
            moved.append(name)
        except OSError:
            pass
    return moved
'''


@pytest.fixture
def one_uid_checks(tmp_path):
    """`one_uid_checks()`: the next check of topic `demo` from one pool whose sandboxes map one uid."""
    folder = tmp_path / "sub"  # below the host's /tmp: bound below the sandbox's /tmp
    folder.mkdir()
    (folder / "demo.py").write_text(PROBES)
    config = {**sandbox_config(folder, 2**30, 2**20), "topic": "demo", "forbidden": []}
    zygote = Zygote(prelude=ONE_UID)
    pool = ChildPool(zygote)

    def next_check() -> Submission:
        sub = Submission(pool, config)
        sub.set_timeout(30)
        return sub
    yield next_check
    pool.close()
    zygote.close()


def test_a_check_cannot_end_the_template_by_moving_the_submissions_folders(one_uid_checks):
    first = one_uid_checks()
    if not first._config["submission_dir"].startswith("/tmp/"):
        pytest.skip("the submission is not below /tmp here (TMPDIR elsewhere)")
    assert first.ping() is True and first.isolation["template"]
    assert first.move_submission_folders() != [], "the first check could not move anything: it proves nothing"
    first.close()
    second = one_uid_checks()
    assert second.ping() is True
    assert second.isolation.get("template") and second._child.sandbox is first._child.sandbox
    second.close()
