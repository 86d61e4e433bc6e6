"""Another user's process against a warm grader: the folder (0700, the user's own) keeps it from the socket; where
something gets it past the folder, the warm grader serves only a peer of its own uid (SO_PEERCRED); and a client
takes answers only from a grader of its own uid."""
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from grader.learner.warm import client, folder
from warm import Warm, private_checkout

NOBODY = 65534

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="switching to another uid needs root")


@pytest.fixture(scope="module")
def warm():
    """root's warm grader, in folders every user may traverse up to its own (pytest's are root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="infergrade-test-warm-"))
    path.chmod(0o755)
    grader = Warm(path / "runtime", private_checkout(path / "checkout"))
    grader.start()
    yield grader
    grader.stop()
    shutil.rmtree(path, ignore_errors=True)


def as_nobody(attempt) -> int:
    """Run `attempt()` in a child that is the user nobody; its exit code (0: it got through, 13: refused)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os._exit(0 if attempt() else 1)
        except PermissionError:
            os._exit(13)
        except BaseException:  # noqa: BLE001
            os._exit(70)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_another_user_cannot_reach_the_socket(warm):
    """nobody, against root's warm grader: the folder refuses the way to the socket and its listing."""
    def connect() -> bool:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(warm.folder / "socket"))
        return True

    assert as_nobody(connect) == 13 and as_nobody(lambda: bool(os.listdir(warm.folder))) == 13
    assert "uid" not in warm.log()  # not even a connection reached it


def test_a_peer_of_another_uid_is_not_served(warm):
    """Past a folder opened to others (and a socket anyone may write), nobody still gets nothing: the warm grader
    closes its connection unanswered, unread, and goes on serving its own user."""
    socket_path = warm.folder / "socket"
    for opened in (warm.folder.parent, warm.folder):  # the session's runtime folder, then the grader's
        opened.chmod(0o711)
    socket_path.chmod(0o777)

    def ask() -> bool:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(socket_path))
            try:
                sock.sendall(b"\0\0\0\x02{}")
                return sock.recv(1) != b""  # an answer
            except (ConnectionResetError, BrokenPipeError):  # closed before or while nobody wrote
                return False

    try:
        assert as_nobody(ask) == 1
    finally:
        for opened in (warm.folder, warm.folder.parent):
            opened.chmod(0o700)
        socket_path.chmod(0o755)
    assert f"refused a connection of uid {NOBODY}" in warm.log()
    assert warm.command("serve").stdout.startswith(b"a warm grader already runs")  # its own user's hello


def test_a_client_does_not_take_another_users_grader():
    """A socket where the warm grader's should be, listened to by nobody: the client does not connect as if it were
    its grader, so its request (environment, terminal, folder) never goes there."""
    place = Path(tempfile.mkdtemp(prefix="infergrade-test-warm-"))
    place.chmod(0o777)  # nobody makes its socket here
    listening = place / folder.SOCKET
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # nobody's fake grader: listens, and accepts whatever comes
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(str(listening))
                sock.listen(1)
                os.write(ready_write, b"1")
                sock.settimeout(60)
                conn, _ = sock.accept()
                conn.recv(1)
        finally:
            os._exit(0)
    try:
        os.read(ready_read, 1)
        fd = os.open(place, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                listening.chmod(0o777)  # (so that a wall of modes says nothing here)
                os.chown(listening, os.geteuid(), os.getegid())  # and it looks like this user's socket
                assert client.connect(sock, fd) is False
        finally:
            os.close(fd)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(ready_read)
        os.close(ready_write)
        shutil.rmtree(place, ignore_errors=True)
