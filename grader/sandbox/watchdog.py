"""Limits over every process of one sandbox, summed: PID 1 samples them and kills them all past a cap.

Per-process rlimits let a submission spread its memory over helper processes (a worker forked before a memory
check, say). PID 1 of the child's PID namespace, our code alone, reads every process of the namespace from its
private /proc every INTERVAL seconds: resident memory summed, tasks counted (where a memory cgroup can be made,
cgroup.py, the kernel also holds the memory cap, at every page; elsewhere this polling holds it alone).
Past a cap it kills them all. The resident sum is cheap (/proc/PID/stat) but counts the pages a fork shares with
its parent once per process; so once it passes the memory cap, the proportional sum (Pss, from
/proc/PID/smaps_rollup: milliseconds a process) decides, at most every PSS_SHARE of the time. Processes that
fork and exit to stay out of a pass are followed (each_process), the namespace is frozen while it is read
(frozen, over_cap), a process whose first thread has exited counts through its live threads (live), and an
address space that processes share counts once (Spaces). Under a topic's template PID 1 keeps a second process of
its own, the forker (template.py), which the watchdog neither counts nor kills (KEEPERS), and it reads /proc through
a view of its own (PROC: procfs.py), since the /proc the checks see shows none of PID 1's processes to a check and
none of a check's that made itself undumpable to PID 1. It also keeps the peak of the sum for the grader, through a
small shared page:

    slot GENERATION (grader): bumped before each call; PID 1 restarts the peak when it sees a new value
    slot SEEN (PID 1): the generation the peak belongs to
    slot PEAK (PID 1): the largest sum sampled since
    slot KILLED (PID 1): why it killed the sandbox (MEMORY or TASKS), 0 while it has not
    slot LIFE (PID 1): the largest sum sampled since the sandbox started
"""
from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import platform
import select
import signal
import struct
import time

from grader.sandbox import cgroup

INTERVAL = 0.01
PSS_SHARE = 0.1  # the proportional sum takes at most this share of PID 1's time
TASKS = 128  # processes and threads together: a submission needs a few; torch runs one thread per child
RELISTS = 8
PASSES = 4
GENERATION, SEEN, PEAK, KILLED, CAP, LIFE = range(6)
SIZE = 64
MEMORY, TASKS_KILLED = 1, 2
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
KCMP, KCMP_VM = {"x86_64": 312, "aarch64": 272}.get(platform.machine()), 1
_LIBC = ctypes.CDLL(None, use_errno=True)
PROC = "/proc"  # where PID 1 reads the namespace's processes (template.py points it at a view of its own)
KEEPERS = {"1"}  # the processes of the namespace that are PID 1's own: never counted, stopped only with the rest


def each_process(read) -> None:
    """Call read(pid) for every process in this PID namespace but PID 1's own; read says False when the process has
    ended. A process that forks and exits between the listing and its read hands its memory to a pid that the
    listing did not hold, so /proc is listed again, for the new pids only, while any has ended (RELISTS times
    at most: each round the chain must fork and exit within microseconds of its read)."""
    seen: set[str] = set()
    for _ in range(RELISTS):
        fresh = [name for name in os.listdir(PROC) if name.isdigit() and name not in KEEPERS and name not in seen]
        seen.update(fresh)
        if all([read(name) for name in fresh]):
            return


ENDED = (b"Z", b"X", b"x")
STOPPED = (b"T", b"t", *ENDED)
FREEZE_WAIT = 0.05


