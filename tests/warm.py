"""A warm grader for the tests (`infergrade serve` in a runtime folder of the test's own, never the user's), and
`check` run as a real command line, cold or handed to it (tests/test_warm_check.py, tests/hostile/test_warm_*)."""
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader.instructor.selftest import EXERCISES_DIR, MUTANTS_DIR, SOLUTIONS_DIR, mutant_submission
from grader.sandbox.policy import REPO

RUN_S = 600  # a cold check on a loaded 2-core machine (two imports of torch, 18 sandboxed checks) takes a minute


def private_checkout(into: Path) -> Path:
    """A copy of the grader, the stubs and the reference, from which `python -m grader` runs (the checkout's own
    grader changes under the tests while others work in it: a warm grader would rightly call itself stale)."""
    for package in ("grader", "exercises", "reference"):
        shutil.copytree(REPO / package, into / package, ignore=shutil.ignore_patterns("__pycache__"))
    into.chmod(0o755)
    return into


def submissions(tmp: Path) -> dict[str, Path]:
    """A passing, a failing (a known misconception) and a not-started submission of sampling, readable by anyone
    (a root grader's checks run as nobody)."""
    made = {"passing": tmp / "passing", "failing": tmp / "failing", "not started": tmp / "stubs"}
    made["passing"].mkdir()
    (made["passing"] / "sampling.py").write_text((SOLUTIONS_DIR / "sampling.py").read_text())
    mutant_submission("sampling", MUTANTS_DIR / "sampling" / "top_p_drops_crossing_token.py", made["failing"])
    made["not started"].mkdir()
    (made["not started"] / "sampling.py").write_text((EXERCISES_DIR / "sampling.py").read_text())
    for folder in [tmp, *made.values()]:
        folder.chmod(0o755)
    return made


class Warm:
    """This test's warm grader: its folder is `runtime`/infergrade, and every command here runs the grader in `cwd`
    (a private checkout) with XDG_RUNTIME_DIR=`runtime` (plus `extra` variables)."""

    def __init__(self, runtime: Path, cwd: Path, extra: dict | None = None, python: str = sys.executable):
        runtime.mkdir(mode=0o700, exist_ok=True)
        runtime.chmod(0o700)
        self.folder, self.cwd, self.python = runtime / "infergrade", cwd, python
        self.env = {k: v for k, v in os.environ.items() if k != "INFERGRADE_WARM"}
        self.env.update({"XDG_RUNTIME_DIR": str(runtime), **(extra or {})})

    def command(self, *args: str, cold: bool = False, **kwargs) -> subprocess.CompletedProcess:
        env = {**self.env, "INFERGRADE_WARM": "0"} if cold else self.env
        return subprocess.run([self.python, "-m", "grader", *args], cwd=self.cwd, env=env, capture_output=True,
                              timeout=RUN_S, **kwargs)

    def start(self) -> int:
        """Start it (`infergrade serve`) and wait until it serves; its pid."""
        done = self.command("serve")
        assert done.returncode == 0, done.stderr.decode() + self.log()
        return int(re.search(rb"\(pid (\d+)\)", done.stdout).group(1))

    def stop(self) -> None:
        done = self.command("serve", "--stop")
        assert done.returncode == 0, done.stderr.decode()

    def check(self, *args: str, cold: bool = False) -> tuple[int, bytes, bytes]:
        done = self.command("check", *args, cold=cold)
        return done.returncode, done.stdout, done.stderr

    def popen(self, *args: str) -> subprocess.Popen:
        """`check ARGS` started, its Ctrl-C its own (a pytest-xdist worker ignores SIGINT, and so would it)."""
        return subprocess.Popen([self.python, "-m", "grader", "check", *args], cwd=self.cwd, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def log(self) -> str:
        try:
            return (self.folder / "log").read_text()
        except OSError:
            return ""

    def runs(self) -> list[str]:
        """The log's line of each run it served, in order."""
        return [line for line in self.log().splitlines() if "] ran `" in line]

    def wait_for_log(self, text: str, timeout: float = RUN_S) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.log():
            assert time.monotonic() < deadline, f"{text!r} never logged:\n{self.log()}"
            time.sleep(0.1)


def in_a_terminal(warm: Warm, *args: str, cold: bool = False) -> tuple[int, bytes]:
    """`check ARGS` with its standard output and error a pseudo-terminal (colours on): exit code and raw bytes."""
    main, terminal = pty.openpty()
    env = {**warm.env, "INFERGRADE_WARM": "0"} if cold else warm.env
    proc = subprocess.Popen([warm.python, "-m", "grader", "check", *args], cwd=warm.cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, start_new_session=True)
    os.close(terminal)
    shown = bytearray()
    while chunk := _read(main):
        shown += chunk
    os.close(main)
    return proc.wait(timeout=RUN_S), bytes(shown)


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO once every holder of the terminal has closed it
        return b""


def processes_of(pid: int) -> list[int]:
    """`pid` and every process below it."""
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        found.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
