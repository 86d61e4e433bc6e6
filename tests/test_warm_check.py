"""`check` handed to a warm grader (`infergrade serve`) says, writes and exits exactly as a cold `check`; Ctrl-C is
forwarded to its run; only public checks are served; it ends, with everything it started, on SIGTERM and when idle.
The attacks on it are in tests/hostile/test_warm_*.py."""
import json
import os
import signal
import socket
import stat
import subprocess
import time

import pytest

from grader.learner.warm import wire
from tests.documents import without
from warm import RUN_S, Warm, alive, in_a_terminal, private_checkout, processes_of, submissions

TIMED = ("started_at", "duration_s", "at")  # when it ran and how long it took: all else must be equal


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    return private_checkout(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="module")
def warm(tmp_path_factory, checkout):
    grader = Warm(tmp_path_factory.mktemp("runtime"), checkout)
    grader.start()
    yield grader
    grader.stop()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return submissions(tmp_path_factory.mktemp("submissions"))


def run_and_keep(warm: Warm, submission, out, cold: bool):
    """`check sampling` of `submission` with --out: its exit code, output, error, results and progress record (the
    record is then removed, so that the next run starts from the same folder)."""
    done = warm.command("check", "sampling", "--submission", str(submission), "--out", str(out), cold=cold,
                        umask=0o027)
    record = submission / ".infergrade-progress.json"
    kept = (json.loads(record.read_text()), stat.S_IMODE(record.stat().st_mode), stat.S_IMODE(out.stat().st_mode))
    record.unlink()
    return done.returncode, done.stdout, done.stderr, json.loads(out.read_text()), kept


@pytest.mark.parametrize("kind, code", [("passing", 0), ("failing", 1), ("not started", 1)])
def test_a_warm_check_says_writes_and_exits_as_a_cold_one(warm, made, tmp_path, kind, code):
    served = len(warm.runs())
    cold = run_and_keep(warm, made[kind], tmp_path / "cold.json", cold=True)
    assert len(warm.runs()) == served  # INFERGRADE_WARM=0: not handed over
    hot = run_and_keep(warm, made[kind], tmp_path / "warm.json", cold=False)
    assert len(warm.runs()) == served + 1, warm.log()  # this one was
    assert hot[0] == cold[0] == code
    assert hot[1] == cold[1] and hot[2] == cold[2]  # standard output and error, byte for byte
    assert without(hot[3], TIMED) == without(cold[3], TIMED)  # the results document
    assert without(hot[4], TIMED) == without(cold[4], TIMED)  # the progress record, and both files' modes under the umask
    if kind == "failing":
        assert b"top_p_drops_crossing_token" in hot[1]


def test_a_terminal_gets_the_same_colours(warm, made):
    """Colours follow the client's own terminal, which the run writes to."""
    served = len(warm.runs())
    cold = in_a_terminal(warm, "sampling", "--submission", str(made["failing"]), cold=True)
    hot = in_a_terminal(warm, "sampling", "--submission", str(made["failing"]))
    assert len(warm.runs()) == served + 1
    assert hot == cold and cold[0] == 1 and b"\x1b[31m" in cold[1]
    (made["failing"] / ".infergrade-progress.json").unlink()


SPEAK = """
import json, os, socket, sys
from grader.learner.warm import client, folder, wire
request = {**client.request("check"), "argv": ["check"], "umask": 0o22, **json.loads(sys.argv[1])}
for key in json.loads(sys.argv[2]):
    request.pop(key)
fd, cwd = folder.opened(), os.open(".", os.O_RDONLY | os.O_DIRECTORY)
answers = []
with socket.socket(socket.AF_UNIX) as sock:
    assert client.connect(sock, fd)
    wire.send(sock, request, [1, 2, cwd])
    while (got := wire.recv(sock)) is not None:
        answers.append(got[0])
with open(sys.argv[3], "w") as f:
    json.dump(answers, f)
"""


def speak(warm: Warm, tmp_path, changes: dict, without: tuple = ()) -> tuple[list[dict], bytes]:
    """The warm grader's answers to a `check` request of this grader with `changes` (and `without` some fields),
    sent over the wire as a process of this uid; and what the run wrote to the sender's standard error."""
    answers = tmp_path / "answers.json"
    done = subprocess.run([warm.python, "-c", SPEAK, json.dumps(changes), json.dumps(without), str(answers)],
                          cwd=warm.cwd, env=warm.env, capture_output=True, timeout=RUN_S)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(answers.read_text()), done.stderr


@pytest.mark.parametrize("changes", [{"argv": ["grade", "--hidden", "--seed", "7"]}, {"argv": ["goldens"]},
                                     {"argv": ["selftest"]}, {"hidden": True}, {"seed": 7},
                                     {"record_goldens": True}, {"kind": "grade"}, {"argv": "check --hidden"}])
def test_only_a_public_check_is_served(warm, tmp_path, changes):
    """A request for anything but `check` (a hidden grade, a seed, goldens, the self-test) or with a field that
    `check` does not have is refused before anything runs."""
    served = len(warm.runs())
    answers, _ = speak(warm, tmp_path, changes)
    assert [a.get("refused") for a in answers] == ["request"] and len(warm.runs()) == served


