"""A memory cgroup per sandbox child, where the kernel lets the grader make one, holds its summed memory cap; a cpu
cgroup gives it a CPU share of its own.

The watchdog (watchdog.py) polls, and a poll can be starved or outrun by workers that fill gigabytes between two
reads; a cgroup's limit is charged by the kernel at every page the sandbox's processes take. Where a memory
controller is writable below the grader's own cgroup (cgroup v2 first, then v1; root, or a delegated subtree),
each child, first thing after the zygote forks it, makes `infergrade-<grader pid>-<child pid>`, caps it at the
sandbox's memory_bytes with swap closed, and moves in: every process of the sandbox is born inside. After the
child ended the zygote reads whether the kernel killed in it for memory, kills what is left and removes it; the
grader removes at start the cgroups of graders that are gone. Where none is writable nothing changes: the
watchdog alone holds the cap.

On a kill for memory, v2 ends the whole cgroup (memory.oom.group). v1 has no such switch, so PID 1 of the
sandbox offers itself first to the kernel's OOM killer (`offer_first`): its death ends the whole PID namespace.

The kernel's scheduler is fair between threads, and between groups of them only where it groups them: with
sched_autogroup_enabled each sandbox is a session of its own (the zygote's setsid), so a classmate's 64 busy threads
in `grade-batch --jobs 2` weighed as much as one check. Where autogroup is off, they took 64 shares of the CPU to
the check's one, and its calls ran past their time limits. So each child also makes a cgroup of the cpu controller,
with the same weight as every other sandbox's: its checks' threads share one sandbox's part of the CPU, however many
they are. Under v2 it is the memory cgroup's folder, which the child enters whole. Under v1 only the checks'
processes are in it: a template's forker enters it (`join`, leaving the real-time class first) and forks each check's
process there; a chain's check process enters it itself. It does so through a descriptor the child opened (the
private root has no /sys): with real-time group scheduling a new v1 cgroup gets no real-time time, and PID 1's
watchdog, in the real-time class where the grader is root, must stay out of it; nor may a check's threads crowd it
out. Where no cpu cgroup can be made, limits.py caps the check's CPU time and lowers its priority.
"""
from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass

from grader.sandbox import namespaces

PREFIX = "infergrade-"  # + the grader's pid + "-" + the child's pid
MARKER = {"memory": "memory.limit_in_bytes", "cpu": "cpu.shares"}  # a v1 hierarchy's file naming its controller
CPU_WEIGHT, CPU_SHARES = 100, 1024  # each sandbox's weight: the kernel's default for a cgroup (v2, v1)
PAUSE = 0.01
STALE_WAIT = 1.0  # seconds the processes left in a killed grader's cgroups get to end once killed


@dataclass(frozen=True)
class Controller:
    """A writable memory controller: its version ("v2" or "v1") and this process's cgroup folder in it."""

    version: str
    base: str


def _mounts() -> list[tuple[str, set[str], str, str]]:
    """(type, super options, root, mount point) of every cgroup file system this process sees."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields, _, tail = line.partition(" - ")
            fields, tail = fields.split(), tail.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((tail[0], set(tail[2].split(",")), fields[3], fields[4]))
    return found


def _own(controller: str) -> dict[str, str]:
    """This process's cgroup paths: "v2" (the unified hierarchy) and "v1" (the v1 hierarchy holding `controller`)."""
    own = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            number, controllers, path = line.rstrip("\n").split(":", 2)
            if number == "0" and controllers == "":
                own["v2"] = path
            elif controller in controllers.split(","):
                own["v1"] = path
    return own


def _folder(root: str, point: str, path: str) -> str | None:
    """The folder of cgroup `path` under a mount of the hierarchy's `root` at `point`; None if outside it."""
    if root != "/" and path != root and not path.startswith(root + "/"):
        return None
    return os.path.join(point, path[len(root):].lstrip("/") if root != "/" else path.lstrip("/"))


def _v2_usable(folder: str, controller: str) -> bool:
    """Whether cgroups made below `folder` get `controller` (enabling it where the kernel allows: it refuses, EBUSY,
    in a cgroup that holds processes, unless it is the root)."""
    try:
        with open(os.path.join(folder, "cgroup.subtree_control")) as f:
            if controller in f.read().split():
                return True
        with open(os.path.join(folder, "cgroup.subtree_control"), "w") as f:
            f.write(f"+{controller}")
        return True
    except OSError:
        return False


