"""Timestamps of what a topic's sandbox made once (its root, the submission's copy, the masks), made new before each
check.

They were all made when the sandbox was built, and their times said when: beside the clock, how long the checks
before a check took, which one of them could stretch to pass a number on (a check that spins k tenths of a second).
So before each check PID 1 sets the access and modification times of every entry of those file systems to the epoch,
which makes their change time the moment it did so. Their birth times cannot be changed: a check may not ask for
them (seccomp.py).
"""
from __future__ import annotations

import ctypes
import os
import re

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND = 0x1, 0x2, 0x4, 0x20, 0x1000


def made_once() -> list[str]:
    """As PID 1 once the private root is built: the mount points of the tmpfs file systems it mounted whole (its
    root, the submission's copy, the masks), but /tmp, which each check gets anew."""
    points = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields, _, tail = line.partition(b" - ")
            fields, tail = fields.split(), tail.split()
            point = os.fsdecode(re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), fields[4]))
            if tail[0] == b"tmpfs" and fields[3] == b"/" and point != "/tmp":
                points.append(point)
    return points


def restamp(points: list[str]) -> None:
    """As PID 1 between two checks: the times of every entry of the file systems at `points` (made_once) set to
    the epoch, each made writable meanwhile (the root by its mount's flag, the others by their own). One the kernel
    will not make writable keeps its times; one it will not make read-only again raises: no check may run then."""
    for point in points:
        level = MS_BIND if point == "/" else 0
        try:
            _remount(point, MS_REMOUNT | level | MS_NOSUID | MS_NODEV)
        except OSError:
            continue
        try:
            _stamp(point, os.lstat(point).st_dev)
        finally:
            _remount(point, MS_REMOUNT | level | MS_NOSUID | MS_NODEV | MS_RDONLY)


def _stamp(top: str, device: int) -> None:
    """Set the times of `top` and of everything below it on the same file system (never what is mounted there)."""
    folders = [top]
    while folders:
        folder = folders.pop()
        os.utime(folder, ns=(0, 0), follow_symlinks=False)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.stat(follow_symlinks=False).st_dev != device:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                else:
                    os.utime(entry.path, ns=(0, 0), follow_symlinks=False)


def _remount(point: str, flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(None, point.encode(), None, flags, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"remounting {point}: {os.strerror(errno)}")
