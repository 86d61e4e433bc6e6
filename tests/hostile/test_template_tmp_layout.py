"""One sandbox per topic (template.py), red team: a check cannot end its topic's template by moving the folders that
lead to a mount below /tmp.

A submission (or venv) below the host's /tmp is bound below the sandbox's /tmp, under folders PID 1 made there.
Where the grader is not root its user namespace maps one uid, so the check's process owns those folders and may
rename them in /tmp. Before the next check PID 1 finds the mount at a path its layout does not hold, fails the
assertion of mounts.renew_tmp and exits; the pool then gave up templates for the rest of the run (a chain per check
for every later topic: slower, no points lost). renew_tmp now finds the mounts by their mount ids. A grade-batch
upload is unpacked below /tmp. As root the check runs as another uid and the rename is refused. The one-uid map is
stood in for by the hostile conftest's ONE_UID.
"""
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

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


def test_a_check_cannot_end_the_template_by_moving_the_submissions_folders(topic_checks_of):
    one_uid_checks = topic_checks_of(PROBES, one_uid=True)
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
