"""One sandbox per topic (template.py), red team: no check can tell how many checks ran before it in its sandbox, nor
read a number an earlier check encoded.

The checks of a topic share PID 1, and PID 1's counters were readable by every check: /proc/1/stat's cminflt (the
minor faults of the children it reaped), cutime and cstime, /proc/1/status's context switches, /proc/1/schedstat.
A check's child that faulted N pages moved PID 1's cminflt on by N, read exactly by the next check. The same held,
less exactly, for every reference to the sandbox's start a check could read beside a counter that moves with what
the checks before it did: the check's process a copy of PID 1's interpreter as it was at its fork (its collector's
counts grew with every check), the start of the sandbox's root in the timestamps of its folders and the birth time
of the output file, the unique ids of mounts and namespaces made for each check beside those made with the
sandbox, the /proc entries looked up when the sandbox was built (their inode numbers beside a check's own socket's,
both from one counter; the timestamp test finds such an entry by its date), the host's pids in /proc/self/cgroup and
in the output file's path beside /proc/stat's count of forks, and, where the private root binds /sys (for CUDA), the
counters of the sandbox's own cgroups.

The first three tests run in a sandbox whose user namespace maps two uids (a root grader) and in one that maps one
(a grader that is not root: a check then has PID 1's uid).
"""
import sys
import time

import pytest

