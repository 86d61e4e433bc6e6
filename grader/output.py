"""Writing a file where the user said, and never where a link leads: the one writer of every file the grader writes
(results and exports, notebooks, reports, grades.csv, the progress file).

- `-`, and the names of the grader's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), are
  written to that descriptor as the shell opened it: `--out /dev/stdout > log` (or `>> log`) puts the results in
  log at its offset and in its mode, and nothing is reopened, truncated or replaced. The user named their own
  output; that it is a link to a regular file (/proc/self/fd/1 -> log) is the shell's doing, not a student's.
- Any other link, whatever it leads to, is replaced: a new file is written beside it and renamed over the link,
  whose target is never opened. A student's repository may hold a committed `results.json -> ../gradebook.csv`
  (or, for a root grader, `-> /dev/port`, a character device); an instructor's `grade --hidden` run inside it
  wrote into the target. A link under /dev, /proc or /sys is refused instead: renamed over, a system name would
  become a file.
- A missing path or a regular file: a new file renamed into place, so that a reader never sees half a document
  (and a hard link's other names keep what they held).
- A character device or a FIFO the user named is written into, never replaced (as root, `--out /dev/null` would
  turn the machine's /dev/null into a file). A FIFO is waited for a reader FIFO_WAIT_S at most: the run's SIGTERM
  and Ctrl-C are only recorded by then, so an open that waits for ever could not be ended. A file the grader names
  itself (`named=False`: the progress file, the default results.json) replaces a FIFO or device instead: no
  student chooses what the grader writes into.
- A block device (a disk), a socket or a folder is refused.
"""
from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import sys
import time
from pathlib import Path

FIFO_WAIT_S = 10.0
SYSTEM_FOLDERS = ("/dev/", "/proc/", "/sys/")


def write_text(text: str, out: Path, named: bool = True) -> None:
    """Write `text` (UTF-8) to `out` as the module says; `named`: the user chose `out` (not the grader's default)."""
    fd = descriptor(out)
    if fd in (1, 2):  # through the stream, which holds what was printed before (and may be a test's runner)
        stream = sys.stdout if fd == 1 else sys.stderr
        stream.write(text)
        stream.flush()
        return
    write_bytes(text.encode("utf-8"), out, named)


def write_bytes(data: bytes, out: Path, named: bool = True) -> None:
    """Write `data` to `out` as the module says; `named`: the user chose `out` (not the grader's default)."""
    fd = descriptor(out)
    if fd is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        _write_all(fd, data)
        return
    try:
        own = os.lstat(out).st_mode
    except FileNotFoundError:
        own = None
    if own is not None and stat.S_ISLNK(own) and os.path.abspath(out).startswith(SYSTEM_FOLDERS):
        raise OSError(errno.EINVAL, "a link in a system folder is never written through or replaced (name the "
                                    "device itself, or /dev/stdout for standard output)", str(out))
    if own is None or stat.S_ISREG(own) or stat.S_ISLNK(own) or (not named and not stat.S_ISDIR(own)):
        _replace_whole(data, out)
    elif stat.S_ISCHR(own) or stat.S_ISFIFO(own):
        _write_into(data, out)
    else:
        raise OSError(errno.EINVAL, "results are written only to a regular file, a character device or a FIFO, "
                                    "never a disk (block device), a socket or a folder", str(out))


def descriptor(out: Path) -> int | None:
    """The descriptor `out` names: 1 for `-` and /dev/stdout, 2 for /dev/stderr, N for /dev/fd/N and
    /proc/self/fd/N (this process's own, by its number too); None for any other path, read as written (a folder
    named `dev` elsewhere is not /dev)."""
    if str(out) == "-":
        return 1
    path = os.path.abspath(out)
    named = {"/dev/stdout": 1, "/dev/stderr": 2}.get(path)
    if named is not None:
        return named
    found = re.fullmatch(rf"/dev/fd/(\d+)|/proc/(?:self|thread-self|{os.getpid()})/fd/(\d+)", path)
    return int(found.group(1) or found.group(2)) if found else None


def _write_all(fd: int, data: bytes) -> None:
    """`data` on the open descriptor `fd`, at its offset and in its mode, however many writes it takes."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_into(data: bytes, out: Path) -> None:
    """Write into the device or FIFO `out` names, without creating or replacing it; OSError if something else took
    its place since it was looked at (a link is not followed)."""
    fd = _open_once_read(out, os.O_NOFOLLOW)
    try:
        kind = os.fstat(fd).st_mode
        if not (stat.S_ISCHR(kind) or stat.S_ISFIFO(kind)):
            raise OSError(errno.EINVAL, "it changed while it was opened (no longer a device or FIFO)", str(out))
        _write_all(fd, data)
    finally:
        os.close(fd)


def _open_once_read(out: Path, flags: int = 0) -> int:
    """A blocking write descriptor of `out`; for a FIFO, once some process has it open for reading (ENXIO until
    then), or OSError after FIFO_WAIT_S."""
    deadline = time.monotonic() + FIFO_WAIT_S
    while True:
        try:
            fd = os.open(out, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | flags)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if time.monotonic() > deadline:
                raise OSError(errno.ENXIO, f"no process opened it to read the results within {FIFO_WAIT_S:g} s "
                                           f"(start the reader first)", str(out)) from None
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def _replace_whole(data: bytes, out: Path) -> None:
    """A new file beside `out` (mode 0666 less the umask, as any new file here), renamed over it: over a link, the
    link itself is replaced."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.{secrets.token_hex(8)}"
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666), "wb") as f:
            f.write(data)
        os.replace(tmp, out)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