def test_check_has_no_way_to_a_hidden_check(warm, tmp_path):
    """`check --hidden` is a usage error, whether the command line parses it or a request hands it over."""
    served = len(warm.runs())
    code, _, refusal = warm.check("sampling", "--hidden")
    assert code == 2 and b"--hidden" in refusal and len(warm.runs()) == served  # refused before any hand-over
    answers, err = speak(warm, tmp_path, {"argv": ["check", "sampling", "--hidden"]})
    assert answers[-1] == {"exit": 2} and err == refusal  # the same usage error, from the run
    assert len(warm.runs()) == served + 1 and "exit 2" in warm.runs()[-1]


def test_a_request_of_another_grader_or_environment_is_refused(warm, tmp_path):
    """A stale or foreign grader (another version, interpreter or files' stamp) and another start-up environment
    are refused; the warm grader, whose own files did not change, keeps serving."""
    for changes in ({"version": "0.0.1"}, {"python": "2.7.18"}, {"files": "0" * 64}):
        answers, _ = speak(warm, tmp_path, changes)
        assert [a.get("refused") for a in answers] == ["identity"]
    environ = {**warm.env, "TORCH_LOGS": "+dynamo", "PYTHONHASHSEED": "1"}
    answers, _ = speak(warm, tmp_path, {"environ": environ})
    assert [a.get("refused") for a in answers] == ["environment"]
    assert "PYTHONHASHSEED, TORCH_LOGS" in answers[0]["message"]
    answers, _ = speak(warm, tmp_path, {"argv": ["check", "--help"]})
    assert answers[-1] == {"exit": 0}


def test_ctrl_c_stops_the_run_and_the_next_check_is_warm(warm, made, tmp_path):
    """SIGINT to the client stops its run as it stops a cold one (the interrupted summary, exit 130); the warm
    grader ends that run's sandboxes and serves the next check."""
    slow = slow_submission(made, tmp_path)
    served = len(warm.runs())
    proc = warm.popen("sampling", "--submission", str(slow))
    warm.wait_for_log(f"running `check sampling --submission {slow}`")
    time.sleep(3)  # into its checks
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert b"grading was interrupted by SIGINT (Ctrl-C)" in out
    assert len(warm.runs()) == served + 1 and "exit 130" in warm.runs()[-1]
    code, out, _ = warm.check("sampling", "--submission", str(made["passing"]))
    assert code == 0 and b"30/30" in out and len(warm.runs()) == served + 2
    (made["passing"] / ".infergrade-progress.json").unlink()


def slow_submission(made, tmp_path):
    """sampling's solution whose apply_temperature sleeps a minute (each of its checks times out)."""
    slow = tmp_path / "slow"
    slow.mkdir(mode=0o755)
    (slow / "sampling.py").write_text((made["passing"] / "sampling.py").read_text() +
                                      "\n\ndef apply_temperature(logits, temperature):\n    import time\n"
                                      "    time.sleep(60)\n")
    return slow


def test_no_sandbox_is_left_between_runs(warm, made):
    """Once a check is answered, its sandboxes have ended: the zygote has no live child."""
    warm.check("sampling", "--submission", str(made["not started"]))
    (zygote,) = children(warm_pid(warm))
    deadline = time.monotonic() + 5
    while [p for p in processes_of(zygote)[1:] if alive(p)]:
        assert time.monotonic() < deadline, "a sandbox outlived its run"
        time.sleep(0.05)
    (made["not started"] / ".infergrade-progress.json").unlink()


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def warm_pid(warm: Warm) -> int:
    fd = os.open(warm.folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(f"/proc/self/fd/{fd}/socket")
            return wire.peer(sock)[0]
    finally:
        os.close(fd)


def test_sigterm_ends_it_and_all_it_started(tmp_path, checkout, made):
    """SIGTERM during a run: the run ends as a cold one on SIGTERM (exit 143), then the grader, its zygote and
    every sandbox; its socket and the run's folders are removed."""
    grader = Warm(tmp_path / "runtime", checkout)
    pid = grader.start()
    proc = grader.popen("sampling", "--submission", str(slow_submission(made, tmp_path)))
    grader.wait_for_log("running `check sampling")
    deadline = time.monotonic() + 300
    while len(started := [p for p in processes_of(pid) if alive(p)]) < 4:  # it, its zygote, the run, a sandbox
        assert time.monotonic() < deadline, grader.log()
        time.sleep(0.1)
    os.kill(pid, signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 143 and b"grading was interrupted by SIGTERM" in out
    deadline = time.monotonic() + 60
    while any(alive(p) for p in started):
        assert time.monotonic() < deadline, [p for p in started if alive(p)]
        time.sleep(0.1)
    assert not (grader.folder / "socket").exists()
    assert "stopped: stopped by signal 15" in grader.log()
    assert not [p for p in os.listdir("/tmp") if any(p.startswith(f"infergrade-child-{q}-") for q in started)]


def test_it_exits_when_idle(tmp_path, checkout):
    grader = Warm(tmp_path / "runtime", checkout, {"INFERGRADE_WARM_IDLE_S": "2"})
    pid = grader.start()
    started = processes_of(pid)
    deadline = time.monotonic() + 60
    while any(alive(p) for p in started):
        assert time.monotonic() < deadline, grader.log()
        time.sleep(0.2)
    assert "stopped: no request for 2 s" in grader.log() and not (grader.folder / "socket").exists()