def _stat(path: str) -> list[bytes] | None:
    """The fields of a /proc stat file after the command name (field 3, the state, first); None if unreadable."""
    try:
        with open(path, "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def live(name: str) -> tuple[int, int, str] | None:
    """(threads, resident bytes, the id of a live thread) of a process; None once it has ended.

    A process whose first thread exited on its own shows as a zombie while its other threads run on, holding
    all its memory: its live threads count, read through one of them (the first thread has no memory map)."""
    fields = _stat(f"{PROC}/{name}/stat")
    if fields is None:
        return None
    if fields[0] not in ENDED:
        return int(fields[17]), int(fields[21]) * PAGE, name  # fields 20 and 24: num_threads, rss in pages
    try:
        tids = os.listdir(f"{PROC}/{name}/task")
    except OSError:
        return None
    threads = [(tid, f) for tid in tids if (f := _stat(f"{PROC}/{name}/task/{tid}/stat")) and f[0] not in ENDED]
    if not threads:
        return None
    tid, fields = threads[0]
    return len(threads), int(fields[21]) * PAGE, tid


def same_memory(a: str, b: str) -> bool:
    """Whether live threads a and b share one address space (a vfork child before its exec, a clone(CLONE_VM)):
    kcmp(KCMP_VM), which finds two threads without a memory map (exited first threads) alike too, hence live
    ones; False where the kernel lacks kcmp."""
    return KCMP is not None and _LIBC.syscall(KCMP, int(a), int(b), KCMP_VM, 0, 0) == 0


class Spaces:
    """The address spaces already counted in a pass, by resident size: one space is counted once, however many
    processes share it (Python's subprocess runs `true` from a vfork child that shows its parent's memory)."""

    def __init__(self):
        self.by_size: dict[int, list[str]] = {}

    def first(self, thread: str, resident: int) -> bool:
        """Whether the address space of `thread` (live) is one not counted yet in this pass (and count it)."""
        seen = self.by_size.setdefault(resident, [])
        if any(same_memory(other, thread) for other in seen):
            return False
        seen.append(thread)
        return True


def sample() -> tuple[int, int]:
    """(resident bytes summed, tasks counted) over the namespace's live processes."""
    total = tasks = 0
    spaces = Spaces()

    def read(name: str) -> bool:
        nonlocal total, tasks
        found = live(name)
        if found is not None:
            tasks += found[0]
            total += found[1] if spaces.first(found[2], found[1]) else 0
        return found is not None

    each_process(read)
    return total, tasks


def proportional() -> tuple[int, bool]:
    """(proportional resident bytes summed as in sample, whether a process ended during the pass).

    Shared pages are split among the processes sharing them. A process whose summary PID 1 cannot read counts
    with its whole resident size: a submission can make itself unreadable (prctl(PR_SET_DUMPABLE, 0) undoes
    walls.let_init_read), and it must not hide its memory so.
    """
    total, ended = 0, False
    spaces = Spaces()

    def read(name: str) -> bool:
        nonlocal total, ended
        found = live(name)
        if found is None:
            ended = True
            return False
        if not spaces.first(found[2], found[1]):
            return True
        pss = None
        try:
            with open(f"{PROC}/{name}/task/{found[2]}/smaps_rollup", "rb") as f:
                pss = next((int(line.split()[1]) * 1024 for line in f if line.startswith(b"Pss:")), None)
        except OSError:
            pass
        still = live(name)
        if still is None:  # what it held while being read, if anything: the pass is done again
            ended = True
            total += pss or 0
            return False
        total += still[1] if pss is None else pss
        return True

    each_process(read)
    return total, ended


def all_stopped() -> bool:
    """Whether every thread of every process in the namespace but PID 1's own is stopped or has ended."""
    for name in os.listdir(PROC):
        if not name.isdigit() or name in KEEPERS:
            continue
        try:
            tids = os.listdir(f"{PROC}/{name}/task")
        except OSError:
            continue  # ended
        for tid in tids:
            fields = _stat(f"{PROC}/{name}/task/{tid}/stat")
            if fields is not None and fields[0] not in STOPPED:
                return False
    return True


@contextlib.contextmanager
def frozen():
    """Every process of the namespace but PID 1 stopped (SIGSTOP) for as long as PID 1 reads them, at most
    FREEZE_WAIT seconds waited for: none can fork or exit mid-pass (a chain of forks that exit, each handing
    its pages to the next, otherwise stays a step ahead of the reads). Continued (SIGCONT) after (PID 1's forker,
    idle meanwhile, with them)."""
    assert os.getpid() == 1, "kill(-1) must reach this PID namespace only"
    deadline = time.monotonic() + FREEZE_WAIT
    try:
        while True:
            os.kill(-1, signal.SIGSTOP)  # again: a fork in flight during the last one may have missed it
            if all_stopped() or time.monotonic() > deadline:
                break
            time.sleep(0.0005)
        yield
    finally:
        os.kill(-1, signal.SIGCONT)


def over_cap(cap: int) -> tuple[bool, int]:
    """Whether the proportional sum passes `cap`, read with the namespace frozen, and the sum last read. Should a
    process still end during a pass (one that would not stop in time), the pass is done again, up to PASSES times:
    its pages may live on in a fork that the pass read while it still shared them, or they may be gone (a
    short-lived worker, which must not be counted twice)."""
    total = 0
    for _ in range(PASSES):
        with frozen():
            total, ended = proportional()
        if total > cap:
            return True, total
        if not ended:
            return False, total
    return False, total


def guard(inner: int, fd: int, memory_bytes: int | None) -> int:
    """As PID 1: reap and sample until the process `inner` ends; its wait status. Kills all past the caps
    (memory: `memory_bytes` over the first sample; None, no memory cap). First in line for the kernel's OOM killer
    (cgroup.offer_first): under a v1 memory cgroup its death is what ends the whole sandbox."""
    watch = Guard(fd, memory_bytes)
    os.close(fd)
    cgroup.offer_first()
    return watch.until_ended(inner)


class Guard:
    """PID 1's watch over the namespace's processes for one submission's process (one check), through the page."""

    def __init__(self, fd: int, memory_bytes: int | None):
        self.map = mmap.mmap(fd, SIZE)
        self.view = memoryview(self.map).cast("q")
        self.memory_bytes = memory_bytes
        self.cap: int | None = None
        self.next_pss = 0.0
        self.read_at = (0, 0)  # (resident sum, proportional sum) when the proportional sum was last read

    def until_ended(self, inner: int, wake: int | None = None, until: float = float("inf")) -> int | None:
        """Reap and sample until `inner` ends (its wait status), or None once the descriptor `wake` is readable or
        the monotonic time `until` has passed."""
        view = self.view
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
                while pid:
                    if pid == inner:
                        return status
                    pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return 0
            total, tasks = sample()
            if self.cap is None:
                self.cap = view[CAP] = total + self.memory_bytes if self.memory_bytes is not None else 2**62
            generation = view[GENERATION]
            if view[SEEN] != generation:
                view[PEAK] = total
                view[SEEN] = generation
            elif total > view[PEAK]:
                view[PEAK] = total
            view[LIFE] = max(view[LIFE], total)
            if tasks > TASKS:
                _kill_all(view, TASKS_KILLED)
            elif total > self.cap and (time.monotonic() >= self.next_pss or
                                       total - self.read_at[0] > self.cap - self.read_at[1]):
                # read at once, whatever its share of the time, when the resident sum grew by more than the room the
                # last read left: new pages count whole in both sums (two workers each filling 2 GiB outran a read
                # every tenth of the time). Pages a fork shares, written later, grow only the proportional one.
                started = time.monotonic()
                over, proportional_sum = over_cap(self.cap)
                if over:
                    _kill_all(view, MEMORY)
                self.read_at = (total, proportional_sum)
                self.next_pss = time.monotonic() + (time.monotonic() - started) / PSS_SHARE
            if wake is None:
                time.sleep(INTERVAL)
            elif select.select([wake], [], [], INTERVAL)[0]:
                return None
            if time.monotonic() >= until:
                return None

    def close(self) -> None:
        self.view.release()
        self.map.close()


def restart_page(fd: int) -> None:
    """Zero what PID 1 wrote on the page (a new check starts): its peaks, its kill and its cap, not the grader's
    generation."""
    os.pwrite(fd, struct.pack("<5q", -1, 0, 0, 0, 0), 8 * SEEN)


def _kill_all(view: memoryview, reason: int) -> None:
    view[KILLED] = reason
    kill_others()


def kill_others() -> None:
    """As PID 1: SIGKILL every process of the namespace but PID 1's own (KEEPERS). kill(-1) spares only PID 1, so
    where PID 1 keeps others every process is first stopped by one kill(-1, SIGSTOP), after which none can fork (a
    fork fails while a signal is pending), then each but PID 1's own is killed and those are continued."""
    assert os.getpid() == 1, "kill(-1) must reach this PID namespace only"
    try:
        os.kill(-1, signal.SIGKILL if KEEPERS == {"1"} else signal.SIGSTOP)
    except ProcessLookupError:
        return  # none left
    if KEEPERS == {"1"}:
        return
    for name in os.listdir(PROC):
        if name.isdigit() and name not in KEEPERS:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(name), signal.SIGKILL)
    for name in KEEPERS - {"1"}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(name), signal.SIGCONT)


