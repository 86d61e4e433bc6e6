"""Linux isolation for the child, each step best effort: namespaces, Landlock, rlimits, a scrubbed environment.

What was reached is reported back and recorded in the results; on other systems only the rlimits and the
timeouts apply.
"""
from __future__ import annotations

import ctypes
import os
import resource
import struct
import sys

CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38
SYS_LANDLOCK = {"create": 444, "add_rule": 445, "restrict_self": 446}  # x86-64 and the generic table (arm64)

_FILE_RIGHTS = (1 << 0) | (1 << 1) | (1 << 2)  # execute, write file, read file
_READ = (1 << 0) | (1 << 2) | (1 << 3)          # execute, read file, read dir
_WRITE_ALL_V1 = (1 << 13) - 1                   # every right of ABI 1


def _libc():
    return ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def enter_namespaces() -> dict:
    """Unshare user, network and PID namespaces (call in a single-threaded process before forking the inner child)."""
    libc = _libc()
    if libc is None:
        return {"user_namespace": False, "network_namespace": False, "pid_namespace": False}
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID) != 0:
        return {"user_namespace": False, "network_namespace": False, "pid_namespace": False}
    for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                       ("/proc/self/gid_map", f"{gid} {gid} 1")):
        with open(path, "w") as f:
            f.write(text)
    return {"user_namespace": True, "network_namespace": True, "pid_namespace": True}


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent exits."""
    libc = _libc()
    if libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)


def adopt_orphans() -> None:
    """Become the reaper of orphaned descendants, so that no process of a submission outlives the grader."""
    libc = _libc()
    if libc is not None:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def landlock_abi() -> int:
    libc = _libc()
    if libc is None:
        return 0
    abi = libc.syscall(SYS_LANDLOCK["create"], None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(abi, 0)


def restrict_filesystem(read_roots: list[str], write_roots: list[str], hidden: list[str], submission: str) -> int:
    """Allow reading only `read_roots` (minus anything under `hidden`) and the `submission` folder, and writing
    only `write_roots`.

    Returns the Landlock ABI enforced, 0 when unavailable.
    """
    libc = _libc()
    abi = landlock_abi()
    if abi < 1:
        return 0
    handled = _WRITE_ALL_V1 | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0) \
        | (1 << 15 if abi >= 5 else 0)
    handled_net = 0b11 if abi >= 4 else 0       # bind and connect TCP: none allowed
    scoped = 0b11 if abi >= 6 else 0            # no abstract unix sockets or signals out of the sandbox
    attr = struct.pack("<QQQ", handled, handled_net, scoped)
    ruleset = libc.syscall(SYS_LANDLOCK["create"], ctypes.c_char_p(attr), len(attr), 0)
    if ruleset < 0:
        return 0
    try:
        hidden_real = [os.path.realpath(h) for h in hidden]
        for root in read_roots:
            _grant_visible(libc, ruleset, os.path.realpath(root), _READ, hidden_real)
        _grant(libc, ruleset, os.path.realpath(submission), _READ)  # also where it lies inside a hidden folder
        for root in write_roots:
            _grant(libc, ruleset, os.path.realpath(root), handled)
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if libc.syscall(SYS_LANDLOCK["restrict_self"], ruleset, 0) != 0:
            return 0
    finally:
        os.close(ruleset)
    return abi


def _grant_visible(libc, ruleset: int, path: str, access: int, hidden: list[str]) -> None:
    """Grant `path`, descending around any hidden path below it."""
    if any(path == h or path.startswith(h + os.sep) for h in hidden):
        return
    if not any(h.startswith(path.rstrip(os.sep) + os.sep) for h in hidden):
        _grant(libc, ruleset, path, access)
        return
    try:
        entries = os.listdir(path)
    except OSError:
        return
    for name in entries:
        _grant_visible(libc, ruleset, os.path.join(path, name), access, hidden)


def _grant(libc, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= _FILE_RIGHTS | (1 << 14) | (1 << 15)
        rule = struct.pack("<Qi", access, fd)
        libc.syscall(SYS_LANDLOCK["add_rule"], ruleset, 1, ctypes.c_char_p(rule), 0)
    finally:
        os.close(fd)


def status_bytes(pid: int | str, field: str) -> int | None:
    """A size from /proc/PID/status (`VmSize`: virtual size, `VmHWM`: peak resident); None where unknown."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def apply_rlimits(memory_bytes: int | None, output_bytes: int) -> dict:
    """Cap address space `memory_bytes` above the current size (None: no cap), output file size, core dumps."""
    limits = {}
    try:
        if memory_bytes is not None:
            cap = (status_bytes("self", "VmSize") or 0) + memory_bytes
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            limits["address_space_headroom_bytes"] = memory_bytes  # the setting; the cap itself varies by run
    except (OSError, ValueError):
        pass
    resource.setrlimit(resource.RLIMIT_FSIZE, (output_bytes, output_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limits["output_bytes"] = output_bytes
    return limits


def scrub_environment(tmpdir: str, extra: dict) -> None:
    """Replace the environment with a minimal one: no tokens, paths or settings of the grader leak in."""
    os.environ.clear()
    os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tmpdir, "TMPDIR": tmpdir,
                       "TRITON_CACHE_DIR": os.path.join(tmpdir, "triton-cache"),  # this child's own, discarded
                       "LANG": "C.UTF-8", **extra})
