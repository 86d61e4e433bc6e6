"""Per-process limits of the child (address space, file size, core dumps) and reading sizes from /proc."""
from __future__ import annotations

import os
import resource

OPEN_FILES = 256
PROCESSES = 256
GRADER_DATA_BYTES = 6 * 2**30  # the grader's own heap: about 0.3 GiB used; decoding caps keep replies far below


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
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    limits["open_files"] = OPEN_FILES
    if os.getuid() != 0:  # counted per user (and user namespace); root is not bound by it
        resource.setrlimit(resource.RLIMIT_NPROC, (PROCESSES, PROCESSES))
        limits["processes"] = PROCESSES
    limits["output_bytes"] = output_bytes
    return limits


def cap_grader_memory() -> None:
    """Cap the grader's own data (heap and private mappings): a reply or a check gone wrong ends in a MemoryError,
    reported as a grader error in the results, never in the host running out of memory."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = GRADER_DATA_BYTES if hard == resource.RLIM_INFINITY else min(GRADER_DATA_BYTES, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
