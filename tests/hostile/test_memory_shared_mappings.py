"""Sandbox v5, red team: other ways to memory that no process's resident size shows, and syscalls of other ABIs.

seccomp refuses `mmap` with MAP_SHARED | MAP_ANONYMOUS (their pages outlive every process that shows them) and
the private root has no /dev/zero. Tried here: MAP_SHARED_VALIDATE, more flags beside them (MAP_NORESERVE,
MAP_HUGETLB), a shared mapping of the devices that are there, and the i386 (int 0x80, where mmap2 lives) and x32
entry points, which must kill.
"""
import signal
import sys

import pytest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
x86_64_only = pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="x86-64's other ABIs")

PROBES = r'''
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
FAILED = 2**64 - 1


def mapped(flags, path=None):
    """'mapped', or why a 1 MiB read-write mapping with `flags` (of `path`, else anonymous) was refused."""
    try:
        fd = os.open(path, os.O_RDWR) if path else -1
    except OSError as error:
        return error.strerror
    address = libc.mmap(None, 2**20, 3, flags, fd, 0)
    return "mapped" if address not in (None, FAILED) else os.strerror(ctypes.get_errno())


def shared_ways():
    found = {"validate": mapped(0x03 | 0x20), "high_bits": mapped(0x01 | 0x20 | 0x4000 | 0x40000),
             "private": mapped(0x02 | 0x20)}
    for device in ("/dev/zero", "/dev/full", "/dev/urandom", "/dev/null"):
        found[device] = mapped(0x01, device)
    return found


def run_machine_code(code):
    """Run `code` (ending in ret) in a fork: the signal that ended it, 0 when it returned."""
    pid = os.fork()
    if pid == 0:
        page = libc.mmap(None, 4096, 7, 0x02 | 0x20, -1, 0)
        ctypes.memmove(page, code, len(code))
        ctypes.CFUNCTYPE(ctypes.c_long)(page)()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
'''

I386_GETPID = bytes.fromhex("b814000000" "cd80" "c3")          # mov eax, 20; int 0x80; ret
X32_GETPID = bytes.fromhex("b827000040" "0f05" "c3")          # mov eax, 0x40000027; syscall; ret


@linux_only
def test_no_shared_anonymous_memory_by_other_flags_or_devices(sandboxed):
    sub = sandboxed(PROBES)
    found = sub.shared_ways()
    if not sub.isolation.get("seccomp"):
        pytest.skip("no seccomp filter here")
    assert found["private"] == "mapped"                             # ordinary memory still works
    assert found["validate"] != "mapped" and found["high_bits"] == "Operation not permitted", found
    assert "mapped" not in [found[d] for d in ("/dev/zero", "/dev/full", "/dev/urandom", "/dev/null")], found
    sub.close()


@linux_only
@x86_64_only
@pytest.mark.parametrize("code", [I386_GETPID, X32_GETPID], ids=["i386_int80", "x32"])
def test_a_syscall_of_another_abi_kills_the_process(sandboxed, code):
    sub = sandboxed(PROBES)
    killed_by = sub.run_machine_code(code)
    if not sub.isolation.get("seccomp"):
        pytest.skip("no seccomp filter here")
    assert killed_by == signal.SIGSYS, f"the syscall of another ABI returned (signal {killed_by})"
    assert sub.run_machine_code(b"\xc3") == 0                       # the same way to run code, minus the syscall
    sub.close()