def find() -> Controller | None:
    """The memory controller in which this process may make cgroups below its own: v2 first, then v1."""
    return _find("memory")


def find_cpu() -> Controller | None:
    """The cpu controller in which this process may make cgroups below its own: v2 first, then v1."""
    return _find("cpu")


def _find(controller: str) -> Controller | None:
    try:
        mounts, own = _mounts(), _own(controller)
    except (OSError, ValueError):
        return None
    for fstype, version in (("cgroup2", "v2"), ("cgroup", "v1")):
        for kind, options, root, point in mounts:
            if kind != fstype or version not in own or (version == "v1" and controller not in options):
                continue
            folder = _folder(root, point, own[version])
            if folder is None or not os.access(folder, os.W_OK):
                continue
            if version == "v1" and os.path.exists(os.path.join(folder, MARKER[controller])):
                return Controller("v1", folder)
            if version == "v2" and _v2_usable(folder, controller):
                return Controller("v2", folder)
    return None


def _write(folder: str, name: str, value: str) -> None:
    with open(os.path.join(folder, name), "w") as f:
        f.write(value)


def _members(folder: str) -> list[int]:
    try:
        with open(os.path.join(folder, "cgroup.procs")) as f:
            return [int(pid) for pid in f.read().split()]
    except OSError:
        return []


def _kill_members(folder: str) -> None:
    """SIGKILL every process in the cgroup (v2's cgroup.kill, where the kernel has it, also catches forks)."""
    try:
        _write(folder, "cgroup.kill", "1")
    except OSError:
        pass
    for pid in _members(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _remove(folder: str) -> bool:
    """Kill what is left in the cgroup and remove it; False while its processes are still ending (EBUSY)."""
    _kill_members(folder)
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _remove_all(folders: list[str], wait: float) -> list[str]:
    """Remove the cgroups `folders`, waiting up to `wait` seconds for their processes to end; those still busy."""
    deadline = time.monotonic() + wait
    while True:
        folders = [folder for folder in folders if not _remove(folder)]
        if not folders or time.monotonic() >= deadline:
            return folders
        time.sleep(PAUSE)


class Cgroups:
    """The memory and cpu cgroups of one grader's sandbox children (held by the zygote; `enter` and `enter_cpu` run
    in the child)."""

    def __init__(self, controller: Controller | None, grader: int, cpu: Controller | None = None):
        self.controller, self.grader, self.cpu = controller, grader, cpu
        self.busy: list[str] = []  # removed children's cgroups whose processes were still ending

    def folder(self, child: int) -> str:
        assert self.controller is not None, "no memory controller"
        return os.path.join(self.controller.base, f"{PREFIX}{self.grader}-{child}")

    def cpu_folder(self, child: int) -> str:
        assert self.cpu is not None, "no cpu controller"
        return os.path.join(self.cpu.base, f"{PREFIX}{self.grader}-{child}")

    def enter(self, cap: int | None) -> str | None:
        """In a freshly forked child: make its cgroup, cap it at `cap` bytes with no swap, move in; the version
        that holds the cap, None where there is no cap or no cgroup could be made (the watchdog alone holds)."""
        if self.controller is None or cap is None:
            return None
        folder = self.folder(os.getpid())
        try:
            os.mkdir(folder, 0o700)
            if self.controller.version == "v2":
                _write(folder, "memory.max", str(cap))
                if os.path.exists(os.path.join(folder, "memory.swap.max")):
                    _write(folder, "memory.swap.max", "0")
                _write(folder, "memory.oom.group", "1")
            else:
                _write(folder, "memory.limit_in_bytes", str(cap))
                if os.path.exists(os.path.join(folder, "memory.memsw.limit_in_bytes")):  # memory and swap
                    _write(folder, "memory.memsw.limit_in_bytes", str(cap))
            _write(folder, "cgroup.procs", str(os.getpid()))
        except OSError:
            return None  # what was made is removed with the child's cgroup once it ended
        return self.controller.version

    def enter_cpu(self) -> str | None:
        """In a freshly forked child, after `enter`: a cpu cgroup of its own, weighing as much as every other
        sandbox's; the version that holds it, None where none could be made. Under v2 it is the memory cgroup's
        folder, and the child moves in; under v1 the process that forks the checks does (`procs`, `join`)."""
        if self.cpu is None:
            return None
        folder = self.cpu_folder(os.getpid())
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o700)
            if self.cpu.version == "v2":
                _write(folder, "cpu.weight", str(CPU_WEIGHT))
                _write(folder, "cgroup.procs", str(os.getpid()))
            else:
                _write(folder, "cpu.shares", str(CPU_SHARES))
        except OSError:
            return None  # what was made is removed with the child's cgroups once it ended
        return self.cpu.version

    def procs(self) -> int | None:
        """In the child, where its cpu cgroup is v1: a descriptor of the cgroup's cgroup.procs, for `join`."""
        if self.cpu is None or self.cpu.version != "v1":
            return None
        try:
            return os.open(os.path.join(self.cpu_folder(os.getpid()), "cgroup.procs"), os.O_WRONLY)
        except OSError:
            return None

    def killed_for_memory(self, child: int) -> bool:
        """Whether the kernel killed a process of the child's cgroup for passing its cap (read once it ended)."""
        if self.controller is None:
            return False
        name = "memory.events" if self.controller.version == "v2" else "memory.oom_control"
        try:
            with open(os.path.join(self.folder(child), name)) as f:
                counts = dict(line.split() for line in f if len(line.split()) == 2)
        except OSError:
            return False
        return int(counts.get("oom_kill", 0)) > 0

    def remove(self, child: int) -> None:
        """Kill what is left in the child's cgroups and remove them, now or, while their processes end, later."""
        folders = {self.folder(child)} if self.controller is not None else set()
        folders |= {self.cpu_folder(child)} if self.cpu is not None else set()
        self.busy += [folder for folder in sorted(folders) if not _remove(folder)]

    def sweep(self, wait: float = 0.0) -> None:
        """Remove the cgroups that were still busy, waiting up to `wait` seconds for their processes to end."""
        self.busy = _remove_all(self.busy, wait)


