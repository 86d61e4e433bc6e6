"""The grader's end of one sandboxed child: waiting for its import, timed requests answered within a reply budget,
its memory readings and printed output, and ending it."""
from __future__ import annotations

import os
import resource
import socket
import time

from grader.language import tr
from grader.sandbox import child as wire
from grader.sandbox import codec, request_pickle, served, watchdog
from grader.sandbox.failures import ChildFailure, ReplyTooLarge, describe_status, exception_info
from grader.sandbox.folders import make_folder, remove_folder
from grader.sandbox.limits import status_bytes
from grader.sandbox.topic_sandbox import TopicSandbox
from grader.sandbox.zygote import Zygote
from grader.text import printable, tail

IMPORT_TIMEOUT = 30.0
ENDING_GRACE = 5.0  # seconds a child whose channel closed gets to report its own status before it is killed
OUTPUT_BYTES = 1 * 2**20
# What one call may send back, by default, read from the frame's length before any byte of it: 12x the largest
# reply of a correct submission (serving's simulated records, 170 kB); a check that needs more raises it
# (sub.set_reply_budget). Without it a 48 MiB reply cost the grader gigabytes once a check converted it.
REPLY_BYTES = 2 * 2**20
SHOWN_OUTPUT_LINES, SHOWN_OUTPUT_BYTES = 20, 2048  # what a failed public check shows of the submission's prints


