"""A stale warm grader after an upgrade: the grader's files change under a warm grader that loaded the old ones.
The next check's request carries the new files' stamp; the warm grader, whose own files no longer match what it
loaded, refuses it and stops; the check runs cold, correct, and says so; `serve` then starts a current one."""
import time

from warm import Warm, alive, private_checkout, submissions


def test_an_upgraded_grader_is_never_served_by_the_old_one(tmp_path):
    checkout = private_checkout(tmp_path / "checkout")
    (tmp_path / "submissions").mkdir()
    passing = submissions(tmp_path / "submissions")["passing"]
    grader = Warm(tmp_path / "runtime", checkout)
    old = grader.start()
    code, out, _ = grader.check("sampling", "--submission", str(passing))
    assert code == 0 and len(grader.runs()) == 1
    with open(checkout / "grader" / "wording.py", "a") as f:  # the upgrade: a file of the grader changes
        f.write("\n# upgraded\n")
    code, upgraded_out, err = grader.check("sampling", "--submission", str(passing))
    assert code == 0 and upgraded_out == out  # run cold, by the new grader
    assert b"infergrade serve" in err and len(grader.runs()) == 1  # said so; not served by the old one
    deadline = time.monotonic() + 60
    while alive(old):
        assert time.monotonic() < deadline, grader.log()
        time.sleep(0.1)
    assert not (grader.folder / "socket").exists()
    new = grader.start()
    code, _, _ = grader.check("sampling", "--submission", str(passing))
    assert new != old and code == 0 and len(grader.runs()) == 1  # the new one's log: served warm again
    grader.stop()