def memory_message(cap: int) -> str:
    """How a sandbox killed for passing its summed memory cap of `cap` bytes ended, in words (the watchdog's kill
    and the kernel's, in a memory cgroup, read alike)."""
    from grader.language import tr  # the grader's side only: the sandbox's PID 1 imports this module too

    return tr("was killed by the sandbox: its processes together held more than {gib:.1f} GiB of memory",
              gib=cap / 2**30)


class Page:
    """Grader side: the shared page of one child, created (zeroed) before the child opens it behind its walls."""

    def __init__(self, path: str):
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, SIZE)
            self.map = mmap.mmap(fd, SIZE)
        finally:
            os.close(fd)
        self.view = memoryview(self.map).cast("q")

    def reset(self) -> None:
        """Start a new peak (read it with `peak` after the call)."""
        self.view[GENERATION] += 1

    def peak(self, wait: float = 0.05) -> int | None:
        """The summed peak since the last reset, waiting up to `wait` s for a first sample; None without one."""
        view, deadline = self.view, time.monotonic() + wait
        while view[SEEN] != view[GENERATION]:
            if time.monotonic() > deadline:
                return None
            time.sleep(INTERVAL / 4)
        return view[PEAK]

    def life(self) -> int | None:
        """The largest sum sampled since the sandbox started; None before the first sample."""
        return self.view[LIFE] or None

    def killed(self) -> str | None:
        """Why PID 1 killed the sandbox, in words; None if it did not."""
        reason = self.view[KILLED]
        if reason == MEMORY:
            return memory_message(self.view[CAP])
        if reason == TASKS_KILLED:
            from grader.language import tr

            return tr("was killed by the sandbox: it ran more than {tasks} processes and threads at once", tasks=TASKS)
        return None

    def close(self) -> None:
        self.view.release()
        self.map.close()
