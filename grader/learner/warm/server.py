"""The warm grader's process: torch, the engine, the public checks and the sandbox's zygote stay loaded, and each
`check` handed to it runs in a fork of it, set up as that check's own command line (run.py).

One loop and no thread (a fork copies only the thread that forks): it admits a connection (a peer of this uid, the
same grader, interpreter and start-up environment, a `check` and nothing else), queues it behind the run in
progress, forwards the client's Ctrl-C to its run, and answers each run's exit code. No sandbox outlives a run: the
run ends its topics' sandboxes, and where one still lives after it, or the run ended otherwise (interrupted,
killed), the zygote is replaced, which ends all of them. SIGTERM, SIGINT or SIGHUP stop the run in progress and
the grader, and so does IDLE_S without a request.
"""
from __future__ import annotations

import os
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass

from grader.learner.warm import folder, identity, run, wire
from grader.sandbox import cgroup, folders, zygote as zygotes

IDLE_S = 15 * 60
IDLE_VARIABLE = "INFERGRADE_WARM_IDLE_S"  # seconds without a request before it exits (tests shorten it)
PROTOCOL = 1
WAITING = 8  # checks queued behind the one that runs; one more is refused and runs cold
ADMIT_S = 2.0  # a connection's request (and each later message) must arrive within this
STOP_S = 10.0  # a run stopped with SIGTERM is killed after this
ENDED_S = 1.0  # the sandboxes a run ended may take this long to die before the zygote is replaced
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
FORWARDED = (signal.SIGINT, signal.SIGTERM)
CLEAN_EXITS = (0, 1, 2)  # a check that ran to its end: passed, failed, or refused its arguments
IDENTITY = ("version", "python", "files")
FIELDS = {"hello": {"kind", "protocol", *IDENTITY, "environ"},
          "check": {"kind", "protocol", *IDENTITY, "environ", "argv", "umask"}}


@dataclass
class Job:
    """One client's check: its connection, request and descriptors (standard output and error, working folder)."""
    conn: socket.socket | None
    request: dict
    fds: list[int]
    pid: int | None = None
    pidfd: int | None = None
    started: float = 0.0