from grader.engine.runner import zygote
from grader.sandbox.policy import sandbox_config
from grader.sandbox.pool import ChildPool
from grader.sandbox.remote import Submission

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = r'''
import ctypes, fcntl, gc, os, re, stat, struct, sys, time

libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = -100, 0x100, 0x1000
STATX_BTIME, STATX_MNT_ID_UNIQUE = 0x800, 0x4000
NS_GET_ID = 0x8008B70D  # _IOR(0xb7, 0xd, __u64): a namespace's unique id (Linux 6.18)
SANDBOX_FILESYSTEMS = ("tmpfs", "proc")  # what the sandbox mounts itself; the rest is the host's, bound


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _stat_fields(path):
    """The fields of a /proc stat file after the command name (the state first); None if unreadable."""
    text = _read(path)
    return None if text is None else text.rpartition(")")[2].split()


def _field(fields, *indexes):
    return None if fields is None else sum(int(fields[i]) for i in indexes)


def _status(path, name):
    text = _read(path)
    found = text and re.search(rf"^{name}:\s*(\d+)", text, re.M)
    return int(found[1]) if found else None


def _statx(path, mask, fd=AT_FDCWD, flags=AT_SYMLINK_NOFOLLOW):
    """(mask the kernel filled, the buffer) of statx; None where it is refused."""
    buffer = ctypes.create_string_buffer(256)
    if libc.statx(fd, path.encode(), flags, mask, buffer) != 0:
        return None
    return struct.unpack_from("<I", buffer.raw, 0)[0], buffer.raw


def _mount_id(path):
    found = _statx(path, STATX_MNT_ID_UNIQUE)
    return struct.unpack_from("<Q", found[1], 0x90)[0] if found and found[0] & STATX_MNT_ID_UNIQUE else None


def _birth(path, fd=AT_FDCWD, flags=AT_SYMLINK_NOFOLLOW):
    found = _statx(path, STATX_BTIME, fd, flags)
    if not (found and found[0] & STATX_BTIME):
        return None
    seconds, nanoseconds = struct.unpack_from("<qI", found[1], 0x50)
    return seconds + nanoseconds / 1e9


def _namespace_id(kind):
    try:
        fd = os.open(f"/proc/self/ns/{kind}", os.O_RDONLY)
    except OSError:
        return None
    try:
        buffer = bytearray(8)
        fcntl.ioctl(fd, NS_GET_ID, buffer)
        return struct.unpack("<Q", buffer)[0]
    except OSError:
        return None
    finally:
        os.close(fd)


def _difference(a, b):
    return None if a is None or b is None else a - b


def _host_pids():
    """Host pids a check can read: in /proc/self/cgroup (its cgroups' names) and in its output file's path."""
    found = [int(p) for p in re.findall(r"infergrade-\d+-(\d+)", _read("/proc/self/cgroup") or "")]
    try:
        found += [int(p) for p in re.findall(r"infergrade-child-(\d+)-", os.readlink("/proc/self/fd/1"))]
    except OSError:
        pass
    return found


def _forks_since(pid):
    """Forks on the host since `pid` was handed out, as /proc/stat counts them."""
    found = re.search(r"^processes (\d+)", _read("/proc/stat") or "", re.M)
    return None if pid is None or not found else int(found[1]) - pid


def _mount_points():
    """(mount point, file system type) of every mount this check sees, from /proc/self/mountinfo."""
    points = []
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        fields, _, tail = line.partition(" - ")
        points.append((fields.split()[4].replace("\\040", " "), tail.split()[0]))
    return points


# names a check may guess in a folder it may not list (Landlock grants no listing of the root itself)
GUESSED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc", "tmp", "sys", "opt", "home",
           "root", "run", "var", ".held", ".host", "fd", "stdin", "stdout", "stderr", "null", "full", "random",
           "urandom", "zero", "shm", "pts", "mqueue")


def timestamps(limit=20000):
    """(path, kind, seconds) of every timestamp this check can read on the file systems the sandbox made (its
    root, the submission's copy, the masks, /proc but its processes' folders), on the folders that lead to a mount,
    and of its output file."""
    found = []

    def note(path, fd=AT_FDCWD, flags=AT_SYMLINK_NOFOLLOW):
        try:
            info = os.fstat(fd) if flags & AT_EMPTY_PATH else os.lstat(path)
        except OSError:
            return None
        found.extend((path, kind, getattr(info, kind)) for kind in ("st_atime", "st_mtime", "st_ctime"))
        birth = _birth(path, fd, flags)
        if birth is not None:
            found.append((path, "birth", birth))
        return info

    def walk(folder, device):
        try:
            names = os.listdir(folder)
        except OSError:  # not listable: the names a check would guess
            names = GUESSED
        for name in names:
            path = os.path.join(folder, name)
            if len(found) > limit or (folder == "/proc" and name.isdigit()):
                continue
            info = note(path)
            if info is not None and stat.S_ISDIR(info.st_mode) and info.st_dev == device:
                walk(path, device)

    note("fd 1", 1, AT_EMPTY_PATH)
    points = _mount_points()
    for point, kind in points:
        parent = point
        while parent != "/":  # the folders that lead to it, wherever they are
            parent = os.path.dirname(parent)
            note(parent)
        if kind in SANDBOX_FILESYSTEMS and note(point) is not None:
            walk(point, os.lstat(point).st_dev)
    return found


def cgroup_counters(limit=5000):
    """The sandbox's own cgroups this check can find: counter files (CPU time, memory peak, events) of the cgroups
    named for a sandbox below /sys/fs/cgroup, and the lines of /proc/self/cgroup that name a cgroup below its root."""
    found = [line for line in (_read("/proc/self/cgroup") or "").splitlines() if not line.endswith(":/")]
    for folder, dirs, files in os.walk("/sys/fs/cgroup"):
        if len(found) > limit:
            break
        if "infergrade-" in folder:
            found += [os.path.join(folder, name) for name in files if _read(os.path.join(folder, name))]
    return found


def position():
    """What a check can read that would count the checks before it in its sandbox (None: unreadable)."""
    init = _stat_fields("/proc/1/stat")
    own = _stat_fields("/proc/self/stat")
    loadavg = (_read("/proc/loadavg") or "").split()
    return {
        "init_faults": _field(init, 7),
        "init_children_faults": _field(init, 8),
        "init_children_cpu": _field(init, 13, 14),
        "started_after_init": _difference(_field(own, 19), _field(init, 19)),
        "init_switches": _status("/proc/1/status", "voluntary_ctxt_switches"),
        "init_resident": _status("/proc/1/status", "VmHWM"),
        "init_schedstat": _read("/proc/1/schedstat"),
        "init_io": _read("/proc/1/io"),
        "init_children": _read("/proc/1/task/1/children"),
        "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        "pid": os.getpid(),
        "last_pid": loadavg[-1] if loadavg else None,
        "ns_last_pid": _read("/proc/sys/kernel/ns_last_pid"),
        "mounts_since_root": _difference(_mount_id("/tmp"), _mount_id("/")),
        "proc_mounts_since_root": _difference(_mount_id("/proc"), _mount_id("/")),
        "ipc_namespaces_since_user": _difference(_namespace_id("ipc"), _namespace_id("user")),
        # without the mount ids and device numbers: the kernel hands out the lowest free ones, host-wide, which
        # moved with other graders' sandboxes here (PID 1 renews /proc twice so that, alone, they stay the same)
        "mountinfo": [line.split()[3:] for line in (_read("/proc/self/mountinfo") or "").splitlines()],
        "cgroup": _read("/proc/self/cgroup"),
        "collections": [generation["collections"] for generation in gc.get_stats()],
        "collected": [generation["collected"] for generation in gc.get_stats()],
    }


def encode(k):
    """Leave `k` in every counter a later check might read: pages faulted and CPU burnt by a child that then ends,
    processes started, time spent."""
    child = os.fork()
    if child == 0:
        pages = bytearray(k * 1000 * 4096)
        for i in range(0, len(pages), 4096):
            pages[i] = 1
        until = time.process_time() + k * 0.2
        while time.process_time() < until:
            pass
        os._exit(0)
    os.waitpid(child, 0)
    for _ in range(k * 200):
        os.waitpid(os.posix_spawn("/bin/true", ["true"], {}), 0)
    return True


def decode():
    """What a check can read of a number an earlier check encoded, reading each counter beside its reference."""
    init = _stat_fields("/proc/1/stat")
    pids = _host_pids()
    now = time.time()
    built = []
    for path in ("/", "/dev", "/proc", "/proc/sys/kernel/ns_last_pid", os.path.dirname(__file__)):
        try:
            built.append(os.lstat(path).st_ctime)
        except OSError:
            pass
    births = [b for b in (_birth("/"), _birth("", 1, AT_EMPTY_PATH)) if b is not None]
    return {
        "init_children_faults": _field(init, 8),
        "init_children_cpu_ticks": _field(init, 13, 14),
        "forks_since_host_pid": _forks_since(max(pids, default=None)),
        "seconds_since_change": now - min(built) if built else None,
        "seconds_since_birth": now - min(births) if births else None,
    }
'''

