"""The forker of a topic's sandbox: the process that forks each check's process, from the sandbox's state at its start.

PID 1 serves every check of the topic, and its interpreter changes as it does (its collector's counts, its heap, the
frames it read, the watchdog's samples of what each check ran): a check forked from PID 1 read, in its own copy of
that memory, how many checks ran before it and something of what they did. The forker is forked by PID 1 once the
private root is built and does nothing but fork, with its collector off, one byte read and the same small pids
each time (the namespace's pid counter is set back before each check), so that its memory is the same before every
fork. It forks a middle process, which forks the check's process and exits: the check's process, orphaned, is PID
1's child, whose end the watchdog waits for. The check's process then reads its socket, output file and settings
from PID 1 (`Forker.spawn`), over a channel that is drained before each check, so that nothing one check did not
read reaches the next.

PID 1 keeps the forker out of the watchdog's counts and kills (watchdog.KEEPERS); procfs.py hides it from a check.
"""
from __future__ import annotations

import gc
import os
import pickle
import select
import socket
import struct
from collections.abc import Callable

from grader.sandbox import cgroup, namespaces, watchdog

PID = struct.Struct("<q")
REAPED = b"r"  # the forker's byte once it reaped the middle process: the check's process is PID 1's child by then
FORK = b"c"


def _wire():
    from grader.sandbox import child

    return child


class Forker:
    """PID 1's handle on its forker."""

    def __init__(self, run: Callable[[socket.socket, int, dict], None], offered: int | None, procs: int | None):
        """Fork the forker; in each check's process it forks, `run(sock, output_fd, settings, realtime)` (never
        returns) with what `spawn` sent and whether PID 1 is in the real-time class. `offered`: PID 1's OOM score
        before it offered itself first, which the forker takes back (cgroup.withdraw), so that PID 1 stays the OOM
        killer's first choice. `procs`: the descriptor by which the forker enters the sandbox's v1 cpu cgroup
        (cgroup.join), leaving the real-time class first, so that each check's process starts in both: a move into a
        v1 cgroup waits for the kernel's RCU grace period, about 10 ms, once per sandbox rather than per check."""
        requests_r, self.requests = os.pipe()
        self.born, born_w = os.pipe()
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.pid = os.fork()
        if self.pid == 0:
            self.channel.detach()  # PID 1's end: closed below with the rest, never again by this object
            keep = {0, 1, 2, requests_r, born_w, theirs.fileno(), procs}
            for fd in [int(fd) for fd in os.listdir("/proc/self/fd")]:
                if fd not in keep:
                    _close(fd)
            cgroup.withdraw(offered)
            realtime = namespaces.leave_realtime()  # PID 1's watchdog keeps it
            cgroup.join(procs)  # closes procs
            namespaces.hide()  # from a check of its uid (procfs.py): after withdraw, which writes its own /proc
            _fork_checks(requests_r, born_w)  # returns in a check's process only
            os.close(requests_r)
            os.close(born_w)
            run(*_received(theirs), realtime)
            os._exit(70)  # `run` never returns
        os.close(requests_r)
        os.close(born_w)
        self.theirs = theirs  # kept to drain what a check did not read
        watchdog.KEEPERS.add(str(self.pid))

    def spawn(self, settings: dict, fds: list[int]) -> int:
        """Fork a check's process, hand it `fds` (its socket, its output file) and `settings`; its namespace pid."""
        self._drain()
        os.write(self.requests, FORK)
        (pid,) = PID.unpack(self._read(PID.size))
        socket.send_fds(self.channel, [b"s"], fds)  # the check sets itself up while the middle process ends
        _wire().send(self.channel, pickle.dumps(settings))
        assert self._read(len(REAPED)) == REAPED, "the forker reaps the middle process after the check's pid"
        return pid

    def _read(self, size: int) -> bytes:
        """`size` bytes from the forker."""
        got = b""
        while len(got) < size:
            chunk = os.read(self.born, size - len(got))
            if not chunk:
                raise OSError("the sandbox's forker is gone")
            got += chunk
        return got

    def _drain(self) -> None:
        """Read and close whatever a check that ended early left unread on the channel."""
        while select.select([self.theirs], [], [], 0)[0]:
            data, fds, _, _ = socket.recv_fds(self.theirs, 2**16, 16)
            for fd in fds:
                _close(fd)
            if not data:
                return


def _fork_checks(requests: int, born: int) -> None:
    """As the forker: on each request fork a middle process that forks the check's process, says its pid and exits;
    reap the middle process and say so. Returns in the check's process only (the forker ends with PID 1)."""
    gc.disable()  # no collection ever runs here: the counts a check reads are those of the sandbox's start
    while os.read(requests, 1) == FORK:
        middle = os.fork()
        if middle == 0:
            check = os.fork()
            if check == 0:
                gc.enable()
                return
            os.write(born, PID.pack(check))
            os._exit(0)
        os.waitpid(middle, 0)
        os.write(born, REAPED)
    os._exit(0)


def _received(channel: socket.socket) -> tuple[socket.socket, int, dict]:
    """In the check's process: its socket, output file and settings, as PID 1 sent them; the channel closed."""
    _, fds, _, _ = socket.recv_fds(channel, 1, 2)
    settings = pickle.loads(_wire().recv(channel))
    channel.close()
    return socket.socket(fileno=fds[0]), fds[1], settings


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
