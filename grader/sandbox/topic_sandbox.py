"""The grader's handle on a topic's template (template.py): one sandbox whose PID 1 forks a process per check."""
from __future__ import annotations

import pickle
import socket
import struct
import time

from grader.sandbox import template
from grader.sandbox.zygote import Zygote

# what of a check's config makes the private root: checks that differ in these get sandboxes of their own
ROOT_KEYS = ("topic", "bound_read_only", "devices", "submission_dir", "tmp_bytes", "tmp_files", "hidden")
READY_TIMEOUT = 60.0  # seconds PID 1 may take to build the private root (a loaded host)
ANSWER_TIMEOUT = 30.0  # seconds PID 1 may take, past a check's grace, to end a check (kill and reap)


def sandbox_key(config: dict) -> str:
    """What names the sandbox a check's `config` runs in."""
    return repr([(k, config.get(k)) for k in ROOT_KEYS])


class TemplateRefused(Exception):
    """No template could be built here (no namespaces, a refused wall): checks get a chain of their own each."""


class TopicSandbox:
    """Spawns, reaps and discards the check processes of one sandbox, as the zygote does children (connection.Child
    uses either). One check at a time: `spawn` while a check is open is a grader error."""

    def __init__(self, zygote: Zygote, config: dict, folder: tuple):
        """Start the sandbox for `config` in `folder` (folders.make_folder's: path, output file, watchdog page)."""
        self.zygote = zygote
        self.tmpdir, self.output_fd, self.watch = folder
        self.pid, self.control = zygote.spawn({**config, "tmpdir": self.tmpdir}, template=True)
        self.init_pid: int | None = None  # PID 1's host pid, once it said it is ready
        self.current: int | None = None  # the open check's host pid
        self.broken = False

    def wait_ready(self) -> None:
        """Wait until PID 1 has built the private root; TemplateRefused where it could not."""
        if self.init_pid is not None:
            return
        try:
            frame = template._wire().recv(self.control, deadline=time.monotonic() + READY_TIMEOUT)
            kind, reason = pickle.loads(frame) if frame is not None else ("refused", "PID 1 ended")
        except (OSError, socket.timeout) as exc:
            kind, reason = "refused", f"PID 1 did not answer ({exc})"
        if kind != "template":
            self.close()
            raise TemplateRefused(str(reason))
        self.init_pid = _child_of(_child_of(self.pid))

    def spawn(self, config: dict) -> tuple[int, socket.socket]:
        """Fork the check's process from PID 1; its host pid (-1 where it ended before it was found) and the
        grader's end of its new socket."""
        assert self.current is None and not self.broken, "one check at a time, in a sandbox that works"
        self.wait_ready()
        try:
            template._wire().send(self.control, pickle.dumps(("check", config)))
            self.control.settimeout(ANSWER_TIMEOUT)
            msg, fds, _, _ = socket.recv_fds(self.control, 64, 1)
            (inner,) = template.PID.unpack(msg)
            sock = socket.socket(fileno=fds[0])
        except (OSError, struct.error, IndexError) as exc:
            self.close()
            raise TemplateRefused(f"PID 1 did not start the check ({exc})") from None
        self.current = _host_pid(self.init_pid, inner)
        return self.current, sock

    def reap(self, pid: int, grace: float = 0.0) -> tuple[int | None, bool]:
        """End the open check (every process of the namespace); its wait status, or None where the check's
        process had not ended on its own, and whether the kernel killed in the sandbox's memory cgroup."""
        assert pid == self.current, "reaped a check that is not the open one"
        self.current = None
        try:
            template._wire().send(self.control, pickle.dumps(("end", grace)))
            frame = template._wire().recv(self.control, deadline=time.monotonic() + grace + ANSWER_TIMEOUT)
            status, ended = template.ENDED.unpack(frame)
        except (OSError, socket.timeout, struct.error, TypeError):
            return None, self.end()  # PID 1 is gone or stuck: this sandbox serves no more checks
        return (status if ended else None), False

    def discard(self, pid: int) -> None:
        """End the open check; PID 1 answers in milliseconds, so this waits for it."""
        self.reap(pid)

    def end(self) -> bool:
        """End the broken sandbox now; whether the kernel killed in its memory cgroup for passing the cap (with
        memory.oom.group, or PID 1 offered first under v1, such a kill ends the whole sandbox)."""
        if self.broken:
            return False
        self.broken = True
        self.control.close()
        return self.zygote.reap(self.pid)[1]

    def close(self) -> None:
        """End the sandbox: PID 1 and every process below it (its folder is the caller's to remove)."""
        if not self.broken:
            self.broken = True
            self.control.close()
            self.zygote.discard(self.pid)


def _child_of(pid: int) -> int:
    """The only child of `pid` (a process of the chain above PID 1, which runs no submission code)."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return int(f.read().split()[0])


def _host_pid(init_pid: int, inner: int) -> int:
    """The host pid of the child of PID 1 (host pid `init_pid`) whose pid in the namespace is `inner`; -1 if gone."""
    try:
        with open(f"/proc/{init_pid}/task/{init_pid}/children") as f:
            children = f.read().split()
    except OSError:
        return -1
    for pid in children:
        try:
            with open(f"/proc/{pid}/status") as f:
                ns_pids = next(line.split()[1:] for line in f if line.startswith("NSpid:"))
        except (OSError, StopIteration):
            continue
        if ns_pids and int(ns_pids[-1]) == inner:
            return int(pid)
    return -1
