"""A private, minimal root for the child, built in its own mount namespace (bubblewrap's layout, in brief).

Only what Python and the submission need is there: the system's library folders, the interpreter and its
packages, a few files of /etc, a handful of devices, all read-only; a copy of the submission folder, read-only;
a fresh /proc for the child's PID namespace; and a tmpfs at /tmp limited in bytes and in files (inodes, which the
kernel keeps outside any byte count), the only writable place. Nothing
else of the host is reachable: no host /tmp, /run, /dev/shm, home folders, sockets or other processes.
"""
from __future__ import annotations

import ctypes
import os
import re
import stat
from collections.abc import Iterator

from grader.sandbox import procfs

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x2000, 0x4000, 0x40000
MNT_DETACH = 0x2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]
ETC = ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
       "/etc/localtime", "/etc/alternatives"]
# no /dev/zero: a MAP_SHARED mapping of it is shared anonymous memory, which seccomp refuses in every other form
DEVICES = ["/dev/null", "/dev/full", "/dev/random", "/dev/urandom"]
SUBMISSION_BYTES = 32 * 2**20  # the copy of the submission folder; what is past it is left out
SUBMISSION_FILES = 2048
SUBMISSION_DEPTH = 32  # folders below the submission's own: deeper ones are left out (each is open while walked)
COPY_CHUNK = 2**20
PAGE = 4096  # tmpfs keeps each file in whole pages
HELD = "/.held"
# what a bound folder holds that no check may read: the host's cgroups (where /sys is bound, for CUDA), whose counters
# (a sandbox's CPU time and memory peak) grow with every check
MASKED = ["/sys/fs/cgroup"]
GRADERS_OWN = (".infergrade-progress.json",)  # the grader's record in the student's folder, which a `check` may be
# rewriting while another grade copies the folder: never part of the submission, its hashes or its sandbox
SKIPPED = (".git", "__pycache__", ".venv", "node_modules", ".ipynb_checkpoints", ".hypothesis")


class MountError(OSError):
    """A step of building the root failed; the child then runs without a private root, and says so."""


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc = _libc()
    if libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(), flags,
                  data and data.encode()) != 0:
        errno = ctypes.get_errno()
        raise MountError(errno, f"mount {source or fstype} on {target}: {os.strerror(errno)}")


