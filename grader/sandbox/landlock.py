"""Landlock, a second wall around the filesystem where the kernel has it: reads only below the allowed roots,
writes only below the allowed write roots, no TCP and (ABI 6+) no abstract sockets or signals out of the sandbox.
"""
from __future__ import annotations

import ctypes
import os
import struct

from grader.sandbox.namespaces import libc as _libc

PR_SET_NO_NEW_PRIVS = 38
SYS_LANDLOCK = {"create": 444, "add_rule": 445, "restrict_self": 446}  # x86-64 and the generic table (arm64)

_FILE_RIGHTS = (1 << 0) | (1 << 1) | (1 << 2)  # execute, write file, read file
_READ = (1 << 0) | (1 << 2) | (1 << 3)          # execute, read file, read dir
_WRITE_ALL_V1 = (1 << 13) - 1                   # every right of ABI 1


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