class Child:
    """One sandboxed child process serving one submission module; started at once, waited for on first use."""

    def __init__(self, zygote: Zygote, config: dict, sandbox: TopicSandbox | None = None):
        """Start a child for `config`: forked by the zygote with a chain of its own, or by a topic's `sandbox`."""
        self.topic = config["topic"]
        self.sandbox = sandbox
        self.zygote = sandbox or zygote  # what spawns, reaps and discards it
        self.tmpdir, self.output_fd, self.watch = (sandbox.tmpdir, sandbox.output_fd, sandbox.watch) if sandbox \
            else make_folder()
        self.pid, self.sock = self.zygote.spawn({**config, "tmpdir": self.tmpdir})
        self.memory_bytes = config.get("memory_bytes")
        self.killed_for_memory = False  # by the kernel, in the sandbox's memory cgroup (known once it is reaped)
        self.inner_pid = self.pid
        self.closed = False
        self.status: int | None = None
        self.ready = False
        self.info = {}
        self.life_peak = 0

    def wait_ready(self, timeout: float = IMPORT_TIMEOUT) -> None:
        """Wait until the submission is imported; ChildFailure says why when it could not be."""
        if self.ready:
            return
        first = self._receive(timeout, tr("starting the sandbox for {topic}.py", topic=self.topic), importing=True)
        if first[0] != "isolated" or not isinstance(first[1], dict):
            self.close()
            raise ChildFailure("error", tr("the sandboxed child did not report its isolation"))
        self.info = first[1]
        reply = self._receive(timeout, tr("importing {topic}.py", topic=self.topic), importing=True)
        if reply[0] == "import_error":
            info = exception_info(reply[1])
            where = f"\n{info['where']}" if info["where"] else ""
            refusal = wire.IMPORT_REFUSALS.get(info["type"])  # the child's own sentence, in the reader's language
            message = tr(refusal, topic=self.topic) if refusal and info["message"] == refusal.format(
                topic=self.topic) else info["message"]
            self.close()
            raise ChildFailure("error", tr("could not import {topic}.py: {type}: {message}{where}", topic=self.topic,
                                           type=info["type"], message=message, where=where), import_failure=True)
        if reply[0] != "ready":
            self.close()
            raise ChildFailure("error", tr("the child sent {reply!r} where 'ready' was expected", reply=reply[0]))
        if self.info.get("pid_namespace") and self.sandbox is None:  # a sandbox's check says its own pid
            self.inner_pid = self._inner_pid()
        self.ready = True

    def _inner_pid(self) -> int:
        """The process that runs the submission, three levels below the one the zygote forked (see walls.py)."""
        pid = self.pid
        for _ in range(3):
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    pid = int(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                return self.pid
        return pid

    def request(self, message: tuple, timeout: float, what: str, objects: dict | None = None,
                budget: int = REPLY_BYTES):
        """Send one request and wait for the reply: ('ok', value) or ('raised', info).

        Until the reply comes, the submission's calls to the served `objects` are answered here, within `timeout`.
        Every frame the child sends is refused from its length when it is over `budget` bytes (ReplyTooLarge).
        """
        deadline = time.monotonic() + timeout
        reply = ("callback", None)
        try:
            wire.send(self.sock, request_pickle.dumps(message))
            while (reply := self._receive(deadline - time.monotonic(), what, limit=timeout,
                                          budget=budget))[0] == "callback":
                wire.send(self.sock, codec.encode(served.answer(objects or {}, reply[1])))
        except OSError:
            reply = self._receive(deadline - time.monotonic(), what, limit=timeout, budget=budget)  # how it ended
        return reply

    def _receive(self, timeout: float, what: str, importing: bool = False, limit: float | None = None,
                 budget: int = REPLY_BYTES):
        """The next frame, decoded, within `timeout` seconds (`limit`: the whole call's, for the message), and
        refused from its length when it is over `budget` bytes."""
        try:
            frame = wire.recv(self.sock, limit=budget, deadline=time.monotonic() + timeout)
        except codec.TooLarge as exc:
            self.close()
            raise ReplyTooLarge(what, exc.size, exc.limit) from None
        except (socket.timeout, TimeoutError):
            self.close()
            raise ChildFailure("timeout", tr("{what} did not finish within {seconds:g} s (an endless loop?)",
                                             what=what, seconds=limit or timeout), import_failure=importing) from None
        except (OSError, codec.DecodeError) as exc:
            self.close()
            raise ChildFailure("error", tr("lost contact with the submission during {what}: {error}", what=what,
                                           error=exc)) from None
        if frame is None:  # it is ending: its own status says how (tearing down its namespaces may take seconds)
            status = self.close(grace=ENDING_GRACE)
            how = self.watch.killed() or (watchdog.memory_message(self.memory_bytes) if self.killed_for_memory else
                                          describe_status(status) if status is not None else
                                          tr("closed its channel to the grader and did not end within {seconds:g} s "
                                             "(the grader stopped it)", seconds=ENDING_GRACE))
            raise ChildFailure("error", tr("the submission process {how} during {what}", how=how, what=what),
                               import_failure=importing)
        try:
            reply = codec.decode(frame)
        except codec.DecodeError as exc:
            self.close()
            raise ChildFailure("error", tr("{what} sent back a malformed result ({error})", what=what,
                                           error=exc)) from None
        if not (isinstance(reply, tuple) and len(reply) == 2 and isinstance(reply[0], str)):
            self.close()
            raise ChildFailure("error", tr("{what} sent back a malformed reply", what=what))
        return reply

    def peak_rss_reset(self) -> None:
        # what the import, or the last call, reached in the submission's process (the watchdog keeps its own)
        self.life_peak = max(self.life_peak, status_bytes(self.inner_pid, "VmHWM") or 0)
        self.watch.reset()
        try:
            with open(f"/proc/{self.inner_pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass

    def peak_rss(self) -> int | None:
        """Peak resident memory since the last reset: of the submission's process, or of all the sandbox's
        processes together as the watchdog sampled them, whichever is larger (None where neither is known)."""
        known = [m for m in (status_bytes(self.inner_pid, "VmHWM"),
                             self.watch.peak() if self.info.get("watchdog") else None) if m is not None]
        return max(known, default=None)

    def life_peak_rss(self) -> int | None:
        """Peak resident memory over the child's whole life, its import and every call: of the submission's
        process, or of all the sandbox's processes together as the watchdog sampled them, whichever is larger
        (None where neither is known)."""
        known = [m for m in (self.life_peak or None, status_bytes(self.inner_pid, "VmHWM"),
                             self.watch.life() if self.info.get("watchdog") else None) if m is not None]
        return max(known, default=None)

    def limit_memory(self, extra_bytes: int) -> None:
        """Cap the child's address space at its current size plus `extra_bytes` (Linux; elsewhere a no-op)."""
        if not hasattr(resource, "prlimit"):
            return
        size = status_bytes(self.inner_pid, "VmSize")
        if size is None:
            return
        cap = size + extra_bytes
        try:
            resource.prlimit(self.inner_pid, resource.RLIMIT_AS, (cap, cap))
        except (OSError, ValueError):
            pass

    @property
    def output_full(self) -> bool:
        return os.fstat(self.output_fd).st_size >= OUTPUT_BYTES

    def output_tail(self) -> str:
        """The last lines the submission printed (stdout and stderr), made safe to show; '' if none."""
        if self.output_fd < 0:
            return ""
        size = os.fstat(self.output_fd).st_size
        start = max(0, size - 4 * SHOWN_OUTPUT_BYTES)
        text = os.pread(self.output_fd, size - start, start).decode("utf-8", "replace")
        text = tail(printable(text.rstrip("\n")), SHOWN_OUTPUT_LINES, SHOWN_OUTPUT_BYTES)
        if size >= OUTPUT_BYTES:
            text = tr("[output reached the {mib} MiB limit]", mib=OUTPUT_BYTES // 2**20) + "\n" + text
        return text

    def close(self, grace: float = 0.0) -> int | None:
        """End the child and everything it started; its wait status (None where it had not ended on its own)."""
        if self.closed:
            return self.status
        self.closed = True
        self.sock.close()
        self.status, self.killed_for_memory = self.zygote.reap(self.pid, grace)
        return self.status

    def discard(self) -> None:
        """End the child without waiting for it, and remove its files."""
        if not self.closed:
            self.closed = True
            self.sock.close()
            self.zygote.discard(self.pid)
        if self.sandbox is not None:  # the folder is the sandbox's, for its next check
            self.output_fd = -1
        elif self.output_fd >= 0:
            remove_folder(self.tmpdir, self.output_fd, self.watch)
            self.output_fd = -1