def _bind_read_only(source: str, target: str, writable: bool = False) -> None:
    """Bind `source` at `target` and make it read-only, keeping the flags the kernel locks (nosuid, nodev...)."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    if writable:
        return
    kept = os.statvfs(target).f_flag & (MS_NODEV | MS_NOEXEC)  # ST_* share the MS_* values here
    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | kept)  # no setuid programs


def _bind_open(source: str, target: str, depth: int = 4) -> None:
    """Bind `source` read-only at `target`. A folder that others may not enter (a venv made by `mktemp -d`) is
    recreated open and its entries bound one by one: the submission runs as another user than the grader."""
    closed = (os.stat(source).st_mode & 0o005) != 0o005
    if not (closed and os.path.isdir(source) and depth > 0):
        _bind_read_only(source, target)
        return
    os.makedirs(target, exist_ok=True)
    for name in sorted(os.listdir(source)):
        entry = os.path.join(source, name)
        if os.path.islink(entry):
            os.symlink(os.readlink(entry), os.path.join(target, name))
        else:
            _bind_open(entry, os.path.join(target, name), depth - 1)


def _copy_link(path: str, root: str) -> None:
    target = root + path
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.symlink(os.readlink(path), target)


def _covered(path: str, bound: list[str]) -> bool:
    return any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound)


def submission_entries(top: int) -> Iterator[tuple[str, int, str, os.stat_result]]:
    """(path relative to the folder open at `top`, a descriptor of the folder that holds it, its name, its lstat) of
    each entry the sandbox's copy of the submission takes, in copy order: regular files and links (never followed),
    outside caches, the modules first in each folder, within SUBMISSION_BYTES counted in whole pages,
    SUBMISSION_FILES entries and SUBMISSION_DEPTH folders down, each folder walked and each file looked at counting
    as one, taken or not (so that no tree of empty folders, nor any number of files left out, makes the walk long).
    Each folder is opened below its parent's descriptor without following a link, and is open only while the walk
    is in it: one swapped for a link meanwhile is met as that link."""
    yield from _entries(top, "", 0, [SUBMISSION_BYTES, SUBMISSION_FILES])


def _entries(folder: int, relative: str, depth: int, left: list[int]) -> Iterator[tuple[str, int, str, os.stat_result]]:
    """submission_entries of the folder open at `folder`; `left` holds the bytes and entries left to the walk."""
    try:
        with os.scandir(folder) as listing:
            listed = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing]
    except OSError:
        return
    folders = sorted(name for name, is_folder in listed if is_folder and name not in SKIPPED)
    for name in sorted((n for n, is_folder in listed if not is_folder and n not in GRADERS_OWN),
                       key=lambda n: (not n.endswith(".py"), n)):
        if left[1] == 0:
            return
        left[1] -= 1  # every entry looked at counts, taken or not (no number of left-out files is free)
        entry = _looked_at(folder, name)
        if entry is None or (stat.S_ISLNK(entry.st_mode) and name in SKIPPED):  # a linked .venv: a cache
            continue
        cost = PAGE * (1 + entry.st_size // PAGE) if stat.S_ISREG(entry.st_mode) else 0
        if cost > left[0]:
            continue
        left[0] -= cost
        yield os.path.join(relative, name), folder, name, entry
    for name in folders:
        if left[1] == 0:
            return
        left[1] -= 1
        if depth == SUBMISSION_DEPTH:
            continue
        try:
            below = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        except OSError:  # swapped for a link since it was listed: met as the link
            entry = _looked_at(folder, name)
            if entry is not None and stat.S_ISLNK(entry.st_mode):
                yield os.path.join(relative, name), folder, name, entry
            continue
        try:
            yield from _entries(below, os.path.join(relative, name), depth + 1, left)
        finally:
            os.close(below)


def _looked_at(folder: int, name: str) -> os.stat_result | None:
    """The lstat of `name` in the folder open at `folder` where it is a regular file or a link, else None."""
    try:
        entry = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return None
    return entry if stat.S_ISREG(entry.st_mode) or stat.S_ISLNK(entry.st_mode) else None


def copy_file(folder: int, name: str, listed: os.stat_result, into: str, digest=None) -> bool:
    """Copy the regular file `name` of the folder open at `folder` to the new file `into` (mode 0644), adding its bytes
    to `digest` (a hashlib object) where given: the file that was listed (`listed`, its lstat) and no more than the
    size it had then, so a file that grows meanwhile keeps the walk's budget. False where the entry is another file
    by now; OSError where it cannot be opened (ELOOP: a link took its place)."""
    source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=folder)
    try:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (listed.st_dev, listed.st_ino):
            return False
        out = os.open(into, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with open(out, "wb") as f:
            os.fchmod(out, 0o644)  # whatever the umask: the sandbox's unprivileged user reads it
            left = listed.st_size
            while left > 0 and (chunk := os.read(source, min(left, COPY_CHUNK))):
                f.write(chunk)
                left -= len(chunk)
                if digest is not None:
                    digest.update(chunk)
        return True
    finally:
        os.close(source)


def copy_submission(source: str, target: str) -> None:
    """Copy the regular files of `submission_entries(source)` into `target`; a link, which the grader's copy of a
    submission never holds, is left out. A file that cannot be copied is left out: nothing in the folder can make
    the private root fail."""
    top = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for relative, folder, name, listed in submission_entries(top):
            if not stat.S_ISREG(listed.st_mode):
                continue
            into = os.path.join(target, relative)
            try:
                os.makedirs(os.path.dirname(into), exist_ok=True)
                copy_file(folder, name, listed, into)
            except OSError:
                continue
    finally:
        os.close(top)


def _mask(target: str) -> None:
    """Cover `target` with something empty: a folder with an empty tmpfs, a file with /dev/null."""
    if os.path.isdir(target):
        _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,nr_inodes=64,mode=0755")
    else:
        _mount("/dev/null", target, None, MS_BIND)


def _passages(paths: list[str], bound: list[str]) -> set[str]:
    """The root's own folders on the way to `paths` (a venv in the grader's checkout: the checkout, its parents):
    made only to reach what is bound below them, they can be passed through but not listed (mode 0111), so the
    child sees nothing of the checkout, the home folder or whatever else holds what is bound; below /tmp too (a
    checkout cloned there), whose own mode lets a check make files in it but not list it (mount_tmp)."""
    passages = set()
    for path in paths:
        parent = os.path.dirname(path.rstrip("/"))
        while parent not in ("/", "", "/tmp") and not _covered(parent, bound):
            passages.add(parent)
            parent = os.path.dirname(parent)
    return passages


def build_root(root: str, read_only: list[str], devices: list[str], submission: str, tmp_bytes: int,
               tmp_files: int, hidden: list[str]) -> None:
    """Build the sandbox's root at `root` (an empty folder) and switch to it; the caller is PID 1 of its
    namespace, in a mount namespace of its own, with capabilities there. What of `hidden` a bound folder holds
    (the grader's packages in a site-packages, say) is covered with something empty: it does not depend on
    Landlock, which grants all of the private /tmp and so of any folder bound below it."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here propagates to the host
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    # /tmp first: a venv or a submission that lives below the host's /tmp is bound on top of it, not hidden by it
    os.makedirs(root + "/tmp")
    mount_tmp(root + "/tmp", tmp_bytes, tmp_files)
    bound: list[str] = []
    for path in [*SYSTEM, *ETC, *sorted(set(read_only), key=len)]:
        if not os.path.lexists(path) or _covered(path, bound):
            continue
        if os.path.islink(path):
            _copy_link(path, root)
        else:
            _bind_open(path, root + path)
        bound.append(path)
    for device in [*DEVICES, *devices]:
        if os.path.exists(device):
            _bind_read_only(device, root + device, writable=True)
    masks = [path for path in [*hidden, *MASKED] if os.path.lexists(root + path) and not os.path.islink(root + path)]
    for path in masks:
        _mask(root + path)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(root + submission, exist_ok=True)
    _mount("tmpfs", root + submission, "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={SUBMISSION_BYTES + 4 * 2**20},nr_inodes={2 * SUBMISSION_FILES},mode=0755")
    copy_submission(submission, root + submission)
    _mount(None, root + submission, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for path in masks:  # read-only once the submission's mount point, which may lie inside one, is made
        if os.path.isdir(root + path):
            _mount(None, root + path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for folder in _passages([*(path for path in read_only if path in bound), submission], bound):
        os.chmod(root + folder, 0o111)
    os.makedirs(root + "/proc", exist_ok=True)
    procfs.mount_hidden(root + "/proc")  # a check sees its own processes only
    disable_sysv_ipc(root)
    os.mkdir(root + HELD, 0o700)  # where renew_tmp keeps the mounts below /tmp meanwhile (empty, read-only)
    _pivot(root)


def mount_tmp(target: str, tmp_bytes: int, tmp_files: int) -> None:
    """A fresh tmpfs at `target`: the sandbox's /tmp, its one writable place, within its caps. Mode 1733: a check
    makes and reads its own files there by name, but cannot list it (the folders on the way to a venv or a
    submission that lives below the host's /tmp would tell where the grader's checkout is)."""
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_bytes},nr_inodes={tmp_files},mode=1733")


def disable_sysv_ipc(root: str) -> None:
    """No System V shared memory or queues in this process's IPC namespace, through the /proc below `root`."""
    for name in ("shmmni", "msgmni", "shmall"):
        try:
            with open(f"{root}/proc/sys/kernel/{name}", "w") as f:
                f.write("0")
        except OSError:
            pass  # a kernel that refuses keeps its defaults; the private root does not depend on it


def _pivot(root: str) -> None:
    """Make `root` the root of this mount namespace and detach the host's."""
    import platform

    old = root + "/.host"
    os.makedirs(old)
    libc = _libc()
    if libc.syscall(SYS_PIVOT_ROOT[platform.machine()], root.encode(), old.encode()) != 0:
        errno = ctypes.get_errno()
        raise MountError(errno, f"pivot_root: {os.strerror(errno)}")
    os.chdir("/")
    if libc.umount2(b"/.host", MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        raise MountError(errno, f"detaching the host's root: {os.strerror(errno)}")
    os.rmdir("/.host")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)  # the skeleton itself


def tmp_layout() -> tuple[list[tuple[str, os.stat_result]], dict[int, str]]:
    """After build_root: the folders that lead to the mounts below /tmp (a submission or a venv that lives below the
    host's /tmp), each with its stat, shallowest first, and those mounts by mount id with the path each was made at:
    what renew_tmp puts back."""
    points = _mounts_on("/tmp")
    folders = {}
    for point in points.values():
        path = point
        while path != "/tmp":
            folders[path] = os.lstat(path)
            path = os.path.dirname(path)
    return sorted(folders.items(), key=lambda item: item[0].count("/")), points


def renew_tmp(tmp_bytes: int, tmp_files: int, layout: tuple[list[tuple[str, os.stat_result]], dict[int, str]]) -> None:
    """As PID 1, with no other process left: replace /tmp with a new empty tmpfs of the same caps, with the mounts
    that were below it moved back where they were made (and the folders leading to them, as `layout` has them)."""
    folders, points = layout
    now = _mounts_on("/tmp")  # where each is now: a check with PID 1's uid may have renamed a folder on the way
    assert now.keys() == points.keys(), "a mount below /tmp that the sandbox did not make"
    _mount("tmpfs", HELD, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700")
    held = []
    for index, mount_id in enumerate(sorted(points)):
        spot = f"{HELD}/{index}"
        os.mkdir(spot)
        _mount(now[mount_id], spot, None, MS_MOVE)
        held.append((points[mount_id], spot))
    if _libc().umount2(b"/tmp", MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        raise MountError(errno, f"unmounting /tmp: {os.strerror(errno)}")
    mount_tmp("/tmp", tmp_bytes, tmp_files)
    for path, st in folders:
        if not os.path.isdir(path):
            os.mkdir(path)
        os.chown(path, st.st_uid, st.st_gid)
        os.chmod(path, stat.S_IMODE(st.st_mode))
    for point, spot in held:
        _mount(spot, point, None, MS_MOVE)
    if _libc().umount2(HELD.encode(), MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        raise MountError(errno, f"unmounting {HELD}: {os.strerror(errno)}")


def _mounts_on(target: str) -> dict[int, str]:
    """The mounts directly on the visible mount at `target`: mount id -> mount point (/proc/self/mountinfo)."""
    mounts = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields = line.split()
            point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), fields[4])
            mounts.append((int(fields[0]), int(fields[1]), os.fsdecode(point)))
    top = [mount_id for mount_id, _, point in mounts if point == target][-1]
    return {mount_id: point for mount_id, parent, point in mounts if parent == top}
