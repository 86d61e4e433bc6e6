"""Ctrl-C stops a test suite that imports the grader: the grader's SIGINT/SIGTERM handlers belong to the
`infergrade` command line only (`interrupt.record_early`), never to a program that imports it. The autouse
fixture in conftest.py checks that no test leaves them behind."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WAITING = '''
import time

import grader.cli  # noqa: F401  (as tests/test_cli.py imports it)


def test_waits():
    print("waiting", flush=True)
    time.sleep(300)
'''


def test_ctrl_c_stops_a_suite_that_imports_the_command_line(tmp_path):
    (tmp_path / "test_wait.py").write_text(WAITING)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # a pytest-xdist worker ignores SIGINT, and an ignored signal stays ignored across exec: give the suite Ctrl-C
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_wait.py"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in proc.stdout:  # the test is running once it says so
            if "waiting" in line:
                break
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        code = proc.wait(timeout=60)
        assert code == 2 and time.monotonic() - started < 60  # pytest's "interrupted"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
