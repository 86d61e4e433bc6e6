"""A seccomp filter for the child: no new sockets of any family, no way out of or around the other walls.

The channel to the grader is a socket the child inherits, so it needs no `socket()` of its own; denying every
family closes path-named UNIX sockets, which neither the network namespace nor Landlock (up to ABI 7) covers.
Also denied: tracing other processes, mounting, new namespaces, kernel keyrings, BPF, io_uring, reading other
processes' memory, another process's resource limits (`prlimit64` with a pid other than 0: where the grader is not
root, a submission has PID 1's uid and could lower the watchdog's limits), and shared anonymous memory (`mmap` with
MAP_SHARED | MAP_ANONYMOUS, like memfd_create): its pages stay resident when the last process that touched them
forks and exits, out of every process's resident size, so the watchdog could not count them. A denied call fails
with EPERM; `clone3` fails with ENOSYS so that libc falls back to `clone`, whose flags can be inspected. A syscall
of another ABI (i386 or x32 on x86-64) kills the process.

Also refused: what numbers mounts and namespaces host-wide, in the order they were made (`statmount`, `listmount`,
`listns`, statx's unique mount id, the namespace ioctls: NS_GET_ID, NS_GET_MNTNS_ID...), and statx's birth time.
Each check of a topic's sandbox gets a new /tmp, /proc and IPC namespace, made after those the sandbox was built
with: the difference of two such ids counted the checks before it, and a birth time in the sandbox's root dated its
start (procfs.py). statx asking for either fails with ENOSYS, as where the kernel lacks statx (libc falls back to
fstatat); a namespace ioctl fails with ENOTTY.
"""
from __future__ import annotations

import ctypes
import errno
import platform
import struct

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
RET_ALLOW, RET_ERRNO, RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
LD_ABS_W, JEQ, JGE, JSET, AND, RET = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
X32_BIT = 0x40000000
CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80
SHARED_ANONYMOUS = 0x01 | 0x20  # MAP_SHARED (also a bit of MAP_SHARED_VALIDATE) | MAP_ANONYMOUS
IOCTL_TYPE, NSFS = 0xFF00, 0xB700  # an ioctl number's type byte; nsfs's
STATX_DATING = 0x800 | 0x4000  # STATX_BTIME | STATX_MNT_ID_UNIQUE

DENIED = ("socket", "socketpair", "ptrace", "mount", "umount2", "pivot_root", "chroot", "bpf", "keyctl", "add_key",
          "request_key", "unshare", "setns", "process_vm_readv", "process_vm_writev", "open_by_handle_at",
          "name_to_handle_at", "userfaultfd", "perf_event_open", "init_module", "finit_module", "delete_module",
          "kexec_load", "kexec_file_load", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree",
          "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "acct", "swapon", "swapoff",
          "reboot", "sethostname", "setdomainname", "quotactl", "syslog", "vhangup", "pidfd_getfd", "open_tree_attr",
          "memfd_create", "iopl", "ioperm", "statmount", "listmount", "listns")
ARGUMENTS = ("clone", "mmap", "prlimit64", "ioctl", "statx")  # syscalls allowed or not by one of their arguments

# audit arch and syscall numbers per machine (x86-64's own table; arm64 uses the generic one)
TABLES = {
    "x86_64": (0xC000003E, {
        "socket": 41, "socketpair": 53, "ptrace": 101, "mount": 165, "umount2": 166, "pivot_root": 155,
        "chroot": 161, "bpf": 321, "keyctl": 250, "add_key": 248, "request_key": 249, "unshare": 272, "setns": 308,
        "process_vm_readv": 310, "process_vm_writev": 311, "open_by_handle_at": 304, "name_to_handle_at": 303,
        "userfaultfd": 323, "perf_event_open": 298, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "kexec_load": 246, "kexec_file_load": 320, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "acct": 163, "swapon": 167, "swapoff": 168,
        "reboot": 169, "sethostname": 170, "setdomainname": 171, "quotactl": 179, "syslog": 103, "vhangup": 153,
        "pidfd_getfd": 438, "open_tree_attr": 467, "memfd_create": 319, "iopl": 172, "ioperm": 173,
        "statmount": 457, "listmount": 458, "listns": 470,
        "clone": 56, "clone3": 435, "mmap": 9, "prlimit64": 302, "ioctl": 16, "statx": 332}),
    "aarch64": (0xC00000B7, {
        "socket": 198, "socketpair": 199, "ptrace": 117, "mount": 40, "umount2": 39, "pivot_root": 41,
        "chroot": 51, "bpf": 280, "keyctl": 219, "add_key": 217, "request_key": 218, "unshare": 97, "setns": 268,
        "process_vm_readv": 270, "process_vm_writev": 271, "open_by_handle_at": 265, "name_to_handle_at": 264,
        "userfaultfd": 282, "perf_event_open": 241, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "kexec_load": 104, "kexec_file_load": 294, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "acct": 89, "swapon": 224, "swapoff": 225,
        "reboot": 142, "sethostname": 161, "setdomainname": 162, "quotactl": 60, "syslog": 116, "vhangup": 58,
        "pidfd_getfd": 438, "open_tree_attr": 467, "memfd_create": 279, "statmount": 457, "listmount": 458,
        "listns": 470, "clone": 220, "clone3": 435, "mmap": 222, "prlimit64": 261, "ioctl": 29, "statx": 291}),
}


