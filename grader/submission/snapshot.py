"""The grader's one copy of a submission folder, taken before any check: the folder is read once, without following a
link, into a folder the grader owns, and everything after (hashes, sandboxes, the hidden phase) reads the copy, so
that a folder swapped or rewritten while it is graded changes nothing."""
from __future__ import annotations

import atexit
import hashlib
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

from grader.language import tr
from grader.sandbox import mounts
from grader.sandbox.folders import CHILD_FOLDER
from grader.submission.opening import BadInput, link_target, open_given, path_of


class Snapshot:
    """A copy of a submission in a folder of this process (named as a child's folder, so that a killed run's is
    swept at the next start), readable by the sandbox's unprivileged user, found by no other user, and removed when
    done or at exit.

    `folder` is the copy, `given` the folder (or notebook) the user named, as it was reached when opened: the results
    record it, progress is kept there, and messages that name the copy name it instead. `files` holds the sha256 of
    each file copied, by its path relative to the folder: the bytes graded.
    """

    def __init__(self, given: Path):
        self.given = given
        self._holder = Path(os.path.realpath(tempfile.mkdtemp(prefix=f"{CHILD_FOLDER}{os.getpid()}-submission-")))
        self._owner = os.getpid()
        atexit.register(self.remove)
        # a root grader's child runs as nobody and must read the copy, which no other user may find: the holder
        # can be passed through but not listed, and the copy's own name is a secret of this run
        os.chmod(self._holder, 0o711)
        self.folder = self._holder / secrets.token_hex(16)
        self.folder.mkdir()
        self.folder.chmod(0o755)
        self.files: dict[str, str] = {}

    def remove(self) -> None:
        """Remove the copy (only in the process that made it: a forked child's exit leaves it)."""
        if os.getpid() == self._owner:
            shutil.rmtree(self._holder, ignore_errors=True)
            atexit.unregister(self.remove)

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def shown(self, text: str) -> str:
        """`text` with the copy's path replaced by the path the user gave (an error quoting a module's __file__)."""
        return text.replace(str(self.folder), str(self.given))

    def add(self, relative: str, folder: int, name: str, listed: os.stat_result) -> None:
        """Copy the regular file `name` of the folder open at `folder` to `relative` in the copy, and hash it; left
        out where it is no longer the file listed (`listed`: its lstat); BadInput where a link took its place."""
        made = self.folder
        for part in Path(relative).parent.parts:
            made = made / part
            if not made.is_dir():
                made.mkdir()
                made.chmod(0o755)
        digest = hashlib.sha256()
        try:
            copied = mounts.copy_file(folder, name, listed, str(self.folder / relative), digest)
        except OSError:
            copied = False
        if copied:
            self.files[Path(relative).as_posix()] = digest.hexdigest()
        elif link_target(folder, name) is not None:
            self.refuse_link(relative, folder, name)

    def refuse_link(self, relative: str, folder: int, name: str) -> None:
        raise BadInput(tr("submission folder {folder} holds the symbolic link {link} (to {target}): the grader reads "
                          "only the files themselves; put the file in its place", folder=repr(str(self.given)),
                          link=repr(relative), target=repr(link_target(folder, name))))


def take(top: int, given: Path) -> Snapshot:
    """A Snapshot of the folder open at `top` (`given`: its path, for the results and messages): the files
    `mounts.submission_entries` takes, each read once through a descriptor of its own folder; BadInput naming a
    link the folder holds."""
    snapshot = Snapshot(given)
    try:
        for relative, folder, name, listed in mounts.submission_entries(top):
            if stat.S_ISLNK(listed.st_mode):
                snapshot.refuse_link(relative, folder, name)
            snapshot.add(relative, folder, name, listed)
    except BaseException:
        snapshot.remove()
        raise
    return snapshot


def of_folder(path: Path) -> Snapshot:
    """A Snapshot of the folder at `path`, opened without following a link (BadInput where it cannot be)."""
    fd, info = open_given(path)
    try:
        if not stat.S_ISDIR(info.st_mode):
            raise BadInput(tr("submission {path} is not a folder (pass the folder that holds sampling.py etc.)",
                              path=repr(str(path))))
        return take(fd, path_of(fd, path))
    finally:
        os.close(fd)
