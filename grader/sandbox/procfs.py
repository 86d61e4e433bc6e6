"""The sandbox's /proc: a check sees its own processes only; PID 1 reads every process through a view of its own.

PID 1's counters (the faults and CPU time of the children it reaped, its context switches, its schedstat) and
those of the process that forks each check grow with every check of a topic's sandbox and with what each did: a
check that read them knew how many checks ran before it, and read a number an earlier one left (a child that
faulted N pages moved PID 1's cminflt on by N). So the /proc a check sees is mounted with hidepid=invisible: there a
process exists only for those who may ptrace it, which PID 1 and the forker are not for a check (another uid where
the grader is root; not dumpable where they share the check's uid: namespaces.hide).

PID 1's watchdog must read every process of the namespace, one that made itself undumpable included: it reads
through a /proc of its own, mounted without hidepid and detached at once, held by a descriptor that no other process
has, in no folder. The checks' /proc is mounted anew before each check (`renew`): no entry of it, nor its inode
number or timestamps, was made before the check.
"""
from __future__ import annotations

import ctypes
import os

MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x2, 0x4, 0x8
MS_BIND, MS_MOVE, MNT_DETACH = 0x1000, 0x2000, 0x2
FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC
# gid: the group whose members see every process anyway, by default gid 0 of the host, which a check has where the
# grader is root and its sandbox maps one id; gid 1 is one the sandbox's user namespace does not map: no one's
HIDING = ("hidepid=invisible,gid=1", "hidepid=2,gid=1")  # Linux 5.8's name for it, then the number older ones take


def _mount(target: str, options: str | None) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"proc", target.encode(), b"proc", FLAGS, options and options.encode()) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount proc on {target} ({options}): {os.strerror(errno)}")


def _detach(target: str) -> None:
    if ctypes.CDLL(None, use_errno=True).umount2(target.encode(), MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"detaching {target}: {os.strerror(errno)}")


def mount_hidden(target: str) -> bool:
    """Mount at `target` a /proc that shows a process only to those who may ptrace it, its `stat` empty; whether the
    kernel took the option (where it does not, a plain /proc: the namespace's processes are visible, as before).

    /proc/stat counts the forks of the whole host since boot: beside a host pid a check can read (the grader's, in
    the names of its folders), the forks since, those of the checks before it included."""
    hidden = False
    for options in HIDING:
        try:
            _mount(target, options)
            hidden = True
            break
        except OSError:
            continue
    else:
        _mount(target, None)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"/dev/null", f"{target}/stat".encode(), None, MS_BIND, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"covering {target}/stat: {os.strerror(errno)}")
    return hidden


def private_view(spot: str) -> int:
    """As PID 1, once the private root is built: a descriptor of a /proc showing every process of the namespace,
    mounted at the empty folder `spot` and detached from it at once."""
    _mount(spot, None)
    try:
        return os.open(spot, os.O_RDONLY | os.O_DIRECTORY)
    finally:
        _detach(spot)


def renew(spot: str) -> bool:
    """As PID 1 between two checks: a new /proc in place of the last one (see mount_hidden), mounted first at the
    empty folder `spot`: in a user namespace the kernel mounts a /proc only beside one fully visible. Done twice:
    the kernel hands each new mount the lowest free device number and mount id, so that once the new one takes the
    other's and the second time the old one's back, where once would alternate the two from check to check."""
    libc = ctypes.CDLL(None, use_errno=True)
    for _ in range(2):
        hidden = mount_hidden(spot)
        _detach("/proc")
        if libc.mount(spot.encode(), b"/proc", None, MS_MOVE, None) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"moving the new /proc in place: {os.strerror(errno)}")
    return hidden


def hides() -> bool:
    """Whether the /proc this process sees shows it only the processes it may trace (read from its mount options)."""
    options = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields, _, tail = line.partition(" - ")
                if fields.split()[4] == "/proc" and tail.split()[0] == "proc":
                    options = tail.split()[2].split(",")  # the last mount at /proc is the one seen
    except (OSError, IndexError):
        return False
    return any(option in ("hidepid=invisible", "hidepid=2") for option in options)
