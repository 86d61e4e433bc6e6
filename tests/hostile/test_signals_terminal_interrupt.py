"""Sandbox v4, red team: a submission cannot type Ctrl-C into the terminal the grader runs in.

`infergrade grade` runs with a pseudo-terminal as its controlling terminal and standard streams. The submission
pushes ^C into every terminal it can name (TIOCSTI: the kernel's line discipline would turn it into SIGINT for
the grader's foreground group, an "interrupted" run) through its descriptors 0-2, /dev/tty and /dev/pts. The
run must complete with its scores and a valid results file.
"""
import fcntl
import json
import os
import pty
import subprocess
import sys
import termios
import threading

import pytest

from grader.results import problems
from grader.sandbox.policy import REPO

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

TYPE_CTRL_C = '''

import fcntl as _fcntl
import glob as _glob
import os as _os
import termios as _termios

_greedy = greedy


def greedy(logits):
    for target in [0, 1, 2, "/dev/tty", *_glob.glob("/dev/pts/*")]:
        try:
            fd = target if isinstance(target, int) else _os.open(target, _os.O_RDWR | _os.O_NOCTTY)
            _fcntl.ioctl(fd, _termios.TIOCSTI, b"\\x03")
        except OSError:
            pass
    return _greedy(logits)
'''


@linux_only
def test_a_ctrl_c_typed_by_the_submission_does_not_interrupt_the_run(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text((REPO / "solutions" / "sampling.py").read_text() + TYPE_CTRL_C)
    out = tmp_path / "results.json"
    main, terminal = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "grader", "grade", "--submission", str(folder), "--topic",
                             "sampling", "--out", str(out)], cwd=REPO, stdin=terminal, stdout=terminal,
                            stderr=terminal, start_new_session=True,
                            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))  # the grader's own terminal
    os.close(terminal)
    shown = []
    reader = threading.Thread(target=lambda: shown.extend(iter(lambda: _read(main), b"")), daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=120)
    finally:
        proc.kill()
        reader.join(5)
        os.close(main)
    doc = json.loads(out.read_text())
    assert code == 0, b"".join(shown)[-2000:]
    assert problems(doc) == [] and doc["status"] == "completed"
    assert doc["score"] == doc["max_score"]                             # the attack changed nothing


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""                                                      # the terminal closed with the grader
