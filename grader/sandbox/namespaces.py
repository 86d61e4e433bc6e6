"""New namespaces for a child (user, mount, PID, network, IPC, UTS) and its id maps; process lifetime controls.

The process that unshares cannot give itself more than one id in its map, so its parent, still in the host's
namespaces, writes the maps: inside uid 0 is the grader's uid (it builds the sandbox's root), and, when the
grader is root, inside uid NOBODY is the host's NOBODY, which the submission runs as (never root towards the host).
"""
from __future__ import annotations

import ctypes
import os
import struct
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP = 0x10000000, 0x20000000, 0x40000000, 0x02000000
ALL = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38
PR_CAPBSET_DROP, PR_SET_SECUREBITS = 24, 28
SECBIT_NOROOT_ALL = 0x1 | 0x2 | 0x4 | 0x8 | 0x20  # noroot, no_setuid_fixup (each locked), keep_caps locked off
CAPABILITY_V3 = 0x20080522
NOBODY = 65534
NONE = {"user_namespace": False, "mount_namespace": False, "pid_namespace": False, "network_namespace": False,
        "ipc_namespace": False, "uts_namespace": False, "cgroup_namespace": False}


def libc():
    return ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def unshare_all() -> dict:
    """Enter new namespaces of every kind (single-threaded, before forking the namespace's PID 1). The cgroup
    namespace, where the kernel has one, roots /proc/self/cgroup at the sandbox's own cgroups: their names hold the
    host's pids, which /proc/stat's count of forks dates."""
    lib = libc()
    if lib is None or lib.unshare(ALL) != 0:
        return dict(NONE)
    return {**{k: True for k in NONE}, "cgroup_namespace": lib.unshare(CLONE_NEWCGROUP) == 0}


def write_maps(pid: int, uid: int, gid: int) -> int | None:
    """From the host's side, map `pid`'s new user namespace; returns the uid the submission should take inside.

    NOBODY when the host uid NOBODY could be mapped too (the grader is root), else None (the grader's own
    unprivileged uid is all there is).
    """
    try:
        _write(f"/proc/{pid}/uid_map", f"0 {uid} 1\n{NOBODY} {NOBODY} 1\n")
        _write(f"/proc/{pid}/gid_map", f"0 {gid} 1\n{NOBODY} {NOBODY} 1\n")
        return NOBODY
    except OSError:
        pass
    _write(f"/proc/{pid}/setgroups", "deny")
    _write(f"/proc/{pid}/uid_map", f"0 {uid} 1\n")
    _write(f"/proc/{pid}/gid_map", f"0 {gid} 1\n")
    return None


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def become(uid: int) -> None:
    """Drop to `uid` (and the same gid) with no supplementary groups and no capabilities."""
    if os.getuid() == 0:
        os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def drop_capabilities() -> None:
    """Give up every capability, for good: the submission's process is uid 0 of its user namespace where the
    grader is not root, and would otherwise pass every permission check there (list a folder of mode 0111)."""
    lib = libc()
    if lib is None:
        return
    lib.prctl(PR_SET_SECUREBITS, SECBIT_NOROOT_ALL, 0, 0, 0)  # no capabilities back from an execve as uid 0
    for cap in range(64):
        lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = struct.pack("<Ii", CAPABILITY_V3, 0)
    none = bytes(24)  # effective, permitted, inheritable: two 32-bit words each, all zero
    lib.capset(ctypes.c_char_p(header), ctypes.c_char_p(none))


def take_realtime() -> None:
    """Run this process, and what it forks, in the real-time class ahead of every ordinary process, where the
    grader may (root): the sandbox's PID 1 inherits it, so that no load on the host can starve its samples."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except (OSError, AttributeError):
        pass  # an ordinary process, as before


def leave_realtime() -> bool:
    """Back to the ordinary class (always allowed); whether this process was in the real-time one."""
    if not hasattr(os, "sched_getscheduler"):
        return False
    was = os.sched_getscheduler(0) == os.SCHED_FIFO
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    assert os.sched_getscheduler(0) == os.SCHED_OTHER, "a submission must never run in the real-time class"
    return was


def let_init_read() -> None:
    """Stay readable by PID 1 of the sandbox (its memory summary, /proc/PID/smaps_rollup) after `become`, which
    clears the flag; seccomp still denies ptrace to the submission, and no other sandbox sees this process."""
    lib = libc()
    if lib is not None:
        lib.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)


def hide() -> None:
    """Make this process undumpable: under the sandbox's /proc (procfs.py) it then does not exist for a process of
    its uid without capabilities (a check, where the grader is not root), which can neither read nor trace it."""
    lib = libc()
    if lib is not None:
        lib.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def no_new_privileges() -> None:
    """Make execve unable to grant privileges (setuid bits, file capabilities) to this process and its children."""
    lib = libc()
    if lib is not None:
        lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent exits."""
    lib = libc()
    if lib is not None:
        lib.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)


def adopt_orphans() -> None:
    """Become the reaper of orphaned descendants, so that no process of a submission outlives the grader."""
    lib = libc()
    if lib is not None:
        lib.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
