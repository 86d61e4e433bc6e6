"""Writing a results file to where the user said: whole into a regular file, as it is into anything else.

A regular file (or a path that does not exist yet) is written to a temporary file beside it and renamed into
place, so that a reader never sees half a document. Anything else, a character device such as /dev/null or a
FIFO, is opened for writing and written into: renaming over it would replace the device node with a file (as
root, `--out /dev/null` would destroy the machine's /dev/null), and so is a link to a regular file (`/dev/stdout`
with the output redirected: renamed over, the link in /dev became a file). Never a disk or a socket. A FIFO is
waited for a reader FIFO_WAIT_S at most: the run's SIGTERM and Ctrl-C are only recorded by then, so an open that
waits for ever could not be ended. `-` is the standard output.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
import time
from pathlib import Path

FIFO_WAIT_S = 10.0


def write_text(text: str, out: Path) -> None:
    """Write `text` to `out`: `-` for standard output, into a device or FIFO, or whole into a regular file."""
    if str(out) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        own, kind = os.lstat(out).st_mode, os.stat(out).st_mode
    except FileNotFoundError:  # missing, or a link to nothing (replaced by the file)
        own = kind = None
    if own is None or stat.S_ISREG(own):
        _replace_whole(text, out)
    elif stat.S_ISCHR(kind) or stat.S_ISFIFO(kind) or stat.S_ISREG(kind):
        # a device, a FIFO, or a link (/dev/stdout to a file the shell redirected to): never renamed over
        _write_into(text, out, truncate=stat.S_ISREG(kind))
    else:
        raise OSError(errno.EINVAL, "results are written only to a regular file, a character device or a FIFO, "
                                    "never a disk (block device), a socket or a folder", str(out))


def _write_into(text: str, out: Path, truncate: bool = False) -> None:
    """Write into what `out` names without creating or replacing it (a device, a FIFO, a link's regular file,
    which is truncated first)."""
    with open(_open_once_read(out, os.O_TRUNC if truncate else 0), "w", encoding="utf-8") as f:
        f.write(text)


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


def _replace_whole(text: str, out: Path) -> None:
    """A new file beside `out` (mode 0666 less the umask, as any new file here), renamed over it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.{secrets.token_hex(8)}"
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666), "w",
                  encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
