"""What a student or instructor sees, through real grader processes: signals, a missing extra, prints, a syntax
error, a nested upload. Nothing here runs the CLI in-process: each case is a `python -m grader` of its own."""
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from grader.results import problems
from grader.instructor.selftest import SOLUTIONS_DIR

SAMPLING = (SOLUTIONS_DIR / "sampling.py").read_text()
KV = (SOLUTIONS_DIR / "kv_cache.py").read_text()
MARKER = "infergrade-test-hangs-now"
HANGING_GREEDY = SAMPLING + f'''

def greedy(logits):
    print("{MARKER}", flush=True)
    while True:
        pass
'''
HIDE_TRITON = '''
import importlib.abc, sys
class NoTriton(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "triton" or name.startswith("triton."):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, NoTriton())
from grader.cli import main
main()
'''


def folder_with(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    folder = tmp_path / name
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def grader_process(tmp_path: Path, *args, hide_triton: bool = False) -> subprocess.Popen:
    """A grader in its own session (a process group to signal), with its temp files under tmp_path."""
    head = [sys.executable, "-c", HIDE_TRITON] if hide_triton else [sys.executable, "-m", "grader"]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.Popen([*head, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=tmp_path, start_new_session=True)


def run_grader(tmp_path: Path, *args, hide_triton: bool = False, timeout: float = 300) -> tuple[int, str]:
    proc = grader_process(tmp_path, *args, hide_triton=hide_triton)
    output, _ = proc.communicate(timeout=timeout)
    return proc.returncode, output


def wait_for_hang(tmp_path: Path, proc: subprocess.Popen, limit: float = 120) -> None:
    """Until some check's child has printed MARKER: the grader is then inside a hanging call."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[0]
        for out in tmp_path.glob("infergrade-child-*/output.txt"):
            try:
                if MARKER in out.read_text():
                    return
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError("the hanging check never started")


def processes_with(text: str) -> list[int]:
    """Live processes whose command line contains `text` (forked children keep their parent's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def assert_nothing_left(marker: str) -> None:
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []


needs_proc = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")


@needs_proc
@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_hanging_check_is_an_interrupted_run(tmp_path, signum, code):
    sub = folder_with(tmp_path, "sub", {"sampling.py": HANGING_GREEDY})
    out = tmp_path / f"results-{uuid.uuid4().hex}.json"
    proc = grader_process(tmp_path, "grade", "--hidden", "--topic", "sampling", "--submission", sub, "--seed", 3,
                          "--out", out)
    wait_for_hang(tmp_path, proc)
    os.killpg(proc.pid, signum)  # the whole process group, as a terminal's Ctrl-C or a CI runner's stop does
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == code, output
    doc = json.loads(out.read_text())
    assert problems(doc) == [] and doc["status"] == "interrupted" and signal.Signals(signum).name in doc["error"]
    checks = doc["topics"][0]["checks"]
    unfinished = [c for c in checks if c["status"] == "interrupted"]
    assert unfinished and all(c["score"] == 0 and c["max_score"] == c["points"] for c in unfinished)
    assert doc["max_score"] == sum(c["points"] for c in checks) > doc["score"]
    assert "sampling.greedy_lowest_index_on_ties" in {c["id"] for c in unfinished}
    assert "did not finish" in output
    assert_nothing_left(out.name)


@needs_proc
def test_ctrl_c_during_check_is_never_a_pass(tmp_path):
    sub = folder_with(tmp_path, "sub", {"sampling.py": HANGING_GREEDY})
    out = tmp_path / f"check-{uuid.uuid4().hex}.json"
    proc = grader_process(tmp_path, "check", "sampling", "--submission", sub, "--out", out)
    wait_for_hang(tmp_path, proc)
    os.killpg(proc.pid, signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    doc = json.loads(out.read_text())
    assert proc.returncode == 130 and doc["status"] == "interrupted" and doc["score"] < doc["max_score"]
    assert "SKIP" not in output and "interrupted" in output
    assert_nothing_left(out.name)


@needs_proc
def test_ctrl_c_during_selftest_stops_it(tmp_path):
    proc = grader_process(tmp_path, "selftest", "--topic", "speculative")
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("infergrade-child-*")) and time.monotonic() < deadline:
        assert proc.poll() is None
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        output, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # the grader hangs: leave no process behind, and say what it printed
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the selftest did not stop within 60 s of Ctrl-C:\n{proc.communicate()[0][-3000:]}")
    assert proc.returncode == 130 and "interrupted" in output and "selftest passed" not in output


@needs_proc
def test_without_triton_the_kernel_checks_are_skipped_but_keep_their_points(tmp_path):
    out = tmp_path / "public.json"
    code, output = run_grader(tmp_path, "check", "flash_attention", "--submission", SOLUTIONS_DIR, "--out", out,
                              hide_triton=True)
    doc = json.loads(out.read_text())
    skipped = [c for c in doc["topics"][0]["checks"] if c["status"] == "skipped"]
    assert code == 1 and skipped and all("needs triton" in c["message"] for c in skipped)
    assert "infergrade[gpu]" in output and "not a full grade" in output
    assert doc["max_score"] == doc["score"] + sum(c["points"] for c in skipped)
    assert doc["topics"][0]["status"] == "incomplete" and "needs triton" in doc["incomplete"]

    hidden = tmp_path / "hidden.json"
    code, _ = run_grader(tmp_path, "grade", "--hidden", "--topic", "flash_attention", "--submission", SOLUTIONS_DIR,
                         "--seed", 1, "--out", hidden, hide_triton=True)
    doc = json.loads(hidden.read_text())
    assert code == 1 and doc["status"] == "completed" and "needs triton" in doc["incomplete"]
    assert doc["max_score"] > doc["score"]
    code, _ = run_grader(tmp_path, "grade", "--hidden", "--topic", "flash_attention", "--submission", SOLUTIONS_DIR,
                         "--seed", 1, "--out", hidden, "--allow-skipped", hide_triton=True)
    assert code == 0 and json.loads(hidden.read_text())["incomplete"]


PRINTING_GREEDY = SAMPLING + '''

def greedy(logits):
    for i in range(30):
        print(f"debug line {i}")
    print("greedy saw", list(logits.shape), "\\x1b[2J")
    return logits.argmax(-1) + 1
'''


@needs_proc
def test_a_failed_public_check_shows_what_the_code_printed_and_a_hidden_one_never(tmp_path):
    sub = folder_with(tmp_path, "sub", {"sampling.py": PRINTING_GREEDY})
    out = tmp_path / "r.json"
    code, output = run_grader(tmp_path, "grade", "--hidden", "--topic", "sampling", "--submission", sub,
                              "--seed", 2, "--out", out)
    assert code == 0
    assert "your code printed" in output and "greedy saw [4]" in output and "\x1b[2J" not in output
    assert "debug line 29" in output and "debug line 9" not in output  # the last lines only
    checks = {c["id"]: c for c in json.loads(out.read_text())["topics"][0]["checks"]}
    public = checks["sampling.greedy_lowest_index_on_ties"]
    assert public["status"] == "failed" and public["output"].endswith("greedy saw [4] \ufffd[2J")
    assert len(public["output"].splitlines()) == 20
    hidden = [c for c in checks.values() if c["visibility"] == "hidden" and c["status"] != "passed"]
    assert hidden and all("output" not in c and "debug" not in c["message"] for c in hidden)


@needs_proc
def test_a_syntax_error_is_one_topic_error_with_line_and_caret(tmp_path):
    sub = folder_with(tmp_path, "sub", {"kv_cache.py": KV + "\n\ndef broken(config:\n    return 1\n",
                                        "sampling.py": SAMPLING})
    out = tmp_path / "r.json"
    code, output = run_grader(tmp_path, "check", "kv_cache", "sampling", "--submission", sub, "--out", out)
    line = len(KV.splitlines()) + 3
    assert code == 1 and output.count("SyntaxError") == 1
    assert f"kv_cache.py, line {line}" in output and "def broken(config:" in output
    lines = output.splitlines()
    source = next(i for i, text in enumerate(lines) if "def broken(config:" in text)
    assert lines[source + 1].strip() == "^"
    doc = json.loads(out.read_text())
    kv, sampling = doc["topics"]
    assert kv["status"] == "error" and "SyntaxError" in kv["message"] and kv["score"] == 0 < kv["max_score"]
    assert all(c["status"] == "error" and "SyntaxError" not in c["message"] for c in kv["checks"])
    assert sampling["status"] == "passed"


@needs_proc
def test_a_nested_upload_is_found_and_said(tmp_path):
    upload = folder_with(tmp_path, "upload", {"exercises/kv_cache.py": KV, "README.txt": "my work"})
    code, output = run_grader(tmp_path, "check", "kv_cache", "--submission", upload)
    assert code == 0 and str(upload / "exercises") in output and "holds no topic module" in output


@needs_proc
def test_an_upload_without_modules_says_where_it_looked(tmp_path):
    upload = folder_with(tmp_path, "upload", {"notes/readme.txt": "nothing here"})
    code, output = run_grader(tmp_path, "check", "--submission", upload)
    assert code == 2 and "no topic module" in output and "kv_cache.py" in output and str(upload) in output


@needs_proc
def test_a_signal_while_the_grader_starts_is_an_interrupted_run(tmp_path):
    out = tmp_path / f"early-{uuid.uuid4().hex}.json"
    proc = grader_process(tmp_path, "grade", "--topic", "sampling", "--submission", SOLUTIONS_DIR, "--out", out)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # SIGTERM is caught once the command line records signals (bit 15 - 1)
        with open(f"/proc/{proc.pid}/status") as f:
            caught = int(next(line for line in f if line.startswith("SigCgt:")).split()[1], 16)
        if caught & (1 << (signal.SIGTERM - 1)):
            break
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGTERM)          # typically while torch is still being imported
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 143, output
    doc = json.loads(out.read_text())
    assert problems(doc) == [] and doc["status"] == "interrupted" and "SIGTERM" in doc["error"]
    assert doc["score"] == 0                    # nothing was graded: never a silent pass


def test_pytest_options_from_the_environment_do_not_change_what_is_graded(tmp_path):
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTEST_ADDOPTS": "-k no_such_check -p no:infergrade"}
    subprocess.run([sys.executable, "-m", "grader", "check", "kv_cache", "--submission", SOLUTIONS_DIR, "--out",
                    out], env=env, cwd=tmp_path, capture_output=True, timeout=300)
    doc = json.loads(out.read_text())
    assert doc["topics"][0]["checks"] and doc["score"] == doc["max_score"] > 0
