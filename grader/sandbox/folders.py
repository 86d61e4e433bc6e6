"""The folder of each child or sandbox on the grader's side (output file, watchdog page), and its removal, even
after a run that was killed before it could clean up."""
from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile
import time

from grader.sandbox import watchdog

CHILD_FOLDER = "infergrade-child-"  # + the grader's pid: a folder whose grader is gone was left by a killed run


def make_folder() -> tuple[str, int, watchdog.Page]:
    """A new folder for a child or a sandbox: (its path, the grader's descriptor of its output file, its watchdog
    page). The grader reads the output through its own descriptor of the file it created, never the path, which
    the child may replace (a symlink to a hidden file, a FIFO)."""
    tmpdir = tempfile.mkdtemp(prefix=f"{CHILD_FOLDER}{os.getpid()}-")
    os.chmod(tmpdir, 0o700)
    path = os.path.join(tmpdir, "output.txt")
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    return tmpdir, os.open(path, os.O_RDONLY | os.O_NOFOLLOW), watchdog.Page(os.path.join(tmpdir, "watch"))


def remove_folder(tmpdir: str, output_fd: int, watch: watchdog.Page) -> None:
    """Close what the grader holds of a folder made by make_folder and remove it (later, while it is busy)."""
    os.close(output_fd)
    watch.close()
    shutil.rmtree(tmpdir, ignore_errors=True)
    if os.path.exists(tmpdir):  # its private root stays busy until the killed child is gone
        _left_behind.append(tmpdir)


_left_behind: list[str] = []


def remove_left_behind(wait: float = 1.0) -> None:
    """Remove the folders of discarded children that were still busy, waiting up to `wait` seconds."""
    deadline = time.monotonic() + wait
    while _left_behind and time.monotonic() < deadline:
        for folder in list(_left_behind):
            shutil.rmtree(folder, ignore_errors=True)
            if not os.path.exists(folder):
                _left_behind.remove(folder)
        time.sleep(0.01 if _left_behind else 0)


def remove_stale_folders() -> int:
    """Remove the child folders of graders that are no longer running (killed before they could clean up)."""
    removed = 0
    if not sys.platform.startswith("linux"):
        return removed  # which graders are running is read from /proc
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), f"{CHILD_FOLDER}*-*")):
        pid = os.path.basename(folder)[len(CHILD_FOLDER):].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}") and not os.path.islink(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed
