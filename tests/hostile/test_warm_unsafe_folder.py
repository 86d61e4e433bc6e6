"""The warm grader's folder made unsafe by someone else: a link to a folder of theirs, a mode that lets others in,
another owner. `check` then never connects to what listens there (its environment, terminal and folder would
leak to it) and runs cold; `serve` refuses to start there and says why."""
import os
import socket

import pytest

from grader.sandbox.policy import REPO
from warm import Warm

NOBODY = 65534


def unsafe_folder(runtime, how: str):
    """`runtime`/infergrade made unsafe `how`, with a socket listening in it; the listening socket."""
    target = runtime / "infergrade"
    if how == "link":
        elsewhere = runtime.parent / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        target.symlink_to(elsewhere)
    else:
        target.mkdir(mode=0o700)
        if how == "mode":
            target.chmod(0o755)
        else:
            os.chown(target, NOBODY, NOBODY)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(target / "socket"))
    listener.listen(8)
    listener.setblocking(False)
    return listener


@pytest.mark.parametrize("how", ["link", "mode", "owner"])
def test_an_unsafe_folder_is_never_used(tmp_path, how):
    if how == "owner" and os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    grader = Warm(tmp_path / "runtime", REPO)
    with unsafe_folder(tmp_path / "runtime", how) as listener:
        code, _, err = grader.check("no_such_topic")
        assert code == 2 and b"no_such_topic" in err  # checked cold: the topic is refused as it always is
        started = grader.command("serve")
        assert started.returncode == 1 and b"infergrade" in started.stderr and not started.stdout
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody ever connected
