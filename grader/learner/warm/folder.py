"""The warm grader's folder: its socket, lock and log, in a folder only its user can enter, checked at every use.

The folder is $XDG_RUNTIME_DIR/infergrade where the session has a runtime folder, else /tmp/infergrade-UID. It must
be a real folder (not a link), owned by this user, with no permission for anyone else: only this user (and root)
can then put a socket in it, or reach one there. Each use opens it without following a link, compares what was
opened with what the name holds (fstat against lstat), and reaches the socket through the opened descriptor
(/proc/self/fd/N/socket), so that a folder swapped after the check is never the one used.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

SOCKET = "socket"
LOCK = "lock"  # held by the one warm grader of this user while it runs
LOG = "log"  # the warm grader's own messages (its start, each run, why it stopped)
FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Unsafe(OSError):
    """The folder (or what is in it) is not this user's alone: the warm grader is not used."""


def path() -> Path:
    """Where this user's warm grader lives."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        return Path(runtime) / "infergrade"
    return Path("/tmp") / f"infergrade-{os.geteuid()}"


def opened(create: bool = False) -> int:
    """A descriptor of the folder, checked (`checked`); with `create`, made first where it does not exist.
    FileNotFoundError where there is none; Unsafe where it is not this user's alone."""
    where, made = path(), False
    if create:
        try:
            os.mkdir(where, 0o700)
            made = True
        except FileExistsError:
            pass
    try:
        fd = os.open(where, FOLDER)
    except OSError as exc:
        if os.path.islink(where):
            raise Unsafe(f"{where} is a symbolic link, not a folder: remove it") from None
        raise exc
    try:
        if made and os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, 0o700)  # what the umask took away
        checked(fd, where)
    except BaseException:
        os.close(fd)
        raise
    return fd


def checked(fd: int, where: Path) -> None:
    """Unsafe unless the folder open at `fd` is a folder that `where` still names, owned by this user, that no one
    else may enter, list or write."""
    held, named = os.fstat(fd), os.lstat(where)
    if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
        raise Unsafe(f"{where} changed while it was opened")
    if not stat.S_ISDIR(held.st_mode):
        raise Unsafe(f"{where} is not a folder")
    if held.st_uid != os.geteuid():
        raise Unsafe(f"{where} belongs to uid {held.st_uid}, not to you (uid {os.geteuid()}): remove it")
    if stat.S_IMODE(held.st_mode) & 0o077:
        raise Unsafe(f"{where} lets other users in (mode {stat.S_IMODE(held.st_mode):o}): `chmod 700 {where}`")


def socket_address(fd: int) -> str:
    """The socket's address through the opened folder, never through its name."""
    return f"/proc/self/fd/{fd}/{SOCKET}"


def socket_checked(fd: int) -> None:
    """Unsafe unless the folder open at `fd` holds a socket of this user's (FileNotFoundError where none)."""
    info = os.stat(SOCKET, dir_fd=fd, follow_symlinks=False)
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.geteuid():
        raise Unsafe(f"{path() / SOCKET} is not a socket of yours")


def open_file(fd: int, name: str, flags: int) -> int:
    """`name` in the folder open at `fd`, opened (created 0600 where `flags` say) without following a link."""
    return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
