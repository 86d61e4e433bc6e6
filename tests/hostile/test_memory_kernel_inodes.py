"""Hostile submission: pins kernel memory that no byte cap counts. Empty files and short links in the private /tmp
take no page of its size but each holds an inode and a dentry: with tmpfs's default inode count (half the
machine's pages) one child pinned about 4 GB. Every writable mount has an inode cap; past it, ENOSPC."""
import errno
import sys

import pytest

from grader.sandbox.policy import TMP_FILES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the private root is Linux's")

PROBES = '''
import os

def ping():
    return True

def fill(kind, most):
    """Make up to `most` empty files (or links, or folders) in /tmp: (how many, the errno that stopped it)."""
    for i in range(most):
        path = f"/tmp/{kind}{i}"
        try:
            if kind == "file":
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
            elif kind == "link":
                os.symlink("x", path)
            else:
                os.mkdir(path)
        except OSError as exc:
            return i, exc.errno
    return most, None
'''


@pytest.mark.parametrize("kind", ["file", "link", "folder"])
def test_files_links_and_folders_in_tmp_stop_at_the_inode_cap(sandboxed, kind):
    sub = sandboxed(PROBES, timeout=120)
    sub.ping()
    if not sub.isolation.get("private_root"):
        pytest.skip("the kernel refused a private root here")
    made, error = sub.fill(kind, 50 * TMP_FILES)
    assert error == errno.ENOSPC and made < TMP_FILES, (made, error)
    assert sub.isolation["tmp_files"] == TMP_FILES  # and the results say so
    sub.close()
