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

DENIED = ("socket", "socketpair", "ptrace", "mount", "umount2", "pivot_root", "chroot", "bpf", "keyctl", "add_key",
          "request_key", "unshare", "setns", "process_vm_readv", "process_vm_writev", "open_by_handle_at",
          "name_to_handle_at", "userfaultfd", "perf_event_open", "init_module", "finit_module", "delete_module",
          "kexec_load", "kexec_file_load", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree",
          "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "acct", "swapon", "swapoff",
          "reboot", "sethostname", "setdomainname", "quotactl", "syslog", "vhangup", "pidfd_getfd", "open_tree_attr",
          "memfd_create", "iopl", "ioperm")

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
        "clone": 56, "clone3": 435, "mmap": 9, "prlimit64": 302}),
    "aarch64": (0xC00000B7, {
        "socket": 198, "socketpair": 199, "ptrace": 117, "mount": 40, "umount2": 39, "pivot_root": 41,
        "chroot": 51, "bpf": 280, "keyctl": 219, "add_key": 217, "request_key": 218, "unshare": 97, "setns": 268,
        "process_vm_readv": 270, "process_vm_writev": 271, "open_by_handle_at": 265, "name_to_handle_at": 264,
        "userfaultfd": 282, "perf_event_open": 241, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "kexec_load": 104, "kexec_file_load": 294, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "acct": 89, "swapon": 224, "swapoff": 225,
        "reboot": 142, "sethostname": 161, "setdomainname": 162, "quotactl": 60, "syslog": 116, "vhangup": 58,
        "pidfd_getfd": 438, "open_tree_attr": 467, "memfd_create": 279, "clone": 220, "clone3": 435,
        "mmap": 222, "prlimit64": 261}),
}


def program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The filter as (code, jump if true, jump if false, k) instructions; None for a machine without a table."""
    if machine not in TABLES:
        return None
    arch, numbers = TABLES[machine]
    deny = RET_ERRNO | errno.EPERM
    head = [(LD_ABS_W, 0, 0, 4), (JEQ, 1, 0, arch), (RET, 0, 0, RET_KILL_PROCESS), (LD_ABS_W, 0, 0, 0)]
    if machine == "x86_64":
        head.append((JGE, 0, 1, X32_BIT))  # an x32 syscall: kill (next instruction), else skip it
        head.append((RET, 0, 0, RET_KILL_PROCESS))
    checks = [numbers[name] for name in DENIED if name in numbers]  # arm64 has no iopl or ioperm
    # after the checks: clone3 -> ENOSYS; clone -> its flags; mmap -> its flags; prlimit64 -> its pid; else ALLOW;
    # then DENY
    body = []
    n = len(checks)
    tail_len = 16  # the instructions from the first of the tail to the DENY that ends it
    for i, nr in enumerate(checks):
        to_deny = (n - i - 1) + tail_len
        body.append((JEQ, to_deny, 0, nr))
    body += [
        (JEQ, 14, 0, numbers["clone3"]),         # -> ret ENOSYS
        (JEQ, 3, 0, numbers["clone"]),           # -> load clone flags
        (JEQ, 5, 0, numbers["mmap"]),            # -> load mmap flags
        (JEQ, 8, 0, numbers["prlimit64"]),       # -> load its pid
        (RET, 0, 0, RET_ALLOW),
        (LD_ABS_W, 0, 0, 16),                    # args[0], low 32 bits: the clone flags
        (JSET, 9, 0, CLONE_NEW_ANY),             # -> ret deny
        (RET, 0, 0, RET_ALLOW),
        (LD_ABS_W, 0, 0, 40),                    # args[3], low 32 bits: the mmap flags
        (AND, 0, 0, SHARED_ANONYMOUS),
        (JEQ, 5, 0, SHARED_ANONYMOUS),           # -> ret deny
        (RET, 0, 0, RET_ALLOW),
        (LD_ABS_W, 0, 0, 16),                    # args[0]: prlimit64's pid (a pid_t), 0 for this process
        (JEQ, 0, 2, 0),                          # -> allow, else deny
        (RET, 0, 0, RET_ALLOW),
        (RET, 0, 0, RET_ERRNO | errno.ENOSYS),
        (RET, 0, 0, deny),
    ]
    assert len(body) == n + tail_len + 1
    return head + body


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