def remove_stale(controller: Controller | None = None) -> int:
    """Remove the sandbox cgroups below this process's own (in `controller`; by default in the memory and the cpu
    one) whose grader is no longer running (killed before it could clean up); how many were removed."""
    bases = {c.base for c in ([controller] if controller else [find(), find_cpu()]) if c is not None}
    stale = []
    for base in sorted(bases):
        for name in os.listdir(base):
            grader, _, child = name[len(PREFIX):].partition("-")
            if name.startswith(PREFIX) and grader.isdigit() and child.isdigit() and \
                    not os.path.exists(f"/proc/{grader}"):
                stale.append(os.path.join(base, name))
    return len(stale) - len(_remove_all(stale, wait=STALE_WAIT))


def join(procs: int | None) -> None:
    """In a check's process or a forker, in the ordinary class and before it drops its capabilities: move into the
    v1 cpu cgroup whose cgroup.procs `procs` is (None: none, or the child is in its v2 one already) and close it;
    then root /proc/self/cgroup there (a new cgroup namespace), so that the check reads no cgroup's name. Where the
    kernel refuses the move, `held` says so."""
    global _left_out
    if procs is None:
        return
    try:
        os.write(procs, b"0")  # 0: the writer
    except OSError:
        _left_out = True
        return
    finally:
        os.close(procs)
    namespaces.libc().unshare(namespaces.CLONE_NEWCGROUP)  # best effort: the name holds host pids, nothing more


_left_out = False  # set where `join` failed


def held(version: str | None) -> str | None:
    """In a check's process: the version of the cpu cgroup it runs in (`version`, as its sandbox's child made it),
    None where it made none or the move into it failed."""
    return None if _left_out else version


def offer_first() -> int | None:
    """Make this process (PID 1 of a sandbox) the OOM killer's first choice: under cgroup v1, which cannot kill a
    cgroup whole, its death ends every process of its PID namespace. Its score before (None where unknown): a
    process it forks later inherits the offer and gives it back (`withdraw`)."""
    try:
        with open("/proc/self/oom_score_adj", "r+") as f:
            before = int(f.read())
            f.seek(0)
            f.write("1000")
        return before
    except (OSError, ValueError):
        return None


def withdraw(before: int | None) -> None:
    """In a process forked from one that offered itself first: its score as before the offer (a process may lower
    its score back to what it inherited), so that the OOM killer still picks PID 1, not this process alone."""
    if before is None:
        return
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(before))
    except OSError:
        pass
