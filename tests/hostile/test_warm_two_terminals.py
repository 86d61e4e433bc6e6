"""Two terminals at once against one warm grader: one run at a time, the other queued behind it; both get the
results they would get alone; a Ctrl-C in the waiting terminal stops its check as it stops a cold one."""
import re
import signal
import time

import pytest

from warm import Warm, private_checkout, submissions


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    made = submissions(tmp_path_factory.mktemp("submissions"))
    grader = Warm(tmp_path_factory.mktemp("runtime"), private_checkout(tmp_path_factory.mktemp("checkout")))
    grader.start()
    yield grader, made
    grader.stop()


def test_two_checks_at_once_each_get_their_own_results(setup):
    grader, made = setup
    both = [grader.popen("sampling", "--submission", str(made[kind])) for kind in ("passing", "failing")]
    together = [(p.wait(timeout=600), *p.communicate()) for p in both]
    alone = [grader.check("sampling", "--submission", str(made[kind])) for kind in ("passing", "failing")]
    assert together == alone and [code for code, _, _ in alone] == [0, 1]
    assert b"top_p_drops_crossing_token" in alone[1][1]
    events = re.findall(r"\] (running|ran) `check sampling --submission (\S+)`", grader.log())
    assert len(events) == 8 and all(events[i][0] == "running" and events[i + 1] == ("ran", events[i][1])
                                    for i in range(0, 8, 2))  # one run at a time, never two


def test_ctrl_c_while_waiting_stops_that_check_only(setup, tmp_path):
    """The queued check leaves the queue and stops as a cold check stopped at its start does (exit 130); the
    running one is not touched."""
    grader, made = setup
    slow = tmp_path / "slow"
    slow.mkdir(mode=0o755)
    (slow / "sampling.py").write_text((made["passing"] / "sampling.py").read_text() +
                                      "\n\ndef apply_temperature(logits, temperature):\n    import time\n"
                                      "    time.sleep(60)\n")
    runs = len(grader.runs())
    running = grader.popen("sampling", "--submission", str(slow))
    grader.wait_for_log(f"running `check sampling --submission {slow}`")
    waiting = grader.popen("sampling", "--submission", str(made["passing"]))
    time.sleep(3)  # connected and queued
    waiting.send_signal(signal.SIGINT)
    out, _ = waiting.communicate(timeout=600)
    assert waiting.returncode == 130 and b"grading was interrupted by SIGINT (Ctrl-C)" in out
    assert running.poll() is None  # still running its checks
    running.send_signal(signal.SIGINT)
    assert running.wait(timeout=300) == 130
    assert len(grader.runs()) == runs + 1 and str(made["passing"]) not in grader.runs()[-1]
