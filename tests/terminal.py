"""The student's screens as a real terminal shows them: `python -m grader ARGS` in a pseudo-terminal of a given
width, what it wrote read back with its colours removed (the tests of `check`, `progress`, `watch`)."""
import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

from grader.sandbox.policy import REPO

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_terminal(args: list[str], until: str | None = None, timeout: float = 240, columns: int = 100) -> str:
    """What `python -m grader ARGS` shows in a pseudo-terminal `columns` wide (colours removed); with `until`,
    Ctrl-C is typed once the screen shows it (watch runs until then)."""
    main, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}  # the terminal's own size counts
    proc = subprocess.Popen([sys.executable, "-m", "grader", *args], stdin=terminal, stdout=terminal, stderr=terminal,
                            start_new_session=True, cwd=REPO, env=env)
    os.close(terminal)
    shown = bytearray()
    reader = threading.Thread(target=lambda: [shown.extend(chunk) for chunk in iter(lambda: _read(main), b"")],
                              daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + timeout
        while until is not None and proc.poll() is None and time.monotonic() < deadline:
            if until in ANSI.sub("", bytes(shown).decode("utf-8", "replace")):
                os.killpg(proc.pid, signal.SIGINT)
                break
            time.sleep(0.2)
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        reader.join(5)
        os.close(main)
    return ANSI.sub("", bytes(shown).decode("utf-8", "replace")).replace("\r\n", "\n")


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""