def program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The filter as (code, jump if true, jump if false, k) instructions; None for a machine without a table."""
    if machine not in TABLES:
        return None
    arch, numbers = TABLES[machine]
    head = [(LD_ABS_W, 0, 0, 4), (JEQ, 1, 0, arch), (RET, 0, 0, RET_KILL_PROCESS), (LD_ABS_W, 0, 0, 0)]
    if machine == "x86_64":
        head.append((JGE, 0, 1, X32_BIT))  # an x32 syscall: kill (next instruction), else skip it
        head.append((RET, 0, 0, RET_KILL_PROCESS))
    dispatch = [(JEQ, "deny", 0, numbers[name]) for name in DENIED if name in numbers]  # arm64: no iopl, ioperm
    dispatch += [(JEQ, "enosys", 0, numbers["clone3"]), *((JEQ, name, 0, numbers[name]) for name in ARGUMENTS),
                 (RET, 0, 0, RET_ALLOW)]
    blocks = {
        # args[n] is at 16 + 8 n; its low 32 bits are what each test needs
        "clone": [(LD_ABS_W, 0, 0, 16), (JSET, "deny", 0, CLONE_NEW_ANY), (RET, 0, 0, RET_ALLOW)],
        "mmap": [(LD_ABS_W, 0, 0, 40), (AND, 0, 0, SHARED_ANONYMOUS), (JEQ, "deny", 0, SHARED_ANONYMOUS),
                 (RET, 0, 0, RET_ALLOW)],
        "prlimit64": [(LD_ABS_W, 0, 0, 16), (JEQ, 0, "deny", 0), (RET, 0, 0, RET_ALLOW)],  # a pid_t: 0, itself
        "ioctl": [(LD_ABS_W, 0, 0, 24), (AND, 0, 0, IOCTL_TYPE), (JEQ, "enotty", 0, NSFS), (RET, 0, 0, RET_ALLOW)],
        "statx": [(LD_ABS_W, 0, 0, 40), (JSET, "enosys", 0, STATX_DATING), (RET, 0, 0, RET_ALLOW)],
        "enosys": [(RET, 0, 0, RET_ERRNO | errno.ENOSYS)],
        "enotty": [(RET, 0, 0, RET_ERRNO | errno.ENOTTY)],
        "deny": [(RET, 0, 0, RET_ERRNO | errno.EPERM)],
    }
    return head + _assemble(dispatch, blocks)


def _assemble(first: list[tuple], blocks: dict[str, list[tuple]]) -> list[tuple[int, int, int, int]]:
    """`first`, then each block, with every jump to a block's name made an offset (BPF jumps forward only)."""
    program = list(first)
    starts = {}
    for name, block in blocks.items():
        starts[name] = len(program)
        program += block
    return [(code, *(starts[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf)), k)
            for i, (code, jt, jf, k) in enumerate(program)]


def install() -> bool:
    """Install the filter on this thread (inherited by every later child); False where it is not possible."""
    instructions = program(platform.machine())
    if instructions is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    raw = b"".join(struct.pack("<HBBI", *i) for i in instructions)
    buffer = ctypes.create_string_buffer(raw, len(raw))
    fprog = struct.pack("<HxxxxxxQ", len(instructions), ctypes.addressof(buffer))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.c_char_p(fprog), 0, 0) == 0
