"""`infergrade watch` as a real process on a temp folder: a save re-checks, the screen says what is next, Ctrl-C
exits cleanly; and which functions a save affects."""
import ast
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from grader.instructor.selftest import EXERCISES_DIR, SOLUTIONS_DIR
from grader.learner.watch import affected, units_source

WAIT_S = 240  # a loaded 2-core machine


def _line(proc, words: str, deadline: float) -> str:
    """The next stderr line of `proc` holding `words` (each status line ends a screen)."""
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            pytest.fail(f"watch ended early (exit {proc.poll()})")
        if words in line:
            return line
    pytest.fail(f"no line with {words!r} in time")


def _bugged(source: str, function: str) -> str:
    """`source` with `function` returning its input unchanged (a wrong answer, not a crash)."""
    node = next(n for n in ast.parse(source).body if getattr(n, "name", None) == function)
    lines = source.splitlines()
    first = node.body[0]
    lines.insert(first.lineno - 1, " " * first.col_offset + f"return {node.args.args[0].arg}")
    return "\n".join(lines) + "\n"


def test_watch_rechecks_a_saved_file_and_stops_on_ctrl_c(open_folder):
    path = open_folder / "kv_cache.py"
    shutil.copy(EXERCISES_DIR / "kv_cache.py", path)
    proc = subprocess.Popen([sys.executable, "-m", "grader", "watch", "kv_cache", "--submission", str(open_folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "100"})
    deadline = time.monotonic() + WAIT_S
    try:
        _line(proc, "checked", deadline)
        solution = (SOLUTIONS_DIR / "kv_cache.py").read_text()
        path.write_text(solution)  # the module changes as a whole: every check re-runs
        _line(proc, "re-checked", deadline)
        path.write_text(_bugged(solution, "kv_cache_bytes"))  # one function: its checks first
        _line(proc, "confirming", deadline)
        _line(proc, "then the other", deadline)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    last = out.rsplit("infergrade watch", 1)[-1]
    assert "failing" in last and "infergrade hint kv_cache." in last  # the first failure and its hint command
    assert "Traceback" not in err


def test_a_save_affects_the_changed_function_and_its_callers(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\n\ndef a(x):\n    return x\n\ndef b(x):\n    return a(x)\n\ndef c(x):\n"
                    "    return x\n")
    before = units_source(path)
    path.write_text(path.read_text().replace("return x\n\ndef b", "return x + 1\n\ndef b"))
    assert affected(before, units_source(path)) == {"a", "b"}
    path.write_text("import math\n" + path.read_text())
    assert affected(before, units_source(path)) is None  # module code changed: everything re-runs
    path.write_text("def a(:\n")
    assert affected(before, units_source(path)) is None
