"""Which child runs each check: one forked by its topic's sandbox, or one with a chain of its own started ahead;
and the run's deadline, shared out between the topics graded."""
from __future__ import annotations

import time

from grader.language import tr
from grader.sandbox.connection import Child
from grader.sandbox.failures import ChildFailure
from grader.sandbox.folders import make_folder, remove_folder, remove_left_behind
from grader.sandbox.topic_sandbox import TemplateRefused, TopicSandbox, sandbox_key
from grader.sandbox.zygote import Zygote

DEADLINE_PER_TOPIC = 60.0  # the default run deadline, per topic graded (a topic's checks take about 1.5 s)
MAX_SANDBOXES = 3  # topics' sandboxes kept at once (the current one, the next one started ahead, one more)


class ChildPool:
    """Starts the child of each check: forked by its topic's sandbox (template.py), or, where no template can be
    built, a child with a chain of its own, one started ahead so that it imports while the previous check runs.

    It also holds the run's deadline, shared out between the `topics` graded: each topic's share is the time spent
    in its checks (`enter_topic` says which topic the next check is of; the public checks of every topic run before
    any hidden one, so a topic is entered twice), and past it no submission code of that topic runs and every later
    call is a timeout, while the next topic still gets its whole share (a topic that hangs cannot take its
    neighbours' time).
    """

    def __init__(self, zygote: Zygote, deadline_s: float | None = None, topics: int = 1, templates: bool = True):
        """`templates`: False for a chain per check even where a template could be built (tests of the chain)."""
        self.zygote = zygote
        self.templates = templates and zygote.namespaces  # False once one was refused: a chain per check from then
        self.sandboxes: dict[str, TopicSandbox] = {}  # by sandbox_key, least recently used first
        self.spare: tuple[str, Child] | None = None
        self.import_failures: dict[str, ChildFailure] = {}  # a module that cannot be imported fails once
        self.started: list[Child] = []  # every child, so that none outlives the pool
        self.deadline_s = deadline_s
        self.share_s = None if deadline_s is None else deadline_s / topics
        self.deadline_at = None if deadline_s is None else time.monotonic() + self.share_s
        self.used: dict[str, float] = {}  # topic -> seconds of its share spent before the topic last changed
        self.topic: str | None = None
        self.entered = time.monotonic()  # when the current topic's checks began
        self.deadline_passed = False

    def enter_topic(self, topic: str) -> None:
        """Later calls count against `topic`'s share of the run's deadline (the time spent in its checks)."""
        now = time.monotonic()
        if topic != self.topic:
            if self.topic is not None:
                self.used[self.topic] = self.used.get(self.topic, 0.0) + now - self.entered
            self.topic, self.entered = topic, now
            if self.share_s is not None:
                self.deadline_at = now + self.share_s - self.used.get(topic, 0.0)

    def deadline_text(self) -> str:
        """`the run's deadline of 60 s`, or `sampling's share (30 s) of the run's deadline of 60 s`."""
        run = tr("the run's deadline of {seconds:g} s", seconds=self.deadline_s)
        return run if self.share_s == self.deadline_s or self.topic is None else \
            tr("{topic}'s share ({seconds:g} s) of {run}", topic=self.topic, seconds=self.share_s, run=run)

    def check_deadline(self) -> float:
        """Seconds to the run's deadline (infinite without one); notes when it has passed."""
        left = float("inf") if self.deadline_at is None else self.deadline_at - time.monotonic()
        self.deadline_passed |= left <= 0
        return left

    def time_left(self, what: str) -> float:
        """Seconds to the run's deadline; a timeout ChildFailure once it has passed."""
        left = self.check_deadline()
        if left <= 0:
            raise ChildFailure("timeout", tr("{deadline} passed before {what}", deadline=self.deadline_text(),
                                             what=what))
        return left

    def take(self, config: dict) -> Child:
        """A started child for `config`; raises the recorded ChildFailure if this module already failed to import."""
        key = repr(sorted(config.items()))
        if key in self.import_failures:
            raise self.import_failures[key]
        sandbox = self.prepare(config)
        if sandbox is not None and sandbox.current is None:  # a second check open at once gets a chain of its own
            try:
                child = Child(self.zygote, config, sandbox)
                self.started.append(child)
                return child
            except TemplateRefused:  # a chain per check from now on: slower, with the same walls
                self.templates = False
                self._close_sandbox(sandbox)
        child = None
        if self.spare is not None:
            spare_key, spare = self.spare
            if spare_key == key:
                child = spare
            else:
                spare.discard()
        self.spare = (key, self._start(config))
        return child or self._start(config)

    def prepare(self, config: dict) -> TopicSandbox | None:
        """The sandbox for `config`'s checks, started now if there is none (it builds its root meanwhile); the
        least recently used ones past MAX_SANDBOXES are ended. None where templates are not used."""
        if not self.templates:
            return None
        key = sandbox_key(config)
        sandbox = self.sandboxes.pop(key, None)
        if sandbox is None or sandbox.broken:
            if sandbox is not None:
                self._close_sandbox(sandbox)
            sandbox = TopicSandbox(self.zygote, config, make_folder())
        self.sandboxes[key] = sandbox
        while len(self.sandboxes) > MAX_SANDBOXES:
            self._close_sandbox(self.sandboxes.pop(next(iter(self.sandboxes))))
        return sandbox

    def _close_sandbox(self, sandbox: TopicSandbox) -> None:
        for child in self.started:  # the checks it serves end with it
            if child.sandbox is sandbox:
                child.discard()
        self.started = [child for child in self.started if child.sandbox is not sandbox]
        self.sandboxes = {k: s for k, s in self.sandboxes.items() if s is not sandbox}
        sandbox.close()
        remove_folder(sandbox.tmpdir, sandbox.output_fd, sandbox.watch)

    def _start(self, config: dict) -> Child:
        child = Child(self.zygote, config)
        self.started.append(child)
        return child

    def record_import_failure(self, config: dict, failure: ChildFailure) -> None:
        self.import_failures[repr(sorted(config.items()))] = failure

    def close(self) -> None:
        """End every child and sandbox this pool started (the spare, and any a caller did not close) and remove
        their files."""
        for child in self.started:
            child.discard()
        self.started.clear()
        for sandbox in list(self.sandboxes.values()):
            self._close_sandbox(sandbox)
        self.spare = None
        remove_left_behind()
