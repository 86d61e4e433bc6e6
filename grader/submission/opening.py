"""Open the path a user named, and folders below it, one component at a time without following a symbolic link:
what is then read is what was opened, whatever the path names a moment later (a folder swapped for a link)."""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from grader.language import tr

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NONBLOCK
NO_LINK = os.O_NOFOLLOW  # with FOLDER: ELOOP where the component is a link
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC  # a FIFO never blocks the open


class BadInput(ValueError):
    """An argument the user gave is wrong; the message names it."""


def open_given(path: Path) -> tuple[int, os.stat_result]:
    """A descriptor of the folder or regular file `path` names, and its stat; BadInput where the path is, or passes
    through, a symbolic link, does not exist, or names something else (a FIFO, a device).

    Only the components the user chose are looked at: for a relative path, or an absolute one below the working
    folder (as the system or the shell's $PWD names it), those below the working folder, however the user reached
    it; for another absolute path every component but a link directly in `/`, which only the administrator can
    make (macOS's /tmp and /var, /bin on merged-/usr systems).
    """
    working = [Path(w) for w in (os.getcwd(), os.environ.get("PWD")) if w and os.path.isabs(w)]
    working = [w for w in working if _same_folder(w, Path("."))]
    base = next((w for w in working if path.is_absolute() and path.parts[:len(w.parts)] == w.parts), None)
    if not path.is_absolute():
        parts, current = path.parts, os.open(".", FOLDER)
    elif base is not None:
        parts, current = path.parts[len(base.parts):], os.open(".", FOLDER)
    else:
        parts, current = path.parts[1:], os.open(path.anchor, FOLDER)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            system_alias = i == 0 and path.is_absolute() and base is None  # a link directly in /
            shown = Path(*path.parts[:len(path.parts) - len(parts) + i + 1])
            opened = _open_component(current, part, last, system_alias, path, shown)
            os.close(current)
            current = opened
        return current, os.fstat(current)
    except BaseException:
        os.close(current)
        raise


def _open_component(folder: int, part: str, last: bool, follow: bool, path: Path, shown: Path) -> int:
    """`part` of the folder open at `folder`: a folder, or (the last component) a folder or regular file."""
    try:
        if last and part not in (".", ".."):
            info = os.stat(part, dir_fd=folder, follow_symlinks=follow)
            if stat.S_ISREG(info.st_mode):
                return os.open(part, FILE, dir_fd=folder)
            if not stat.S_ISDIR(info.st_mode) and not stat.S_ISLNK(info.st_mode):
                raise BadInput(tr("submission {path} is not a folder (pass the folder that holds sampling.py etc.)",
                                  path=repr(str(path))))
        return os.open(part, FOLDER | (0 if follow or part in (".", "..") else NO_LINK), dir_fd=folder)
    except OSError as exc:
        target = link_target(folder, part)
        if target is not None:
            said = dict(path=repr(str(path)), link=repr(str(shown)), target=repr(target))
            raise BadInput(tr("submission {path} is a symbolic link (to {target}): the grader grades only a real "
                              "folder or notebook, never what a link points to; pass the folder itself", **said) if last
                           else tr("submission {path} passes through the symbolic link {link} (to {target}): the "
                                   "grader grades only a real folder or notebook, never what a link points to; pass "
                                   "the folder itself", **said)) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise BadInput(tr("submission folder {path} does not exist (run from the folder that holds it, or pass "
                              "--submission DIR)", path=repr(str(path)))) from None
        raise BadInput(tr("submission {path} cannot be opened: {reason}", path=repr(str(path)),
                          reason=exc.strerror)) from None


def open_below(top: int, relative: Path) -> int:
    """A descriptor of the folder `relative` below the folder open at `top`, opened without following a link."""
    current = os.dup(top)
    try:
        for part in relative.parts:
            opened = os.open(part, FOLDER | NO_LINK, dir_fd=current)
            os.close(current)
            current = opened
        return current
    except BaseException:
        os.close(current)
        raise


def link_target(folder: int, name: str) -> str | None:
    """Where the entry `name` of the folder open at `folder` points, or None when it is not a symbolic link."""
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:
        return None


def path_of(fd: int, named: Path) -> Path:
    """The absolute path of the folder open at `fd` as it was reached (the system's own where it tells it: Linux's
    /proc), for messages and the results; never used to reach the folder again."""
    try:
        found = os.readlink(f"/proc/self/fd/{fd}")
        if os.path.isabs(found) and os.path.samestat(os.stat(found), os.fstat(fd)):
            return Path(found)
    except OSError:
        pass
    return Path(os.path.realpath(named))


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
