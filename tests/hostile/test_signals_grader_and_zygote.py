"""Hostile submission: signals every process it can see (the grader, the zygote) and leaves a daemon behind."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from grader.results import problems
from grader.sandbox.policy import REPO

ATTACK = r'''

import os as _os, signal as _sig

def _attack():
    for s in (_sig.SIGINT, _sig.SIGTERM):
        pids = [-1, 1, _os.getppid()] + [int(p) for p in _os.listdir("/proc") if p.isdigit()]
        for target in pids:
            if target in (0, _os.getpid()):
                continue
            try:
                _os.kill(target, s)
            except Exception:
                pass
    if _os.fork() == 0:
        try:
            _os.setsid()
            if _os.fork() == 0:
                _os.execv("/bin/sleep", ["sleep", "{marker}"])
        finally:
            _os._exit(0)

_attack()
_greedy = greedy

def greedy(logits):
    _attack()
    return _greedy(logits)
'''


def _lingering(marker: str) -> list[int]:
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            argv = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", marker.encode()]:
            found.append(int(p.name))
    return found


def test_signals_from_the_submission_do_not_interrupt_and_nothing_outlives_the_grader(tmp_path):
    marker = f"{os.getpid() % 1000}.{time.time_ns() % 10**6:06d}"
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text((REPO / "solutions" / "sampling.py").read_text()
                                        + ATTACK.replace("{marker}", marker))
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--hidden", "--topic", "sampling",
                           "--submission", str(folder), "--seed", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    doc = json.loads(out.read_text())
    assert problems(doc) == []
    assert doc["status"] == "completed", (doc["status"], doc["error"], proc.stderr[-2000:])
    assert doc["error"] is None
    assert proc.returncode == 0, proc.stderr[-2000:]
    time.sleep(0.5)
    left = _lingering(marker)
    for pid in left:  # clean up what this test started before failing
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert left == []