ENCODED = 10
# how far a reading of the check after the encoding one may differ between k = 0 and k = ENCODED: half what each
# moves by with the number encoded (ENCODED * 1000 pages, 200 ticks of CPU, 2000 processes, over 2 s), above what
# other processes on the host move the host-wide ones by meanwhile
MARGIN = {"init_children_faults": 5000, "init_children_cpu_ticks": 100, "forks_since_host_pid": 1000,
          "seconds_since_change": 1.0, "seconds_since_birth": 1.0}


@pytest.fixture(params=[False, True], ids=["two-uids", "one-uid"])
def one_uid(request):
    return request.param


def test_no_check_can_tell_how_many_ran_before_it(topic_checks_of, one_uid):
    next_check = topic_checks_of(PROBES, one_uid=one_uid)
    readings = []
    for _ in range(4):
        check = next_check()
        readings.append(check.position())
        assert check.isolation["template"]
        check.close()
    moving = {name: [r[name] for r in readings] for name in readings[0]
              if any(r[name] != readings[0][name] for r in readings)}
    assert moving == {}


def test_no_check_can_read_what_the_check_before_it_encoded(topic_checks_of, one_uid):
    decoded = {}
    for k in (0, ENCODED):
        next_check = topic_checks_of(PROBES, one_uid=one_uid)  # a sandbox of its own for each
        first = next_check()
        assert first.encode(k) and first.isolation["template"]
        first.close()
        second = next_check()
        decoded[k] = second.decode()
        second.close()
    read = {name: (decoded[0][name], decoded[ENCODED][name]) for name in MARGIN}
    assert {name: pair for name, pair in read.items() if pair != (None, None) and
            (None in pair or abs(pair[1] - pair[0]) >= MARGIN[name])} == {}


def test_no_timestamp_a_check_can_read_dates_from_before_it(topic_checks_of, one_uid):
    """Every timestamp on what the sandbox made is either older than the sandbox or newer than the check before:
    none tells when the sandbox was built, and none was left by an earlier check."""
    built = time.time()  # before the pool, which starts the sandbox ahead
    next_check = topic_checks_of(PROBES, one_uid=one_uid)
    first = next_check()
    assert first.encode(1) and first.isolation["template"]
    first.close()
    ended = time.time()
    time.sleep(0.05)  # the kernel's coarse clock lags by a tick at most
    second = next_check()
    stamps = second.timestamps()
    second.close()
    assert len(stamps) > 100  # the walk reached the root, the submission's copy and /proc
    between = [(path, kind, t) for path, kind, t in stamps if built - 0.05 <= t <= ended]
    assert between == [], "\n".join(map(str, between))


def test_no_check_reads_its_sandboxs_cgroups(tmp_path):
    """Where the private root binds /sys (for CUDA), the host's cgroups are covered: a sandbox's cgroup counts the
    CPU time and memory peak of all its checks. /proc/self/cgroup names none (the cgroup namespace)."""
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "demo.py").write_text(PROBES)
    config = {**sandbox_config(folder, 2**30, 2**20), "topic": "demo", "forbidden": []}
    config["bound_read_only"] = sorted({*config["bound_read_only"], "/sys"})
    pool = ChildPool(zygote())
    try:
        for _ in range(2):  # the second in the sandbox the first left
            check = Submission(pool, config)
            check.set_timeout(30)
            assert check.encode(1) and check.isolation["template"]
            assert check.cgroup_counters() == []
            check.close()
    finally:
        pool.close()