class Server:
    """The loop of a warm grader that owns the folder open at `folder_fd` (and its lock, `lock_fd`)."""

    def __init__(self, command, folder_fd: int, lock_fd: int, started_as: dict):
        """`command`: the command line's group, whose `check` a run invokes; `started_as`: this grader's identity,
        taken before it imported the engine."""
        self.command, self.folder, self.lock = command, folder_fd, lock_fd
        self.identity, self.environ = started_as, dict(os.environ)
        self.idle_s = float(os.environ.get(IDLE_VARIABLE, IDLE_S))
        self.queue: list[Job] = []
        self.running: Job | None = None
        self.stopping: str | None = None
        self.kill_at = float("inf")
        self.last = 0.0  # when it last had something to do (a request, the end of a run)
        self.selector = selectors.DefaultSelector()
        self.wake_read, self.wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.listener: socket.socket | None = None
        self.socket_inode: int | None = None

    def catch_signals(self) -> None:
        """From now on SIGTERM, SIGINT and SIGHUP stop the grader (they wake the loop through a pipe)."""
        signal.set_wakeup_fd(self.wake_write, warn_on_full_buffer=False)
        for signum in STOP_SIGNALS:
            signal.signal(signum, lambda *_: None)

    def listen(self) -> None:
        """Bind the socket in the folder (any socket left there is stale: this process holds the lock)."""
        try:
            os.unlink(folder.SOCKET, dir_fd=self.folder)
        except FileNotFoundError:
            pass
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(folder.socket_address(self.folder))
        self.listener.listen(WAITING)
        self.socket_inode = os.stat(folder.SOCKET, dir_fd=self.folder, follow_symlinks=False).st_ino
        self.selector.register(self.listener, selectors.EVENT_READ, self._accept)
        self.selector.register(self.wake_read, selectors.EVENT_READ, self._signalled)

    def serve(self) -> str:
        """Serve until stopped; why it stopped."""
        log(f"ready (pid {os.getpid()}, idle exit after {self.idle_s:g} s)")
        self.last = time.monotonic()
        while not (self.stopping and self.running is None):
            events = self.selector.select(self._timeout())
            for key, _ in events:
                key.data(key.fileobj)
            now = time.monotonic()
            if self.running is not None and now >= self.kill_at:
                os.kill(self.running.pid, signal.SIGKILL)
                self.kill_at = float("inf")
            if self.running is None and self.queue and not self.stopping:
                self._start(self.queue.pop(0))
            if self.running is None and not self.queue and now >= self.last + self.idle_s:
                self.stopping = self.stopping or f"no request for {self.idle_s:g} s"
        self.close()
        return self.stopping

    def _timeout(self) -> float | None:
        if self.running is not None:
            return None if self.kill_at == float("inf") else max(0.0, self.kill_at - time.monotonic())
        return 0.0 if self.queue or self.stopping else max(0.0, self.last + self.idle_s - time.monotonic())

    def _accept(self, listener: socket.socket) -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        try:
            job = self._admit(conn)
        except (OSError, ValueError):
            job = None
        if job is None:
            conn.close()
            return
        self.last = time.monotonic()
        if self.stopping or len(self.queue) >= WAITING:
            self._refuse(job, "busy", "the warm grader is busy or stopping: this check runs without it")
            return
        self.queue.append(job)
        self.selector.register(conn, selectors.EVENT_READ, lambda c, job=job: self._from_client(job))
        self._send(job, {"queued": len(self.queue) + (self.running is not None) - 1})

    def _admit(self, conn: socket.socket) -> Job | None:
        """The check `conn` asks for, or None where it is refused (answered why, but not to another uid)."""
        pid, uid = wire.peer(conn)
        if uid != os.geteuid():
            log(f"refused a connection of uid {uid} (pid {pid})")
            return None
        conn.settimeout(ADMIT_S)
        got = wire.recv(conn, max_fds=3)
        if got is None:  # a probe (is it listening?)
            return None
        request, fds = got
        job = Job(conn, request, fds)
        refused = self._refusal(request, fds)
        if refused is not None:
            self._refuse(job, *refused)
            return None
        if request["kind"] == "hello":
            wire.send(conn, {"ready": os.getpid()})
            return None
        return job

    def _refusal(self, request: dict, fds: list[int]) -> tuple[str, str] | None:
        """(reason, message) where the request is not one to serve: anything but a public `check` of this grader,
        with its terminal and working folder, in the environment this grader started in."""
        kind = request.get("kind")
        if kind not in FIELDS or set(request) != FIELDS[kind] or request["protocol"] != PROTOCOL:
            return "request", "the warm grader runs `check` and nothing else (no other command, option or field)"
        if kind == "check":
            argv, umask = request["argv"], request["umask"]
            if not (isinstance(argv, list) and argv[:1] == ["check"] and all(isinstance(a, str) for a in argv)):
                return "request", "the warm grader runs `check` and nothing else"
            if not (isinstance(umask, int) and 0 <= umask <= 0o777) or len(fds) != 3 or \
                    not os.path.isdir(f"/proc/self/fd/{fds[2]}"):
                return "request", "a check needs its umask, its output, its error stream and its working folder"
        elif fds:
            return "request", "a hello carries no descriptor"
        environ = request["environ"]
        if not isinstance(environ, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in environ.items()):
            return "request", "the warm grader needs the environment as names and values"
        if {k: request[k] for k in IDENTITY} != {k: self.identity[k] for k in IDENTITY}:
            if identity.identity() != self.identity:  # its own files changed: an upgrade, a reinstall, an edit
                self.stopping = "its grader was upgraded or changed"
                return "stale", ("the warm grader was running an infergrade that has since changed, so it stopped; "
                                 "`infergrade serve` starts a current one")
            return "identity", ("the warm grader runs another infergrade or Python than this one: this check runs "
                                "without it")
        different = identity.environment_differences(environ, self.environ)
        if different:
            return "environment", (f"the warm grader started with other values of {', '.join(different)}: this "
                                   f"check runs without it (`infergrade serve --stop`, then `infergrade serve` here)")
        return None

    def _refuse(self, job: Job, reason: str, message: str) -> None:
        log(f"refused a request: {reason}")
        self._send(job, {"refused": reason, "message": message})
        self._forget(job)

    def _send(self, job: Job, message: dict) -> None:
        """Answer `job`'s client; one that is gone is forgotten (its run, if any, is stopped by `_from_client`)."""
        try:
            if job.conn is not None:
                wire.send(job.conn, message)
        except OSError:
            pass

    def _from_client(self, job: Job) -> None:
        """A message from a waiting client: a signal to forward, or the end of its connection."""
        try:
            got = wire.recv(job.conn)
        except (OSError, wire.WireError):
            got = None
        signum = got[0].get("signal") if got is not None else None
        if got is not None and signum not in FORWARDED:
            return
        if job is self.running:
            os.kill(job.pid, signum or signal.SIGKILL)  # a client gone (killed) wants no more output
            if signum is None:
                self._forget(job)
        else:
            self.queue.remove(job)
            if signum is not None:  # it checks cold, where the signal it got stops the run at its start
                self._send(job, {"dropped": True})
            self._forget(job)

    def _start(self, job: Job) -> None:
        """Fork the run of `job`; the zygote is started first if it died."""
        live = zygotes.shared()
        for stream in (sys.stdout, sys.stderr):  # nothing of this process's may reach the client's terminal
            stream.flush()
        ours = [self.listener.fileno(), self.selector.fileno(), self.wake_read, self.wake_write, self.lock,
                self.folder] + [fd for j in self.queue for fd in (j.conn.fileno(), *j.fds)] + [job.conn.fileno()]
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        pid = os.fork()
        if pid == 0:
            run.run_check(self.command, job.request, job.fds, ours, live)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        for fd in job.fds:
            os.close(fd)
        job.fds, job.pid, job.started = [], pid, time.monotonic()
        job.pidfd = os.pidfd_open(pid)
        self.selector.register(job.pidfd, selectors.EVENT_READ, lambda fd, job=job: self._ended(job))
        self.running = job
        self._send(job, {"started": True})
        log(f"running `{' '.join(job.request['argv'])}` (pid {pid})")

    def _ended(self, job: Job) -> None:
        """The run of `job` ended: answer its exit code, and leave no sandbox behind."""
        _, status, usage = os.wait4(job.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        code = 128 - code if code < 0 else code  # killed by a signal: as a shell says it
        self.selector.unregister(job.pidfd)
        os.close(job.pidfd)
        self.running, self.kill_at, self.last = None, float("inf"), time.monotonic()
        log(f"ran `{' '.join(job.request['argv'])}`: exit {code} after {time.monotonic() - job.started:.2f} s "
            f"({usage.ru_utime + usage.ru_stime:.2f} s of CPU in the grader)")
        self._send(job, {"exit": code})
        self._forget(job)
        if code not in CLEAN_EXITS or not sandboxes_ended():
            log("replacing the zygote: the run did not end its sandboxes")
            replace_zygote()
        folders.remove_stale_folders()  # a killed run's copy of the submission and its sandboxes' folders
        cgroup.remove_stale()

    def _forget(self, job: Job) -> None:
        if job.conn is not None:
            try:
                self.selector.unregister(job.conn)
            except (KeyError, ValueError):
                pass
            job.conn.close()
            job.conn = None
        for fd in job.fds:
            os.close(fd)
        job.fds = []

    def _signalled(self, _) -> None:
        received = os.read(self.wake_read, 64)
        if any(s in STOP_SIGNALS for s in received) and not self.stopping:
            self.stopping = f"stopped by signal {received[0]}"
            for job in list(self.queue):
                self.queue.remove(job)
                self._refuse(job, "stopping", "the warm grader is stopping: this check runs without it")
            if self.running is not None:
                os.kill(self.running.pid, signal.SIGTERM)
                self.kill_at = time.monotonic() + STOP_S

    def close(self) -> None:
        """Stop listening and remove the socket (where it is still this process's); the zygote, and with it every
        sandbox, ends with the process's exit handlers."""
        if self.listener is not None:
            self.listener.close()
            try:
                if os.stat(folder.SOCKET, dir_fd=self.folder, follow_symlinks=False).st_ino == self.socket_inode:
                    os.unlink(folder.SOCKET, dir_fd=self.folder)
            except FileNotFoundError:
                pass
        log(f"stopped: {self.stopping}")


def sandboxes_ended() -> bool:
    """Whether every process the zygote started has ended (it reaps the killed ones at its next request), waiting
    up to ENDED_S for those killed at the run's end."""
    live = zygotes.shared()
    deadline = time.monotonic() + ENDED_S
    while not all(_state(pid) in ("Z", None) for pid in _children(live.pid)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def replace_zygote() -> None:
    """End the zygote (it kills and reaps every sandbox it started) and start another at once."""
    zygotes.shared().close()
    zygotes.shared()


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def log(message: str) -> None:
    """A line of the warm grader's log (its standard error: the log file when it runs in the background)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
